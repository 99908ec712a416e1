// `kernelsmith bench`: one evolve run per problem of a suite under one protocol, the paper's
// metrics per level and overall (docs/bench.md, docs/metrics.md).
// Thread-safety: called once from main.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "cli/llm_limit_flags.h"

namespace ks {

struct BenchCommandOptions {
  std::string suite_dir;
  std::string levels;  // "1,2,3"; empty: every level
  std::string problems_glob;
  int rounds = 40;
  int concurrency = 1;  // problems run at once
  std::string run_dir;  // empty: runs/bench-<timestamp>
  bool resume = false;
  std::string backend;   // empty: triton when a CUDA GPU is visible, else cpu
  std::string proposer;  // llm | tuner | command; empty: llm with --llm-url, else tuner
  int islands = 2;
  int parallel_proposals = 4;
  int parallel_evals = 0;  // evaluation workers shared by all problems; 0: --concurrency
  std::string llm_url;
  std::string model;
  std::string api_key_env;
  int llm_in_flight = 8;  // LLM requests on the wire, over all problems
  LlmLimits llm_limits;   // --max-tokens, --context-tokens, --llm-timeout
  std::string command;
  double command_timeout_s = 600;
  uint64_t seed = 42;
  int trials = 5;
  std::string python;
  std::string queue;  // redis://... : evaluate on cluster workers; empty: local pool
};

// Registers the `bench` subcommand.
CLI::App* AddBenchCommand(CLI::App& app, BenchCommandOptions& options);

// Runs it. Exit code: 0 every attempted problem ran to the end, 1 some failed or stopped
// early, 2 usage or input error.
int RunBenchCommand(const BenchCommandOptions& options, const CLI::App& command);

}  // namespace ks
