#include "export/rl.h"

#include <set>

#include "export/example.h"

namespace ks {
namespace {

nlohmann::json OptionalNumber(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// The parent a new completion for `step` is measured against: the parent program, or the
// reference itself for a translation (speedup 1, the reference's time).
struct ParentInfo {
  std::string id;    // "" for the reference
  std::string code;  // "" for the reference
  double speedup = 1.0;
  std::optional<double> runtime_us;
};

std::optional<ParentInfo> ParentOf(const Trajectory& t, const TrajectoryStep& step) {
  ParentInfo p;
  if (step.program.kind == ProgramKind::kTranslation) {
    p.runtime_us = t.ReferenceUs();
    return p;
  }
  if (step.parent < 0) return std::nullopt;
  const TrajectoryStep& parent = t.steps[step.parent];
  if (!parent.speedup() || !(*parent.speedup() > 0)) return std::nullopt;
  p.id = parent.program.id;
  p.code = parent.program.code;
  p.speedup = *parent.speedup();
  p.runtime_us = parent.result->cand_us;
  return p;
}

bool IsInitial(const Trajectory& t, const TrajectoryStep& step) {
  if (step.program.kind == ProgramKind::kTranslation) return true;
  return step.parent >= 0 && t.steps[step.parent].program.kind == ProgramKind::kSeed;
}

// Which steps of `t` made a new best: correct and faster than every correct program before.
std::vector<bool> NewBestSteps(const Trajectory& t) {
  std::vector<bool> out(t.steps.size(), false);
  std::optional<double> best;
  for (size_t i = 0; i < t.steps.size(); ++i) {
    std::optional<double> s = t.steps[i].speedup();
    if (!s) continue;
    if (!best || *s > *best) {
      out[i] = true;
      best = s;
    }
  }
  return out;
}

}  // namespace

const char* RlSelectionName(RlSelection s) {
  switch (s) {
    case RlSelection::kBest:
      return "best";
    case RlSelection::kAll:
      return "all";
    case RlSelection::kInitial:
      return "initial";
  }
  return "best";
}

Result<RlSelection> ParseRlSelection(const std::string& name) {
  for (RlSelection s : {RlSelection::kBest, RlSelection::kAll, RlSelection::kInitial}) {
    if (name == RlSelectionName(s)) return s;
  }
  return Status::InvalidArgument("unknown --selection '" + name +
                                 "': expected best, all or initial");
}

ExportRows BuildRlRows(const std::vector<Trajectory>& trajectories, const RlOptions& o) {
  ExportRows out;
  ExportSummary& s = out.summary;
  s.format = "rl";
  s.options = {{"selection", RlSelectionName(o.selection)}, {"data_source", o.data_source}};
  std::set<std::string> seen_prompts;
  for (const Trajectory& t : trajectories) {
    ++s.runs;
    std::vector<bool> new_best = NewBestSteps(t);
    for (size_t i = 0; i < t.steps.size(); ++i) {
      const TrajectoryStep& step = t.steps[i];
      ++s.steps_seen;
      ++s.categories[t.difficulty.category].seen;
      if (step.program.kind == ProgramKind::kSeed) {
        s.Drop("seed");
        continue;
      }
      if (!step.call) {
        s.Drop("no_llm_call");
        continue;
      }
      // best steps are revisions: a translation starts from the PyTorch reference, the
      // initial-step distribution (--selection initial or all keep it)
      if (o.selection == RlSelection::kBest && step.program.kind == ProgramKind::kTranslation) {
        s.Drop("translation");
        continue;
      }
      if (o.selection == RlSelection::kBest && !new_best[i]) {
        s.Drop("not_new_best");
        continue;
      }
      if (o.selection == RlSelection::kInitial && !IsInitial(t, step)) {
        s.Drop("not_initial");
        continue;
      }
      std::optional<ParentInfo> parent = ParentOf(t, step);
      if (!parent) {
        s.Drop("parent_not_correct");
        continue;
      }
      if (t.reference_code.empty()) {
        s.Drop("reference_missing");
        continue;
      }
      Result<nlohmann::json> prompt = PromptMessages(*step.call);
      if (!prompt.ok()) {
        s.Drop("bad_request");
        continue;
      }
      if (!seen_prompts.insert(ExampleHash(*prompt, "")).second) {
        s.Drop("duplicate");
        continue;
      }
      nlohmann::json truth = {{"format", kGroundTruthFormat},
                              {"problem_id", t.problem_id},
                              {"problem_path", t.run.problem_path},
                              {"backend", t.run.backend},
                              {"reference_code", t.reference_code},
                              {"parent_id", parent->id},
                              {"parent_code", parent->code},
                              {"parent_runtime_us", OptionalNumber(parent->runtime_us)},
                              {"parent_speedup", parent->speedup},
                              {"reference_runtime_us", OptionalNumber(t.ReferenceUs())},
                              {"step_kind", ProgramKindName(step.program.kind)},
                              {"run_id", t.run.id}};
      std::string truth_text = truth.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      int64_t tokens = step.call->prompt_tokens && *step.call->prompt_tokens > 0
                           ? *step.call->prompt_tokens
                           : EstimateMessageTokens(*prompt);
      bool estimated = !(step.call->prompt_tokens && *step.call->prompt_tokens > 0);
      nlohmann::json row = {
          {"data_source", o.data_source},
          {"prompt", std::move(*prompt)},
          {"ability", "kernel_optimization"},
          {"reward_model", {{"style", "rule"}, {"ground_truth", truth_text}}},
          {"extra_info",
           {{"index", static_cast<int64_t>(out.rows.size())},
            {"task_id", t.problem_id},
            {"parent_id", parent->id},
            {"parent_speedup", parent->speedup},
            {"run_id", t.run.id},
            {"program_id", step.program.id},
            {"step_kind", ProgramKindName(step.program.kind)},
            {"level", t.difficulty.level},
            {"category", t.difficulty.category},
            {"observed_speedup", OptionalNumber(step.speedup())},
            {"prompt_tokens", tokens}}},
          {"label", truth_text}};
      ++s.kept[ProgramKindName(step.program.kind)];
      ++s.categories[t.difficulty.category].kept;
      s.kept_tokens.push_back(tokens);
      if (estimated) ++s.tokens_estimated;
      out.rows.push_back(std::move(row));
    }
  }
  return out;
}

}  // namespace ks
