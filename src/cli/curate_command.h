// `kernelsmith curate`: turn directories of Python source into a deduplicated, executable,
// clustered KernelBench-format problem set (docs/curate.md).
// Thread-safety: called once from main.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace ks {

struct CurateCommandOptions {
  std::vector<std::string> sources;
  std::string out_dir;
  int jobs = 2;
  bool resume = false;
  double near_dup_threshold = 0.7;
  bool embed = false;
  int min_cluster_size = 0;  // 0: the Python tool's default
  std::string llm_url;
  std::string model;
  std::string api_key_env;
  std::string python;  // empty: $KS_PYTHON or python3
  double timeout_s = 20;
  uint64_t seed = 42;
  bool include_tests = false;
  int extract_batch = 16;
  int inputs_batch = 8;
};

CLI::App* AddCurateCommand(CLI::App& app, CurateCommandOptions& options);

// Exit code: 0 the pipeline ran to the end (modules may have been rejected), 1 it stopped on
// an infrastructure error (state kept: rerun with --resume), 2 usage or input error.
int RunCurateCommand(const CurateCommandOptions& options);

}  // namespace ks
