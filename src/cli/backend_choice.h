// Which backend a command runs, from the user's request and the worker's hello.
// Thread-safety: pure function.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/status.h"

namespace ks {

// The backend to use given the requested one (empty: triton when the worker sees a CUDA GPU,
// else cpu) and the worker's hello (docs/protocol.md). InvalidArgument, saying what to do,
// when the worker's device cannot run the requested backend.
Result<std::string> ResolveBackend(const std::string& requested, const nlohmann::json& hello);

}  // namespace ks
