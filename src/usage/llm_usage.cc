#include "usage/llm_usage.h"

#include <fmt/format.h>

#include "llm/token_estimate.h"

namespace ks {
namespace {

int64_t Int(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<int64_t>() : 0;
}

}  // namespace

void LlmUsage::Add(const LlmCallRecord& call) {
  ++calls;
  if (!call.error.empty()) ++errors;
  latency_s_total += call.latency_s;
  if (call.prompt_tokens || call.completion_tokens) {
    prompt_tokens += call.prompt_tokens.value_or(0);
    completion_tokens += call.completion_tokens.value_or(0);
    return;
  }
  if (call.completion.empty()) return;  // no reply, no tokens to count
  int64_t prompt = 0;
  if (auto messages = call.request.find("messages");
      messages != call.request.end() && messages->is_array()) {
    for (const nlohmann::json& m : *messages) {
      if (m.contains("content") && m["content"].is_string()) {
        prompt += EstimateTokens(m["content"].get<std::string>());
      }
    }
  }
  int64_t completion = EstimateTokens(call.completion);
  ++estimated_calls;
  estimated_prompt_tokens += prompt;
  estimated_completion_tokens += completion;
  prompt_tokens += prompt;
  completion_tokens += completion;
}

void LlmUsage::Add(const LlmUsage& o) {
  calls += o.calls;
  errors += o.errors;
  prompt_tokens += o.prompt_tokens;
  completion_tokens += o.completion_tokens;
  estimated_calls += o.estimated_calls;
  estimated_prompt_tokens += o.estimated_prompt_tokens;
  estimated_completion_tokens += o.estimated_completion_tokens;
  latency_s_total += o.latency_s_total;
}

std::optional<double> LlmUsage::CostUsd(const LlmPrices& prices) const {
  if (!prices.given()) return std::nullopt;
  return (static_cast<double>(prompt_tokens) * prices.in_per_mtok +
          static_cast<double>(completion_tokens) * prices.out_per_mtok) /
         1e6;
}

std::string LlmUsage::TokenSource() const {
  const int64_t all = prompt_tokens + completion_tokens;
  const int64_t estimated = estimated_prompt_tokens + estimated_completion_tokens;
  if (all == 0) return "none";
  if (estimated == 0) return "reported";
  return estimated == all ? "estimated" : "mixed";
}

nlohmann::json LlmUsage::ToJson(const LlmPrices& prices) const {
  std::optional<double> cost = CostUsd(prices);
  return {{"calls", calls},
          {"errors", errors},
          {"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"tokens", TokenSource()},
          {"estimated_calls", estimated_calls},
          {"estimated_prompt_tokens", estimated_prompt_tokens},
          {"estimated_completion_tokens", estimated_completion_tokens},
          {"latency_s_total", latency_s_total},
          {"latency_s_mean", calls > 0 ? latency_s_total / static_cast<double>(calls) : 0.0},
          {"cost_usd", cost ? nlohmann::json(*cost) : nlohmann::json(nullptr)},
          {"prices_usd_per_mtok",
           prices.given()
               ? nlohmann::json{{"prompt", prices.in_per_mtok}, {"completion", prices.out_per_mtok}}
               : nlohmann::json(nullptr)}};
}

LlmUsage LlmUsage::FromJson(const nlohmann::json& j) {
  LlmUsage u;
  if (!j.is_object()) return u;
  u.calls = Int(j, "calls");
  u.errors = Int(j, "errors");
  u.prompt_tokens = Int(j, "prompt_tokens");
  u.completion_tokens = Int(j, "completion_tokens");
  u.estimated_calls = Int(j, "estimated_calls");
  u.estimated_prompt_tokens = Int(j, "estimated_prompt_tokens");
  u.estimated_completion_tokens = Int(j, "estimated_completion_tokens");
  auto latency = j.find("latency_s_total");
  u.latency_s_total = latency != j.end() && latency->is_number() ? latency->get<double>() : 0.0;
  return u;
}

Result<LlmUsage> UsageOfRun(Store* store, const std::string& run_id) {
  Result<std::vector<LlmCallRecord>> calls = store->LlmCallsOfRun(run_id);
  if (!calls.ok()) return calls.status();
  LlmUsage usage;
  for (const LlmCallRecord& c : *calls) usage.Add(c);
  return usage;
}

std::string FormatUsage(const LlmUsage& u, const LlmPrices& prices) {
  std::string out = fmt::format("LLM: {} call(s)", u.calls);
  if (u.errors > 0) out += fmt::format(" ({} failed or unusable)", u.errors);
  out += fmt::format(", {} prompt + {} completion tokens", u.prompt_tokens, u.completion_tokens);
  if (u.estimated_calls > 0) {
    out += fmt::format(
        " (estimated from the text for {} call(s) without the server's usage: "
        "{} + {})",
        u.estimated_calls, u.estimated_prompt_tokens, u.estimated_completion_tokens);
  }
  out += fmt::format(", {:.1f} s in calls", u.latency_s_total);
  if (std::optional<double> cost = u.CostUsd(prices)) out += fmt::format(", cost ${:.4f}", *cost);
  return out;
}

}  // namespace ks
