// Feedback: the text a proposer sees about one evaluated candidate.
//
// Built from the EvalResult alone so that the same result always gives the same text: the
// status and why, errors with their log tail, correctness figures, the speedup with its
// noise, and each audit finding with what to change. Thread-safety: pure function.
#pragma once

#include <string>

#include "eval/eval_result.h"

namespace ks {

// Returns the feedback text for `result` (also stored in result.feedback by the pool).
std::string BuildFeedback(const EvalResult& result);

// The last `max_lines` lines of `text` (all of it when shorter).
std::string LastLines(const std::string& text, size_t max_lines);

}  // namespace ks
