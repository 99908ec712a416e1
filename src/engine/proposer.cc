#include "engine/proposer.h"

#include "archive/sampling.h"
#include "propose/tuner.h"

namespace ks {

Result<Proposal> TunerProposer::Propose(const ProposalContext& context) {
  if (!context.parent) {
    return Status::InvalidArgument(
        "the tuner cannot translate a PyTorch reference; give a seed kernel with "
        "--seed-kernel (with `# ks:tune NAME=[...]` comments), or use an LLM proposer");
  }
  uint64_t stream =
      (static_cast<uint64_t>(context.round) << 32) ^ (static_cast<uint64_t>(context.island) << 16) ^
      (static_cast<uint64_t>(context.slot) << 8) ^ static_cast<uint64_t>(context.attempt);
  std::mt19937_64 rng(ForkSeed(seed_, stream));
  Proposal proposal;
  const std::string& code = context.parent->code;
  double draw = static_cast<double>(rng() >> 11) / static_cast<double>(1ULL << 53);
  if (draw < crossover_ratio_) {
    for (const Program& other : context.inspirations) {
      std::string description;
      Result<std::string> child = Crossover(code, other.code, rng, &description);
      if (child.ok()) {
        proposal.code = std::move(*child);
        proposal.description = "crossover with " + other.id + ": " + description;
        return proposal;
      }
    }
  }
  std::string description;
  Result<std::string> child = Mutate(code, rng, 2, &description);
  if (!child.ok()) return child.status();
  proposal.code = std::move(*child);
  proposal.description = "tune " + description;
  return proposal;
}

}  // namespace ks
