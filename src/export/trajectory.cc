#include "export/trajectory.h"

#include <fmt/format.h>

#include <filesystem>
#include <utility>

#include "core/file.h"
#include "core/sha256.h"
#include "run/run_problem.h"

namespace ks {
namespace {

namespace fs = std::filesystem;

bool Matches(const fs::path& path, const std::string& sha256) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  Result<std::string> text = ReadFile(path.string());
  return text.ok() && (sha256.empty() || Sha256Hex(*text) == sha256);
}

}  // namespace

std::optional<double> TrajectoryStep::speedup() const {
  if (!correct() || !result->speedup) return std::nullopt;
  return result->speedup;
}

std::optional<double> Trajectory::ReferenceUs() const {
  for (const TrajectoryStep& s : steps) {
    if (s.result && s.result->ref_us && *s.result->ref_us > 0) return s.result->ref_us;
  }
  return std::nullopt;
}

std::string FindProblemFile(const std::string& problem_path, const std::string& sha256,
                            const std::string& run_dir) {
  if (problem_path.empty()) return "";
  fs::path stored(problem_path);
  if (Matches(stored, sha256)) return stored.string();
  if (stored.is_absolute()) return "";
  std::error_code ec;
  fs::path dir = fs::absolute(run_dir, ec);
  if (ec) return "";
  for (int depth = 0; depth < 8 && !dir.empty(); ++depth) {
    fs::path candidate = dir / stored;
    if (Matches(candidate, sha256)) return candidate.lexically_normal().string();
    if (dir == dir.parent_path()) break;
    dir = dir.parent_path();
  }
  return "";
}

Result<Trajectory> LoadTrajectory(Store& store, const RunRecord& run, const std::string& run_dir) {
  Trajectory t;
  t.run_dir = run_dir;
  t.run = run;
  Result<std::vector<ProgramRecord>> programs = store.ProgramsOfRun(run.id);
  if (!programs.ok()) return programs.status();
  Result<std::vector<LlmCallRecord>> calls = store.LlmCallsOfRun(run.id);
  if (!calls.ok()) return calls.status();
  std::map<int64_t, size_t> call_index;
  for (size_t i = 0; i < calls->size(); ++i) call_index[(*calls)[i].id] = i;

  std::map<std::string, int> index;
  for (ProgramRecord& p : *programs) {
    TrajectoryStep step;
    Result<EvaluationRecord> eval = store.GetEvaluation(p.id);
    if (eval.ok()) {
      step.result = std::move(eval->result);
    } else if (eval.status().code() != Status::Code::kNotFound) {
      return eval.status();
    }
    if (p.llm_call_id) {
      auto it = call_index.find(*p.llm_call_id);
      if (it != call_index.end()) step.call = (*calls)[it->second];
    }
    if (!p.parent_id.empty()) {
      auto it = index.find(p.parent_id);
      if (it != index.end()) step.parent = it->second;
    }
    index[p.id] = static_cast<int>(t.steps.size());
    step.program = std::move(p);
    t.steps.push_back(std::move(step));
  }

  if (!run.problem_source.empty()) {
    Result<RunProblem> stored = ProblemOfRun(run);
    if (!stored.ok()) return stored.status();
    t.reference_code = stored->problem.source;
    t.reference_path = "run.db";
    t.warning = stored->warning;
  } else {
    t.reference_path = FindProblemFile(run.problem_path, run.problem_sha256, run_dir);
    if (!t.reference_path.empty()) {
      Result<std::string> text = ReadFile(t.reference_path);
      if (text.ok()) t.reference_code = std::move(*text);
    }
  }
  // The level shows in the problem path or, for a bench, in the run directory's layout
  // (problems/levelN/<stem>).
  t.difficulty = ClassifyDifficulty(run.problem_path, t.reference_code);
  if (t.difficulty.source != "path" && LevelFromPath(run_dir) > 0) {
    t.difficulty = ClassifyDifficulty(run_dir + "/", "");
  }
  std::string stem = fs::path(run.problem_path).stem().string();
  t.problem_id =
      t.difficulty.source == "path" ? fmt::format("level{}/{}", t.difficulty.level, stem) : stem;
  return t;
}

}  // namespace ks
