// What `kernelsmith evolve` sets a run up from: JSON files, the default run directory, the
// backend and hardware the worker reports, and the stored summary of a run directory.
// Thread-safety: functions only.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cli/backend_choice.h"
#include "core/status.h"

namespace ks {

// Prints "kernelsmith evolve: error: MESSAGE" to stderr and returns exit status 2.
int EvolveUsageError(const std::string& message);

// The JSON object in `path`; InvalidArgument names a file that is not JSON.
Result<nlohmann::json> ReadJsonFile(const std::string& path);

// runs/<name>-<local time, YYYYmmdd-HHMMSS>.
std::string StampedRunDir(const std::string& name);
// runs/<problem-stem>-<YYYYmmdd-HHMMSS>.
std::string DefaultRunDir(const std::string& problem_path);

// The evaluating device for prompts, from the worker's hello, e.g. "NVIDIA H100 (sm_90)" or
// "AMD EPYC 7B13 (16 cores)"; empty when the hello does not say.
std::string HardwareOf(const nlohmann::json& hello);

}  // namespace ks
