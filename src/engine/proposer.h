// Proposer: what the engine asks for a new candidate. Given a parent program with the feedback
// of its evaluation, inspirations, the reference module and the backend, a proposer returns the
// full source of a child candidate (or, with no parent, a translation of the reference).
//
// Failures are data: a proposer that cannot produce a usable child returns a Status whose
// message says why (InvalidArgument: the reply could not be used; other codes: the proposer
// itself failed), and the engine records it and moves on.
// Thread-safety: Propose may be called from several threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "archive/program.h"
#include "core/status.h"
#include "store/store.h"

namespace ks {

// One earlier attempt shown to the proposer: what it changed and how it did.
struct AttemptSummary {
  std::string summary;  // e.g. "tune BLOCK 1→64", "diff", "seed"
  std::string metrics;  // e.g. "ok, speedup 1.31x" or "compile_error"
};

struct ProposalContext {
  // The parent (a copy; the archive may change meanwhile). Unset: translate the reference.
  std::optional<Program> parent;
  std::string parent_status;            // EvalStatusName of the parent's evaluation
  std::string parent_feedback;          // BuildFeedback text of the parent's evaluation
  std::vector<AttemptSummary> history;  // the parent's lineage, oldest first, parent excluded
  std::vector<Program> inspirations;    // top and diverse programs of the island
  std::string reference_source;         // the problem file
  std::string backend;                  // "triton", "cuda" or "cpu"
  std::string hardware;                 // the evaluating device, e.g. "NVIDIA H100 (sm_90)"
  std::string run_id;                   // the run, for names of files the proposer writes
  int round = 0;
  int island = 0;
  int slot = 0;     // index of this proposal within its round
  int attempt = 0;  // > 0 when the engine asks again after a duplicate
};

struct Proposal {
  std::string code;  // the full candidate source
  std::string description;
  std::optional<int64_t> llm_call_id;  // the stored call whose completion produced the code
  ProgramKind kind = ProgramKind::kEvolution;
  std::optional<ProposerKind> proposer;  // who wrote it, when not the proposer's kind()
};

// The status a proposer returns when its answer is not there yet (a person or an outside
// agent has not written it): the engine evaluates what it has, stores its state and stops;
// a resumed run asks again. The message says what is awaited and where.
Status WaitingStatus(std::string message);
bool IsWaiting(const Status& status);

// The status a proposer returns when no later proposal can succeed either (its LLM endpoint
// is dead, see llm/ensemble.h): the engine lets the evaluations in flight finish and store,
// then stops the run with this message (a resumed run continues once the cause is fixed).
Status StopRunStatus(std::string message);
bool IsStopRun(const Status& status);

class Proposer {
 public:
  virtual ~Proposer() = default;
  virtual Result<Proposal> Propose(const ProposalContext& context) = 0;
  // Who writes the programs, for the store.
  virtual ProposerKind kind() const = 0;
  // True when proposals cost next to nothing, so the engine may ask again after a duplicate.
  virtual bool cheap() const { return false; }
  // True when the proposer can translate the reference (context.parent unset).
  virtual bool can_translate() const { return false; }
};

// The LLM-free proposer: mutates tunable constants of the parent's EVOLVE-BLOCK
// (propose/tuner.h), or crosses the parent with an inspiration (`crossover_ratio` of the
// proposals when an inspiration shares constants). Deterministic for a given seed, round,
// island and attempt, whatever the thread that runs it.
class TunerProposer : public Proposer {
 public:
  explicit TunerProposer(uint64_t seed, double crossover_ratio = 0.25)
      : seed_(seed), crossover_ratio_(crossover_ratio) {}
  Result<Proposal> Propose(const ProposalContext& context) override;
  ProposerKind kind() const override { return ProposerKind::kTuner; }
  bool cheap() const override { return true; }

 private:
  const uint64_t seed_;
  const double crossover_ratio_;
};

// Hands `tuner_ratio` of the proposals whose parent has tunable constants to `tuner` (a cheap
// local polish between calls of an expensive `main` proposer), the others to `main`.
// Deterministic for a given seed, round, island and slot.
std::unique_ptr<Proposer> MakeMixedProposer(std::unique_ptr<Proposer> main,
                                            std::unique_ptr<Proposer> tuner, double tuner_ratio,
                                            uint64_t seed);

}  // namespace ks
