#include "export/summary.h"

#include <fmt/format.h>

#include <algorithm>

namespace ks {
namespace {

// What to do about the most common reason nothing was kept.
std::string HintFor(const std::string& reason) {
  if (reason == "no_llm_call" || reason == "seed") {
    return "these runs hold no LLM steps (tuner or seed programs have no prompt): export runs "
           "made with --proposer llm or command";
  }
  if (reason == "below_min_gain") return "no child beat its parent by --min-gain: lower it";
  if (reason == "over_token_cap") return "every example is over --max-tokens: raise it";
  if (reason == "translation") {
    return "the runs' best steps are translations from the reference, not revisions: try "
           "--selection initial (or all)";
  }
  if (reason == "not_new_best") {
    return "no LLM step improved on the run's best: try --selection all";
  }
  if (reason == "reference_missing") {
    return "the runs were made before kernelsmith stored problem sources in run.db and their "
           "problem files were not found: run export from the directory the runs were started "
           "in, or resume each run once with its problem file (that stores the source)";
  }
  if (reason == "not_evaluated") return "the runs' candidates are not evaluated yet: resume them";
  return "";
}

}  // namespace

int64_t ExportSummary::total_kept() const {
  int64_t n = 0;
  for (const auto& [rule, count] : kept) n += count;
  return n;
}

nlohmann::json ExportSummary::ToJson() const {
  nlohmann::json j;
  j["format"] = format;
  j["options"] = options;
  j["runs"] = runs;
  j["steps_seen"] = steps_seen;
  j["kept"] = total_kept();
  j["kept_by_rule"] = kept;
  j["dropped"] = dropped;
  nlohmann::json cats = nlohmann::json::object();
  for (const auto& [name, c] : categories) cats[name] = {{"seen", c.seen}, {"kept", c.kept}};
  j["categories"] = cats;
  nlohmann::json tokens = {{"count", kept_tokens.size()}, {"estimated", tokens_estimated}};
  if (kept_tokens.empty()) {
    for (const char* k : {"min", "median", "max", "total"}) tokens[k] = nullptr;
  } else {
    std::vector<int64_t> sorted = kept_tokens;
    std::sort(sorted.begin(), sorted.end());
    int64_t total = 0;
    for (int64_t t : sorted) total += t;
    size_t n = sorted.size();
    double median = n % 2 == 1 ? static_cast<double>(sorted[n / 2])
                               : (static_cast<double>(sorted[n / 2 - 1]) + sorted[n / 2]) / 2.0;
    tokens["min"] = sorted.front();
    tokens["median"] = median;
    tokens["max"] = sorted.back();
    tokens["total"] = total;
  }
  j["tokens"] = tokens;
  return j;
}

std::string ExportSummary::ToText() const {
  nlohmann::json j = ToJson();
  std::string out = fmt::format("{} export: {} run(s), {} step(s) seen, {} row(s) kept", format,
                                runs, steps_seen, total_kept());
  std::string rules;
  for (const auto& [rule, n] : kept) rules += fmt::format("{}{} {}", rules.empty() ? "" : ", ", n, rule);
  if (!rules.empty()) out += " (" + rules + ")";
  out += "\n";
  if (!dropped.empty()) {
    out += "dropped:";
    for (const auto& [reason, n] : dropped) out += fmt::format(" {} {};", reason, n);
    out.pop_back();
    out += "\n";
  }
  if (!categories.empty()) {
    out += "categories (kept/seen):";
    for (const auto& [name, c] : categories) out += fmt::format(" {} {}/{};", name, c.kept, c.seen);
    out.pop_back();
    out += "\n";
  }
  const nlohmann::json& t = j["tokens"];
  if (!kept_tokens.empty()) {
    out += fmt::format("tokens per row: min {}, median {}, max {}, total {}{}\n",
                       t["min"].get<int64_t>(), t["median"].get<double>(),
                       t["max"].get<int64_t>(), t["total"].get<int64_t>(),
                       tokens_estimated > 0
                           ? fmt::format(" ({} row(s) estimated at 4 bytes/token)",
                                         tokens_estimated)
                           : "");
  }
  return out;
}

std::string ExportSummary::WhyEmpty() const {
  if (steps_seen == 0) {
    return fmt::format("the {} run(s) hold no programs yet", runs);
  }
  std::vector<std::pair<std::string, int64_t>> reasons(dropped.begin(), dropped.end());
  std::stable_sort(reasons.begin(), reasons.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out = fmt::format("all {} step(s) of {} run(s) were dropped:", steps_seen, runs);
  for (const auto& [reason, n] : reasons) out += fmt::format(" {} {},", reason, n);
  out.pop_back();
  if (!reasons.empty()) {
    std::string hint = HintFor(reasons.front().first);
    if (!hint.empty()) out += "; " + hint;
  }
  return out;
}

}  // namespace ks
