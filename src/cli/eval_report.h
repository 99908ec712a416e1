// Human-readable report of one EvalResult for the terminal.
// Thread-safety: pure function.
#pragma once

#include <string>

#include "eval/eval_result.h"

namespace ks {

std::string FormatEvalReport(const EvalResult& result);

}  // namespace ks
