// `kernelsmith bench`: one evolve run per problem of a suite under one protocol, the paper's
// metrics per level and overall (docs/bench.md, docs/metrics.md).
// Thread-safety: called once from main.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "run/run_options.h"

namespace ks {

struct BenchCommandOptions {
  std::string suite_dir;
  std::string levels;  // "1,2,3"; empty: every level
  std::string problems_glob;
  int concurrency = 1;  // problems run at once
  std::string run_dir;  // empty: runs/bench-<timestamp>
  bool resume = false;
  std::string config_path;  // YAML or JSON file; flags win over its keys
  int llm_in_flight = 8;    // LLM requests on the wire, over all problems
  bool no_verify = false;   // skip re-measuring each problem's best kernel at the end
  RunOptions run;           // each problem's run: the flags evolve and bench share
};

// Registers the `bench` subcommand.
CLI::App* AddBenchCommand(CLI::App& app, BenchCommandOptions& options);

// Runs it. Exit code: 0 every attempted problem ran to the end, 1 some failed, 2 usage or
// input error, 3 the files proposer waits for answers (then --resume).
int RunBenchCommand(const BenchCommandOptions& options, const CLI::App& command);

}  // namespace ks
