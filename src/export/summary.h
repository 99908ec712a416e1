// What an export did: steps seen, rows kept per rule, steps dropped per filter reason, counts
// per difficulty category and token statistics of the kept rows. Printed by the CLI and
// written beside the dataset as JSON (docs/export.md).
// Thread-safety: values.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ks {

struct CategoryCounts {
  int64_t seen = 0;
  int64_t kept = 0;
};

struct ExportSummary {
  std::string format;  // "sft" or "rl"
  nlohmann::json options = nlohmann::json::object();  // the effective options
  int64_t runs = 0;
  int64_t steps_seen = 0;                    // programs of every run
  std::map<std::string, int64_t> kept;       // rule → rows ("translation", "evolution", ...)
  std::map<std::string, int64_t> dropped;    // filter reason → steps
  std::map<std::string, CategoryCounts> categories;  // "level1", ... → steps seen / rows kept
  std::vector<int64_t> kept_tokens;          // tokens of each kept row
  int64_t tokens_estimated = 0;              // kept rows whose token count was estimated

  int64_t total_kept() const;
  void Drop(const std::string& reason) { ++dropped[reason]; }

  // {"format", "options", "runs", "steps_seen", "kept", "kept_by_rule", "dropped",
  //  "categories": {name: {seen, kept}}, "tokens": {count, min, median, max, total,
  //  estimated}}; the token figures are null when nothing was kept.
  nlohmann::json ToJson() const;
  // A few lines for a person.
  std::string ToText() const;
  // Why nothing was kept, for the error of an empty export: the dropped reasons, largest
  // first, with a hint for the most common one.
  std::string WhyEmpty() const;
};

}  // namespace ks
