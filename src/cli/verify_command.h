// `kernelsmith verify`: re-evaluate a kernel about to be shipped (a run's best.py, or any
// candidate file) in a fresh worker, timed by the evaluator's method and by an independent
// one, and say whether the two agree.
// Thread-safety: called once from main.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace ks {

struct VerifyCommandOptions {
  std::string target;          // a run directory, or the problem file
  std::string candidate_path;  // with a problem file: the candidate
  std::string backend;         // empty: the run's backend, or the worker's default
  bool json = false;
  std::string python;  // interpreter for the worker; default $KS_PYTHON or python3
};

CLI::App* AddVerifyCommand(CLI::App& app, VerifyCommandOptions& options);

// Returns the exit code: 0 correct and both figures agree, 1 evaluated but not correct or the
// figures differ, 2 usage or input error.
int RunVerifyCommand(const VerifyCommandOptions& options);

}  // namespace ks
