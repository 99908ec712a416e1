// The flags of an evolve run, defined once for `evolve` and `bench`: proposer and LLM
// endpoints, search, evaluation, LLM limits and prices, --config.
// Thread-safety: called from main's thread.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "run/run_options.h"

namespace ks {

// Registers the shared flags on `cmd`, writing into `options`; `config_path` takes --config.
void AddRunFlags(CLI::App* cmd, RunOptions& options, std::string& config_path);

// Whether `flag` (e.g. "--rounds") was given on `cmd`'s command line; false for a flag `cmd`
// does not define.
bool FlagGiven(const CLI::App& cmd, const std::string& flag);

// ApplyConfig with the flags of `cmd` winning over the keys of `config`.
Status ApplyConfigUnderFlags(const nlohmann::json& config, const CLI::App& cmd,
                             const std::string& source, RunOptions& options);

}  // namespace ks
