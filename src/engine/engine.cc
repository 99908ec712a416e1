#include "engine/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "archive/features.h"
#include "core/file.h"
#include "engine/engine_impl.h"
#include "eval/feedback.h"
#include "propose/normalize.h"

namespace ks {

double Fitness(const EvalResult& result, double compiled_fitness) {
  switch (result.status) {
    case EvalStatus::kOk:
      return result.speedup ? std::max(*result.speedup, 0.0) : 1.0;
    case EvalStatus::kIncorrect:
    case EvalStatus::kHacked:
    case EvalStatus::kRuntimeError:
      return compiled_fitness;
    default:
      return 0;
  }
}

std::string StoreIdOf(const std::string& archive_id) {
  return archive_id.substr(0, archive_id.find('@'));
}

Engine::Engine(EngineOptions options, Store* store, Runner* runner, Proposer* proposer,
               Progress* progress)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->store = store;
  impl_->runner = runner;
  impl_->proposer = proposer;
  impl_->progress = progress;
}

Engine::~Engine() = default;

Result<nlohmann::json> Engine::Run() {
  Impl& m = *impl_;
  if (m.options.parallel_proposals < 1) {
    return Status::InvalidArgument("parallel_proposals must be >= 1");
  }
  if (m.options.seed_source.empty() && !m.proposer->can_translate()) {
    return Status::InvalidArgument(
        "no seed kernel and the proposer cannot translate the reference: give --seed-kernel "
        "SEED.py, or use an LLM proposer (--llm-url URL --model NAME)");
  }
  Status s = m.Recover();
  if (!s.ok()) return s;
  // A problem that cannot be loaded or run (the worker's message starts with "problem PATH")
  // fails every candidate alike: stop after the seed with that message.
  if (Result<std::vector<ProgramRecord>> programs = m.store->ProgramsOfRun(m.options.run_id);
      programs.ok()) {
    for (const ProgramRecord& p : *programs) {
      if (p.kind != ProgramKind::kSeed) continue;
      Result<EvaluationRecord> e = m.store->GetEvaluation(p.id);
      if (e.ok() && e->result.status == EvalStatus::kInfraError &&
          e->result.message.rfind("problem ", 0) == 0) {
        return Status::InvalidArgument(e->result.message);
      }
    }
  }
  for (int round = m.round_done + 1; round <= m.options.rounds; ++round) {
    s = m.RunRound(round);
    if (!s.ok()) return s;
    if (m.waiting > 0) break;  // the round is redone by a resumed run
    m.round_done = round;
    s = m.SaveState();
    if (!s.ok()) return s;
  }
  if (m.waiting == 0 && !m.outcomes.empty()) {  // taken up by Recover, no round left to run
    std::vector<EngineOutcome> done;
    done.swap(m.outcomes);
    for (const EngineOutcome& outcome : done) {
      s = m.Integrate(outcome);
      if (!s.ok()) return s;
    }
  }
  nlohmann::json summary = m.Summary();
  summary["waiting_answers"] = m.waiting;
  s = m.WriteSummary(summary);
  if (!s.ok()) return s;
  if (m.progress != nullptr) m.progress->Finish();
  return summary;
}

void Engine::Impl::Log(const std::string& line) {
  if (progress != nullptr) progress->Log(line);
}

void Engine::Impl::UpdateProgress(int round) {
  if (progress == nullptr) return;
  ProgressState state;
  state.round = round;
  state.rounds = options.rounds;
  state.best_speedup = best_speedup;
  {
    std::lock_guard<std::mutex> lock(mu);
    state.evaluations_done = evals_done;
    state.evaluations_in_flight = evals_pending;
    state.proposals_in_flight = proposals_in_flight;
    state.failures = eval_failures;
    for (const auto& [kind, n] : proposal_failures) state.failures[kind] += n;
  }
  progress->Update(state);
}

std::string Engine::Impl::NextId() {
  std::lock_guard<std::mutex> lock(mu);
  return fmt::format("p{:05d}", next_id++);
}

EvalRequest Engine::Impl::RequestFor(const ProgramRecord& program) const {
  EvalRequest request;
  request.problem_path = options.problem_path;
  request.problem_source = options.problem_source;
  request.candidate_path = program.id + ".py";
  request.candidate_source = program.code;
  request.backend = options.backend;
  request.trials = options.trials;
  request.seed = options.seed;
  return request;
}

Status Engine::Impl::RunRound(int round) {
  // Contexts: children spread round-robin over the islands.
  int islands = archive->num_islands();
  int children = options.proposals_per_round > 0 ? options.proposals_per_round
                                                 : std::max(islands, options.parallel_proposals);
  std::vector<ProposalContext> contexts;
  Result<std::vector<ProgramRecord>> stored = store->ProgramsOfRun(options.run_id);
  if (!stored.ok()) return stored.status();
  for (int j = 0; j < children; ++j) {
    int island = j % islands;
    ProposalContext context;
    context.reference_source = options.problem_source;
    context.backend = options.backend;
    context.hardware = options.hardware;
    context.run_id = options.run_id;
    context.round = round;
    context.island = island;
    context.slot = j;
    ParentChoice choice = archive->SampleParent(island);
    if (choice.program == nullptr) {
      if (!proposer->can_translate()) continue;  // nothing to mutate on this island yet
    } else {
      context.parent = *choice.program;
      context.history = HistoryOf(StoreIdOf(choice.program->id), *stored);
      Result<EvaluationRecord> eval = store->GetEvaluation(StoreIdOf(choice.program->id));
      if (eval.ok()) {
        context.parent_status = EvalStatusName(eval->result.status);
        context.parent_feedback =
            eval->result.feedback.empty() ? BuildFeedback(eval->result) : eval->result.feedback;
      }
      for (const Program* p : archive->SampleInspirations(
               island, choice.program, static_cast<size_t>(options.inspirations))) {
        context.inspirations.push_back(*p);
      }
    }
    contexts.push_back(std::move(context));
  }

  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  size_t workers = std::min(contexts.size(), static_cast<size_t>(options.parallel_proposals));
  {
    std::lock_guard<std::mutex> lock(mu);
    waiting = 0;
  }
  for (size_t t = 0; t < workers; ++t) {
    threads.emplace_back([&] {
      for (size_t i = next++; i < contexts.size(); i = next++) ProposeAndSubmit(contexts[i], round);
    });
  }
  for (std::thread& t : threads) t.join();
  WaitForEvaluations();
  if (!stop.ok()) {
    // What was evaluated is stored; a resumed run takes it up with the redone round.
    Log(fmt::format("round {}: stopping: {}", round, stop.message()));
    return stop;
  }
  if (waiting > 0) {
    // Stop before the archive changes: the resumed run samples the same parents and slots,
    // finds the answers given since, and takes up what was evaluated here.
    Log(fmt::format("round {}: waiting for {} answer(s); stopping", round, waiting));
    return Status::Ok();
  }

  std::vector<EngineOutcome> done;
  {
    std::lock_guard<std::mutex> lock(mu);
    done.swap(outcomes);
  }
  std::sort(done.begin(), done.end(), [](const EngineOutcome& a, const EngineOutcome& b) {
    return a.program.id < b.program.id;
  });
  for (const EngineOutcome& outcome : done) {
    Status s = Integrate(outcome);
    if (!s.ok()) return s;
  }
  for (int i = 0; i < islands; ++i) {
    std::vector<std::string> migrants = archive->EndGeneration(i);
    if (!migrants.empty()) {
      Log(fmt::format("island {} sent {} migrant(s) to island {}", i, migrants.size(),
                      (i + 1) % islands));
    }
  }
  UpdateProgress(round);
  return Status::Ok();
}

void Engine::Impl::ProposeAndSubmit(ProposalContext context, int round) {
  int tries = proposer->cheap() ? options.duplicate_retries + 1 : 1;
  for (int attempt = 0; attempt < tries; ++attempt) {
    context.attempt = attempt;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!stop.ok()) return;
      ++proposals_in_flight;
    }
    UpdateProgress(round);
    Result<Proposal> proposal = proposer->Propose(context);
    if (!proposal.ok() && IsStopRun(proposal.status())) {
      std::lock_guard<std::mutex> lock(mu);
      --proposals_in_flight;
      ++proposal_failures["proposer_error"];
      if (stop.ok()) stop = proposal.status();
      return;
    }
    if (!proposal.ok() && IsWaiting(proposal.status())) {
      {
        std::lock_guard<std::mutex> lock(mu);
        --proposals_in_flight;
        ++waiting;
      }
      Log(fmt::format("round {} slot {}: {}", round, context.slot, proposal.status().message()));
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      --proposals_in_flight;
      if (!proposal.ok()) {
        ++proposal_failures[proposal.status().code() == Status::Code::kInvalidArgument
                                ? "unusable_reply"
                                : "proposer_error"];
      }
    }
    std::string parent_id = context.parent ? StoreIdOf(context.parent->id) : "";
    if (!proposal.ok()) {
      Log(fmt::format("round {} island {}: no candidate from parent {}: {}", round, context.island,
                      parent_id.empty() ? "(translation)" : parent_id,
                      proposal.status().message()));
      UpdateProgress(round);
      return;
    }
    std::string hash = CodeHash(proposal->code);
    Result<std::optional<EvaluatedProgram>> seen =
        store->FindEvaluatedByCodeHash(options.run_id, hash);
    bool duplicate;
    {
      std::lock_guard<std::mutex> lock(mu);
      duplicate = (seen.ok() && seen->has_value()) || submitted_hashes.count(hash) > 0;
      if (duplicate) {
        ++duplicates;
      } else {
        submitted_hashes.insert(hash);
      }
    }
    if (duplicate) {  // the stored result stands; ask again when that is cheap
      Log(fmt::format("round {} island {}: the proposal from parent {} repeats a program already "
                      "evaluated (code {}); its result stands",
                      round, context.island, parent_id.empty() ? "(translation)" : parent_id,
                      hash.substr(0, 12)));
      continue;
    }

    ProgramRecord program;
    program.id = NextId();
    program.run_id = options.run_id;
    program.parent_id = parent_id;
    program.code = std::move(proposal->code);
    program.code_hash = hash;
    program.island = context.island;
    program.generation = context.parent ? context.parent->generation + 1 : 0;
    program.proposer = proposal->proposer.value_or(proposer->kind());
    program.kind = context.parent ? proposal->kind : ProgramKind::kTranslation;
    program.llm_call_id = proposal->llm_call_id;
    program.metrics = {{"description", proposal->description}, {"round", round}};
    Status s = store->AddProgram(program);
    if (!s.ok()) {
      {
        std::lock_guard<std::mutex> lock(mu);
        ++proposal_failures["store_error"];
      }
      Log("could not store a candidate: " + s.message());
      return;
    }
    Submit(program);
    return;
  }
}

void Engine::Impl::Submit(const ProgramRecord& program) {
  {
    std::lock_guard<std::mutex> lock(mu);
    ++evals_pending;
  }
  runner->Submit(RequestFor(program), [this, program](EvalResult result) {
    if (result.feedback.empty()) result.feedback = BuildFeedback(result);
    Status s = store->RecordEvaluation(program.id, result);
    if (!s.ok()) Log("could not store the evaluation of " + program.id + ": " + s.message());
    {
      std::lock_guard<std::mutex> lock(mu);
      outcomes.push_back({program, result});
      --evals_pending;
      ++evals_done;
      if (result.status != EvalStatus::kOk) ++eval_failures[EvalStatusName(result.status)];
    }
    cv.notify_all();
  });
}

void Engine::Impl::WaitForEvaluations() {
  std::unique_lock<std::mutex> lock(mu);
  while (evals_pending > 0) {
    cv.wait_for(lock, std::chrono::milliseconds(500));
    lock.unlock();
    UpdateProgress(round_done + 1);
    lock.lock();
  }
}

Status Engine::Impl::Integrate(const EngineOutcome& outcome) {
  const ProgramRecord& record = outcome.program;
  const EvalResult& result = outcome.result;
  Program program;
  program.id = record.id;
  program.parent_id = record.parent_id;
  program.code = record.code;
  program.generation = record.generation;
  program.fitness = Fitness(result, options.compiled_fitness);
  program.correct = result.status == EvalStatus::kOk;
  program.speedup = result.speedup;
  program.proposer = ProposerKindName(record.proposer);
  int islands = archive->num_islands();
  std::vector<int> targets;
  if (record.kind == ProgramKind::kSeed) {
    for (int i = 0; i < islands; ++i) targets.push_back(i);
    seed_speedup = result.status == EvalStatus::kOk ? result.speedup : std::nullopt;
  } else {
    targets.push_back(((record.island % islands) + islands) % islands);
  }
  for (int island : targets) {
    Program copy = program;
    copy.island = island;
    if (island != targets.front()) copy.id = fmt::format("{}@i{}", record.id, island);
    Result<AddOutcome> added = archive->Add(std::move(copy));
    if (!added.ok()) return added.status();
  }
  std::string what = result.status == EvalStatus::kOk && result.speedup
                         ? fmt::format("ok {:.3f}x", *result.speedup)
                         : std::string(EvalStatusName(result.status));
  std::string description;
  if (record.metrics.is_object() && record.metrics.contains("description") &&
      record.metrics["description"].is_string()) {
    description = record.metrics["description"].get<std::string>();
  }
  Log(fmt::format("{} ({}, island {}, parent {}): {}{}", record.id, ProgramKindName(record.kind),
                  record.island, record.parent_id.empty() ? "-" : record.parent_id, what,
                  description.empty() ? "" : "  [" + description + "]"));
  ConsiderBest(record, result);
  return Status::Ok();
}

void Engine::Impl::ConsiderBest(const ProgramRecord& program, const EvalResult& result) {
  if (result.status != EvalStatus::kOk) return;
  // Correct but not timed (a timing that gave no figure): kept as the best only while nothing
  // is, and never with a speedup it did not measure.
  if (!result.speedup && !best_id.empty()) return;
  if (result.speedup) {
    double speedup = *result.speedup;
    if (best_speedup && speedup <= *best_speedup) return;
    // Within the noise of the incumbent (the challenger's CI reaches the incumbent's): time
    // the challenger against the incumbent itself, interleaved in one worker. It becomes the
    // best only if it is faster there beyond the noise (the duel's CI above 1).
    if (best_speedup && result.speedup_ci_lo && *result.speedup_ci_lo <= best_ci_hi) {
      ++rechecks;
      std::string verdict = Duel(program);
      if (!verdict.empty()) {
        ++rechecks_rejected;
        Log(fmt::format("{}: {:.3f}x not declared best: {} (best {} at {:.3f}x)", program.id,
                        speedup, verdict, best_id, *best_speedup));
        return;
      }
    }
  }
  best_id = program.id;
  best_speedup = result.speedup;
  best_ci_hi = result.speedup ? result.speedup_ci_hi.value_or(*result.speedup) : 0;
  if (!options.run_dir.empty()) {
    Status s = WriteFileAtomic(options.run_dir + "/best.py", program.code);
    if (!s.ok()) Log("could not write best.py: " + s.message());
  }
  Log(result.speedup ? fmt::format("new best: {} at {:.3f}x", program.id, *result.speedup)
                     : fmt::format("new best: {} (correct, not timed)", program.id));
}

std::string Engine::Impl::Duel(const ProgramRecord& challenger) {
  Result<ProgramRecord> incumbent = store->GetProgram(best_id);
  if (!incumbent.ok()) {
    return "the incumbent's code could not be read to time against it: " +
           incumbent.status().message();
  }
  EvalRequest request = RequestFor(challenger);
  request.baseline_path = incumbent->id + ".py";
  request.baseline_source = incumbent->code;
  EvalResult duel = runner->Evaluate(request);
  if (duel.status != EvalStatus::kOk || !duel.vs_baseline) {
    return fmt::format("timing it against the incumbent failed ({}{})",
                       EvalStatusName(duel.status),
                       duel.message.empty() ? "" : ": " + duel.message);
  }
  const BaselineComparison& b = *duel.vs_baseline;
  double lo = b.speedup_ci_lo.value_or(b.speedup);
  std::string figure =
      b.speedup_ci_lo && b.speedup_ci_hi
          ? fmt::format("{:.4f}x (95% CI {:.4f}-{:.4f})", b.speedup, *b.speedup_ci_lo,
                        *b.speedup_ci_hi)
          : fmt::format("{:.4f}x", b.speedup);
  if (b.speedup > 1.0 && lo > 1.0) {
    Log(fmt::format("{}: timed against the incumbent {} interleaved: {}", challenger.id,
                    incumbent->id, figure));
    return "";
  }
  return fmt::format("timed against it interleaved in one worker, it is {} the incumbent's "
                     "speed, not faster beyond the noise",
                     figure);
}

}  // namespace ks
