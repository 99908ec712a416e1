// The engine's durable side: resuming from the store, the per-round state, the summary, and
// the history of earlier attempts read back for prompts.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "core/file.h"
#include "engine/engine_impl.h"
#include "propose/normalize.h"

namespace ks {
namespace {

constexpr const char* kStateKey = "engine";

}  // namespace

Status Engine::Impl::Recover() {
  Result<nlohmann::json> state = store->GetState(options.run_id, kStateKey);
  size_t programs_seen = 0;
  if (state.ok()) {
    const nlohmann::json& st = *state;
    Result<std::unique_ptr<Archive>> restored = Archive::Restore(st.at("archive"));
    if (!restored.ok()) return restored.status();
    archive = std::move(*restored);
    round_done = st.value("round_done", -1);
    programs_seen = st.value("programs_seen", size_t{0});
    wall_before_s = st.value("wall_s", 0.0);
    best_id = st.value("best_id", std::string());
    if (st.contains("best_speedup") && st["best_speedup"].is_number()) {
      best_speedup = st["best_speedup"].get<double>();
    }
    best_ci_hi = st.value("best_ci_hi", 0.0);
    // A session killed after writing a new best.py but before storing its state may leave a
    // best.py that this state does not declare: rewrite it from the stored best.
    if (!best_id.empty() && !options.run_dir.empty()) {
      Result<ProgramRecord> best = store->GetProgram(best_id);
      if (!best.ok()) return best.status();
      Status s = WriteFileAtomic(options.run_dir + "/best.py", best->code);
      if (!s.ok()) return s;
    }
    if (st.contains("seed_speedup") && st["seed_speedup"].is_number()) {
      seed_speedup = st["seed_speedup"].get<double>();
    }
    rechecks = st.value("rechecks", 0);
    rechecks_rejected = st.value("rechecks_rejected", 0);
    duplicates = st.value("duplicates", 0);
    if (st.contains("proposal_failures")) {
      proposal_failures = st["proposal_failures"].get<std::map<std::string, int>>();
    }
  } else if (state.status().code() == Status::Code::kNotFound) {
    Result<std::unique_ptr<Archive>> created = Archive::Create(options.archive);
    if (!created.ok()) return created.status();
    archive = std::move(*created);
  } else {
    return state.status();
  }

  Result<std::vector<ProgramRecord>> programs = store->ProgramsOfRun(options.run_id);
  if (!programs.ok()) return programs.status();
  bool have_seed = false;
  for (const ProgramRecord& p : *programs) {
    if (p.kind == ProgramKind::kSeed) have_seed = true;
    if (p.id.size() > 1 && p.id[0] == 'p') {
      next_id = std::max<int64_t>(next_id, std::strtoll(p.id.c_str() + 1, nullptr, 10) + 1);
    }
  }
  // Programs stored after the last saved state: evaluated ones enter the archive as they are,
  // pending ones are evaluated now (each exactly once).
  int recovered = 0;
  int pending = 0;
  for (size_t i = programs_seen; i < programs->size(); ++i) {
    const ProgramRecord& p = (*programs)[i];
    Result<EvaluationRecord> eval = store->GetEvaluation(p.id);
    if (eval.ok()) {
      std::lock_guard<std::mutex> lock(mu);
      outcomes.push_back({p, eval->result});
      ++recovered;
    } else {
      Submit(p);
      ++pending;
    }
  }
  if (recovered + pending > 0) {
    Log(
        fmt::format("resuming after round {}: {} stored result(s) taken up, {} pending "
                    "candidate(s) to evaluate",
                    round_done, recovered, pending));
  }
  if (!have_seed && !options.seed_source.empty()) {
    ProgramRecord seed;
    seed.id = NextId();
    seed.run_id = options.run_id;
    seed.code = options.seed_source;
    seed.code_hash = CodeHash(seed.code);
    seed.proposer = ProposerKind::kSeed;
    seed.kind = ProgramKind::kSeed;
    seed.metrics = {{"description", "seed " + options.seed_path}, {"round", 0}};
    Status s = store->AddProgram(seed);
    if (!s.ok()) return s;
    Submit(seed);
  }
  WaitForEvaluations();
  // Programs of an interrupted round enter the archive with that round's children, after its
  // parents are sampled from the archive as stored, so the redone round samples the same
  // parents and slots (a files proposer finds its answers under the same names).
  if (round_done >= 0) return Status::Ok();
  std::vector<EngineOutcome> done;
  {
    std::lock_guard<std::mutex> lock(mu);
    done.swap(outcomes);
  }
  for (const EngineOutcome& outcome : done) {
    Status s = Integrate(outcome);
    if (!s.ok()) return s;
  }
  round_done = 0;
  return SaveState();
}

Status Engine::Impl::SaveState() {
  Result<std::vector<ProgramRecord>> programs = store->ProgramsOfRun(options.run_id);
  if (!programs.ok()) return programs.status();
  nlohmann::json st;
  st["round_done"] = round_done;
  st["programs_seen"] = programs->size();
  st["archive"] = archive->Snapshot();
  st["wall_s"] = wall_before_s +
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  st["best_id"] = best_id;
  st["best_speedup"] = best_speedup ? nlohmann::json(*best_speedup) : nlohmann::json(nullptr);
  st["best_ci_hi"] = best_ci_hi;
  st["seed_speedup"] = seed_speedup ? nlohmann::json(*seed_speedup) : nlohmann::json(nullptr);
  st["rechecks"] = rechecks;
  st["rechecks_rejected"] = rechecks_rejected;
  {
    std::lock_guard<std::mutex> lock(mu);
    st["duplicates"] = duplicates;
    st["proposal_failures"] = proposal_failures;
  }
  Status s = store->PutState(options.run_id, kStateKey, st);
  if (!s.ok()) return s;
  return WriteSummary(Summary());
}

nlohmann::json Engine::Impl::Summary() {
  nlohmann::json s;
  s["run_id"] = options.run_id;
  s["problem"] = options.problem_path;
  s["backend"] = options.backend;
  s["rounds"] = options.rounds;
  s["rounds_done"] = std::max(round_done, 0);
  s["best_speedup"] = best_speedup ? nlohmann::json(*best_speedup) : nlohmann::json(nullptr);
  s["best_program_id"] = best_id;
  s["best_path"] = best_id.empty() || options.run_dir.empty()
                       ? nlohmann::json(nullptr)
                       : nlohmann::json(options.run_dir + "/best.py");
  s["seed_speedup"] = seed_speedup ? nlohmann::json(*seed_speedup) : nlohmann::json(nullptr);
  nlohmann::json by_status = nlohmann::json::object();
  int64_t total = 0;
  if (Result<std::map<EvalStatus, int64_t>> counts =
          store->CountEvaluationsByStatus(options.run_id);
      counts.ok()) {
    for (const auto& [status, n] : *counts) {
      by_status[EvalStatusName(status)] = n;
      total += n;
    }
  }
  s["candidates_by_status"] = by_status;
  s["evaluations"] = total;
  s["rechecks"] = rechecks;
  s["rechecks_rejected"] = rechecks_rejected;
  {
    std::lock_guard<std::mutex> lock(mu);
    s["duplicates"] = duplicates;
    s["proposal_failures"] = proposal_failures;
  }
  Result<LlmUsage> usage = UsageOfRun(store, options.run_id);
  s["llm"] = usage.ok() ? usage->ToJson(options.prices) : LlmUsage{}.ToJson(options.prices);
  s["wall_time_s"] =
      wall_before_s +
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return s;
}

Status Engine::Impl::WriteSummary(const nlohmann::json& summary) {
  Status s = store->UpdateRunSummary(options.run_id, summary);
  if (!s.ok()) return s;
  if (options.run_dir.empty()) return Status::Ok();
  return WriteFileAtomic(options.run_dir + "/summary.json", summary.dump(2) + "\n");
}

std::vector<AttemptSummary> Engine::Impl::HistoryOf(const std::string& parent_id,
                                                    const std::vector<ProgramRecord>& programs) {
  auto describe = [&](const ProgramRecord& p) {
    AttemptSummary a;
    a.summary = p.id;
    if (p.metrics.is_object() && p.metrics.contains("description") &&
        p.metrics["description"].is_string()) {
      a.summary += " (" + p.metrics["description"].get<std::string>() + ")";
    }
    Result<EvaluationRecord> eval = store->GetEvaluation(p.id);
    if (!eval.ok()) {
      a.metrics = "not evaluated";
    } else if (eval->result.status == EvalStatus::kOk && eval->result.speedup) {
      a.metrics = fmt::format("ok, speedup {:.3f}x", *eval->result.speedup);
    } else {
      a.metrics = EvalStatusName(eval->result.status);
      if (!eval->result.message.empty()) {
        a.metrics += ": " + eval->result.message.substr(0, 200);
      }
    }
    return a;
  };
  std::map<std::string, const ProgramRecord*> by_id;
  for (const ProgramRecord& p : programs) by_id[p.id] = &p;
  size_t half = static_cast<size_t>(std::max(options.history, 0)) / 2;
  std::vector<AttemptSummary> lineage;  // the parent's ancestors, newest first
  auto it = by_id.find(parent_id);
  for (std::string id = it == by_id.end() ? "" : it->second->parent_id;
       !id.empty() && lineage.size() < half;) {
    auto found = by_id.find(id);
    if (found == by_id.end()) break;
    lineage.push_back(describe(*found->second));
    id = found->second->parent_id;
  }
  std::vector<AttemptSummary> history(lineage.rbegin(), lineage.rend());
  std::vector<const ProgramRecord*> children;  // earlier attempts from the same parent
  for (const ProgramRecord& p : programs) {
    if (p.parent_id == parent_id) children.push_back(&p);
  }
  size_t room = static_cast<size_t>(std::max(options.history, 0)) - history.size();
  size_t first = children.size() > room ? children.size() - room : 0;
  for (size_t i = first; i < children.size(); ++i) history.push_back(describe(*children[i]));
  return history;
}

}  // namespace ks
