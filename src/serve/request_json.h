// The bodies of the reward service's POST endpoints, parsed and validated. Every error is an
// InvalidArgument whose message names the field that is wrong and what is expected; the server
// answers it with HTTP 400 (docs/training.md lists the fields).
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "eval/runner.h"
#include "serve/reward_service.h"

namespace ks {

// Parses `body` as a JSON object. InvalidArgument: "malformed JSON at byte 17: ..." or "the
// body must be a JSON object, got array".
Result<nlohmann::json> ParseJsonObject(const std::string& body);

struct EvaluateCall {
  EvalRequest request;
  std::optional<double> timeout_s;  // "timeout_s": this request's deadline
};

// POST /v1/evaluate: {problem_source, candidate_source, [problem_path, candidate_path, backend,
// trials, tolerance, seed, timing, timeout_s]}; omitted fields take `defaults`' values.
Result<EvaluateCall> ParseEvaluateCall(const nlohmann::json& body, const EvalRequest& defaults);

struct RewardCall {
  std::vector<RewardItem> items;
  std::optional<double> timeout_s;
  bool include_eval = false;  // "include_eval": each result carries the child's full EvalResult
};

// POST /v1/reward: {"items": [{"completion": str, "ground_truth": obj|str}, ...],
// [timeout_s, include_eval]}.
Result<RewardCall> ParseRewardCall(const nlohmann::json& body);

// POST /get_reward in OpenRLHF's remote reward-model contract: {"query": [str], "prompts":
// [str], "labels": [str]} where query[i] = prompts[i] + response and labels[i] is the ground
// truth JSON string. The completion scored is the response part of each query.
Result<RewardCall> ParseOpenRlhfCall(const nlohmann::json& body);

}  // namespace ks
