#include "export/sft.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "export/example.h"

namespace ks {
namespace {

struct Kept {
  nlohmann::json row;
  std::string rule;  // "translation" or "evolution"
  std::string category;
  std::string problem;
  double value = 0;  // gain (evolution) or speedup (translation): larger is better
  TokenCount tokens;
};

// Why `step` is not an SFT example before de-duplication and the token cap; "" when it passes.
// Fills `gain` and `parent_speedup` for a passing evolution step.
std::string FilterStep(const Trajectory& t, const TrajectoryStep& step, const SftOptions& o,
                       std::optional<double>& gain, std::optional<double>& parent_speedup) {
  if (step.program.kind == ProgramKind::kSeed) return "seed";
  if (!step.call) return "no_llm_call";
  if (!step.result) return "not_evaluated";
  if (step.result->status != EvalStatus::kOk) return EvalStatusName(step.result->status);
  if (!step.result->speedup || !(*step.result->speedup > 0)) return "no_timing";
  if (step.program.kind == ProgramKind::kTranslation) return "";
  const TrajectoryStep* parent = step.parent >= 0 ? &t.steps[step.parent] : nullptr;
  if (parent == nullptr || !parent->speedup() || !(*parent->speedup() > 0)) {
    return "parent_not_correct";
  }
  parent_speedup = parent->speedup();
  gain = *step.result->speedup / *parent_speedup;
  if (!(*gain > o.min_gain)) return "below_min_gain";
  return "";
}

nlohmann::json OptionalNumber(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json Meta(const Trajectory& t, const TrajectoryStep& step,
                    const std::optional<double>& gain, const std::optional<double>& parent_speedup,
                    const TokenCount& tokens) {
  const ProgramRecord& p = step.program;
  return {{"run_id", t.run.id},
          {"run_dir", t.run_dir},
          {"program_id", p.id},
          {"parent_id", p.parent_id},
          {"llm_call_id", step.call->id},
          {"step_kind", ProgramKindName(p.kind)},
          {"proposer", ProposerKindName(p.proposer)},
          {"model", step.call->model},
          {"problem_id", t.problem_id},
          {"problem_path", t.run.problem_path},
          {"backend", t.run.backend},
          {"level", t.difficulty.level},
          {"category", t.difficulty.category},
          {"category_source", t.difficulty.source},
          {"speedup", OptionalNumber(step.result->speedup)},
          {"parent_speedup", OptionalNumber(parent_speedup)},
          {"gain", OptionalNumber(gain)},
          {"prompt_tokens", tokens.prompt},
          {"completion_tokens", tokens.completion},
          {"tokens_estimated", tokens.estimated}};
}

}  // namespace

std::vector<size_t> BalanceByCategory(const std::vector<BalanceItem>& items, double ratio) {
  std::vector<size_t> all(items.size());
  for (size_t i = 0; i < items.size(); ++i) all[i] = i;
  std::map<std::string, std::vector<size_t>> by_category;
  for (size_t i = 0; i < items.size(); ++i) by_category[items[i].category].push_back(i);
  if (ratio <= 0 || by_category.size() < 2) return all;
  size_t smallest = items.size();
  for (const auto& [name, idx] : by_category) smallest = std::min(smallest, idx.size());
  const size_t cap = static_cast<size_t>(std::ceil(ratio * static_cast<double>(smallest)));
  std::vector<size_t> keep;
  for (auto& [name, idx] : by_category) {
    if (idx.size() <= cap) {
      keep.insert(keep.end(), idx.begin(), idx.end());
      continue;
    }
    // Round-robin over the category's problems, each problem's rows best first, so that one
    // problem with many steps does not crowd out the others.
    std::map<std::string, std::vector<size_t>> by_problem;
    for (size_t i : idx) by_problem[items[i].problem].push_back(i);
    for (auto& [problem, rows] : by_problem) {
      std::stable_sort(rows.begin(), rows.end(),
                       [&](size_t a, size_t b) { return items[a].value > items[b].value; });
    }
    size_t taken = 0;
    for (size_t round = 0; taken < cap; ++round) {
      for (auto& [problem, rows] : by_problem) {
        if (round < rows.size() && taken < cap) {
          keep.push_back(rows[round]);
          ++taken;
        }
      }
    }
  }
  std::sort(keep.begin(), keep.end());
  return keep;
}

ExportRows BuildSftRows(const std::vector<Trajectory>& trajectories, const SftOptions& o) {
  ExportRows out;
  ExportSummary& s = out.summary;
  s.format = "sft";
  s.options = {{"min_gain", o.min_gain},
               {"max_tokens", o.max_tokens},
               {"balance_ratio", o.balance_ratio}};
  std::vector<Kept> kept;
  std::set<std::string> seen_hashes;
  for (const Trajectory& t : trajectories) {
    ++s.runs;
    for (const TrajectoryStep& step : t.steps) {
      ++s.steps_seen;
      ++s.categories[t.difficulty.category].seen;
      std::optional<double> gain, parent_speedup;
      std::string reason = FilterStep(t, step, o, gain, parent_speedup);
      if (!reason.empty()) {
        s.Drop(reason);
        continue;
      }
      Result<nlohmann::json> prompt = PromptMessages(*step.call);
      if (!prompt.ok()) {
        s.Drop("bad_request");
        continue;
      }
      if (!seen_hashes.insert(ExampleHash(*prompt, step.call->completion)).second) {
        s.Drop("duplicate");
        continue;
      }
      TokenCount tokens = CountTokens(*step.call, *prompt);
      if (o.max_tokens > 0 && tokens.total() > o.max_tokens) {
        s.Drop("over_token_cap");
        continue;
      }
      nlohmann::json completion =
          nlohmann::json::array({{{"role", "assistant"}, {"content", step.call->completion}}});
      nlohmann::json messages = *prompt;
      messages.push_back(completion[0]);
      Kept k;
      k.rule = ProgramKindName(step.program.kind);
      k.category = t.difficulty.category;
      k.problem = t.run.problem_sha256 + ":" + t.problem_id;
      k.value = gain ? *gain : *step.result->speedup;
      k.tokens = tokens;
      k.row = {{"messages", std::move(messages)},
               {"prompt", std::move(*prompt)},
               {"completion", std::move(completion)},
               {"meta", Meta(t, step, gain, parent_speedup, tokens)}};
      kept.push_back(std::move(k));
    }
  }
  std::vector<BalanceItem> items;
  for (const Kept& k : kept) items.push_back({k.category, k.problem, k.value});
  std::vector<size_t> balanced = BalanceByCategory(items, o.balance_ratio);
  s.dropped["balance"] = static_cast<int64_t>(kept.size() - balanced.size());
  if (s.dropped["balance"] == 0) s.dropped.erase("balance");
  for (size_t i : balanced) {
    Kept& k = kept[i];
    ++s.kept[k.rule];
    ++s.categories[k.category].kept;
    s.kept_tokens.push_back(k.tokens.total());
    if (k.tokens.estimated) ++s.tokens_estimated;
    out.rows.push_back(std::move(k.row));
  }
  return out;
}

}  // namespace ks
