// The ground truth of one RL example: what `kernelsmith export rl` writes into
// reward_model.ground_truth and label (a JSON string), and what the reward needs to score a
// completion: the reference problem, the parent program the completion edits, and the parent's
// figures measured when the trajectory ran.
// Thread-safety: pure functions and values.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/status.h"

namespace ks {

struct GroundTruth {
  std::string problem_id;      // "problem_id" (or "task_id"); for messages and metrics
  std::string problem_path;    // "problem_path"; default: problem_id
  std::string reference_code;  // "reference_code" (or "reference", "problem_source"): Model
  std::string parent_code;     // "parent_code": the program whose EVOLVE-BLOCK is edited;
                               // empty for a translation (the parent is the reference)
  std::string backend;         // "backend"; empty: the service's default
  std::optional<double> parent_speedup;     // "parent_speedup": vs the reference, when exported
  std::optional<double> parent_runtime_us;  // "parent_runtime_us" (or "parent_us")
};

// Parses a ground truth given as a JSON object or as a string holding one (verl and OpenRLHF
// pass it as a string). InvalidArgument naming the missing or mistyped key, e.g.
// "ground truth: missing \"parent_code\" (the program the completion edits)".
Result<GroundTruth> ParseGroundTruth(const nlohmann::json& value);

}  // namespace ks
