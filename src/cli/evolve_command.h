// `kernelsmith evolve`: evolutionary search for a faster kernel (docs/evolve.md).
// Thread-safety: called once from main.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "run/run_options.h"

namespace ks {

struct EvolveCommandOptions {
  std::string problem_path;
  std::string run_dir;  // empty: runs/<problem-stem>-<timestamp>
  bool resume = false;
  std::string config_path;    // YAML or JSON file; flags win over its keys
  RunOptions run;             // the flags evolve and bench share (cli/run_flags.h)
  bool no_verify = false;     // skip re-measuring the best kernel at the end
};

// Registers the `evolve` subcommand.
CLI::App* AddEvolveCommand(CLI::App& app, EvolveCommandOptions& options);

// Runs it. Exit code: 0 a correct candidate was found, 1 none was, 2 usage or input error,
// 3 the files proposer is waiting for answers (the run is stored; resume with --resume).
int RunEvolveCommand(const EvolveCommandOptions& options, const CLI::App& command);

}  // namespace ks
