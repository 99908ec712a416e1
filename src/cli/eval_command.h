// `kernelsmith eval`: evaluate one candidate against one problem and report.
// Thread-safety: called once from main.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace ks {

struct EvalCommandOptions {
  std::string problem_path;
  std::string candidate_path;
  std::string backend;     // empty: triton when a CUDA GPU is visible, else cpu
  std::optional<int> gpu;  // pin the worker to this GPU index; default: not pinned
  int trials = 5;          // correctness trials
  std::string tolerance = "default";
  uint64_t seed = 42;
  bool json = false;  // print the EvalResult JSON instead of the report
  int repeat = 1;     // evaluate this many times in one warm worker
  bool timing = true;
  std::string baseline_path;  // time against this candidate instead of the reference
  std::string python;  // interpreter for the worker; default $KS_PYTHON or python3
};

// Registers the `eval` subcommand; `run` is set to the function that executes it.
CLI::App* AddEvalCommand(CLI::App& app, EvalCommandOptions& options);

// Runs the command. Returns the process exit code: 0 correct and clean, 1 evaluated and
// failed, 2 usage or input error.
int RunEvalCommand(const EvalCommandOptions& options);

}  // namespace ks
