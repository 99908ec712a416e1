// LLM usage of a run or of a whole bench: calls, errors, prompt and completion tokens, latency
// and cost. Tokens are the server's own counts (its `usage` field) where it reported them;
// for answered calls without them (the files and command proposers, servers that omit
// `usage`) they are estimated from the text (llm/token_estimate.h) and the estimated part is
// counted apart, so a reader sees how much of a figure is an estimate.
// Thread-safety: plain data and functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "store/store.h"

namespace ks {

// USD per million tokens; both 0: no cost figure.
struct LlmPrices {
  double in_per_mtok = 0;   // prompt tokens
  double out_per_mtok = 0;  // completion tokens
  bool given() const { return in_per_mtok > 0 || out_per_mtok > 0; }
};

struct LlmUsage {
  int64_t calls = 0;
  int64_t errors = 0;         // calls that failed or whose reply could not be used
  int64_t prompt_tokens = 0;  // reported and estimated together
  int64_t completion_tokens = 0;
  int64_t estimated_calls = 0;          // answered calls without the server's counts
  int64_t estimated_prompt_tokens = 0;  // the estimated part of prompt_tokens
  int64_t estimated_completion_tokens = 0;
  double latency_s_total = 0;

  // Counts one stored call.
  void Add(const LlmCallRecord& call);
  void Add(const LlmUsage& other);
  // prompt and completion tokens at `prices`; nullopt when no price is given.
  std::optional<double> CostUsd(const LlmPrices& prices) const;
  // "reported", "estimated", "mixed" (some of each) or "none" (no tokens).
  std::string TokenSource() const;

  // {calls, errors, prompt_tokens, completion_tokens, tokens ("reported" | "estimated" |
  // "mixed" | "none"), estimated_calls, estimated_prompt_tokens, estimated_completion_tokens,
  // latency_s_total, latency_s_mean, cost_usd (null without prices), prices_usd_per_mtok
  // ({prompt, completion} or null)}.
  nlohmann::json ToJson(const LlmPrices& prices) const;
  // The counts of ToJson's object (missing fields are 0).
  static LlmUsage FromJson(const nlohmann::json& j);
};

// The usage of every call stored for `run_id`.
Result<LlmUsage> UsageOfRun(Store* store, const std::string& run_id);

// One line for people, e.g. "LLM: 12 calls (1 error), 30512 prompt + 8123 completion tokens
// (estimated: 4 calls, 1200 + 300), 95.2 s, $0.0091".
std::string FormatUsage(const LlmUsage& usage, const LlmPrices& prices);

}  // namespace ks
