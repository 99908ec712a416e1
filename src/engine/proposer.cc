#include "engine/proposer.h"

#include "archive/sampling.h"
#include "propose/tuner.h"

namespace ks {
namespace {

constexpr const char* kWaitingPrefix = "waiting for an answer: ";
constexpr const char* kStopRunPrefix = "the run cannot go on: ";

uint64_t StreamOf(const ProposalContext& context) {
  return (static_cast<uint64_t>(context.round) << 32) ^
         (static_cast<uint64_t>(context.island) << 16) ^
         (static_cast<uint64_t>(context.slot) << 8) ^ static_cast<uint64_t>(context.attempt);
}

double Uniform(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) / static_cast<double>(1ULL << 53);
}

class MixedProposer : public Proposer {
 public:
  MixedProposer(std::unique_ptr<Proposer> main, std::unique_ptr<Proposer> tuner, double ratio,
                uint64_t seed)
      : main_(std::move(main)), tuner_(std::move(tuner)), ratio_(ratio), seed_(seed) {}

  Result<Proposal> Propose(const ProposalContext& context) override {
    std::mt19937_64 rng(ForkSeed(seed_ ^ 0x7475'6e65'72ULL, StreamOf(context)));
    if (context.parent && Uniform(rng) < ratio_) {
      Result<std::vector<TunableParam>> tunables = ScanTunables(context.parent->code);
      if (tunables.ok() && !tunables->empty()) {
        Result<Proposal> proposal = tuner_->Propose(context);
        if (proposal.ok()) {
          proposal->proposer = tuner_->kind();
          return proposal;
        }
      }
    }
    return main_->Propose(context);
  }
  ProposerKind kind() const override { return main_->kind(); }
  bool can_translate() const override { return main_->can_translate(); }

 private:
  const std::unique_ptr<Proposer> main_;
  const std::unique_ptr<Proposer> tuner_;
  const double ratio_;
  const uint64_t seed_;
};

}  // namespace

Status WaitingStatus(std::string message) {
  return Status::NotFound(kWaitingPrefix + std::move(message));
}

Status StopRunStatus(std::string message) {
  return Status::IOError(kStopRunPrefix + std::move(message));
}

bool IsStopRun(const Status& status) {
  return status.code() == Status::Code::kIOError && status.message().rfind(kStopRunPrefix, 0) == 0;
}

bool IsWaiting(const Status& status) {
  return status.code() == Status::Code::kNotFound && status.message().rfind(kWaitingPrefix, 0) == 0;
}

std::unique_ptr<Proposer> MakeMixedProposer(std::unique_ptr<Proposer> main,
                                            std::unique_ptr<Proposer> tuner, double tuner_ratio,
                                            uint64_t seed) {
  return std::make_unique<MixedProposer>(std::move(main), std::move(tuner), tuner_ratio, seed);
}

Result<Proposal> TunerProposer::Propose(const ProposalContext& context) {
  if (!context.parent) {
    return Status::InvalidArgument(
        "the tuner cannot translate a PyTorch reference; give a seed kernel with "
        "--seed-kernel (with `# ks:tune NAME=[...]` comments), or use an LLM proposer");
  }
  std::mt19937_64 rng(ForkSeed(seed_, StreamOf(context)));
  Proposal proposal;
  const std::string& code = context.parent->code;
  if (Uniform(rng) < crossover_ratio_) {
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
