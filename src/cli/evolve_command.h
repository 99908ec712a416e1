// `kernelsmith evolve`: evolutionary search for a faster kernel (docs/evolve.md).
// Thread-safety: called once from main.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/llm_limit_flags.h"

namespace ks {

struct EvolveCommandOptions {
  std::string problem_path;
  std::string seed_kernel;  // empty: the LLM translates the reference first
  std::string backend;      // empty: triton when a CUDA GPU is visible, else cpu
  std::string proposer;     // llm | tuner | command | files; empty: llm with an LLM, else tuner
  int rounds = 40;
  std::string run_dir;  // empty: runs/<problem-stem>-<timestamp>
  bool resume = false;
  std::string config_path;  // JSON file; flags win over its keys
  int islands = 2;
  int parallel_proposals = 4;
  int parallel_evals = 1;
  std::string llm_url;
  std::string model;
  std::string api_key_env;
  std::vector<std::string> llms;  // --llm URL,MODEL[,WEIGHT[,API_KEY_ENV]], repeatable
  std::string command;
  double command_timeout_s = 600;
  std::string exchange_dir;  // --proposer files
  std::string prompts_dir;   // user prompt templates (DIR/<backend>/*.md)
  int migration_interval = 5;
  double exploitation = 0.7;  // parent sampling mix (relative weights)
  double exploration = 0.2;
  double random = 0.1;
  double tuner_ratio = 0;  // share of proposals the tuner makes between LLM calls
  uint64_t seed = 42;
  int trials = 5;
  std::string python;         // default $KS_PYTHON or python3
  std::string queue;          // redis://... : evaluate on cluster workers; empty: local pool
  LlmLimits llm_limits;       // --max-tokens, --context-tokens, --llm-timeout
  bool no_verify = false;     // skip re-measuring the best kernel at the end
  bool summary_only = false;  // hidden: print the run directory's summary from run.db, exit
};

// Registers the `evolve` subcommand.
CLI::App* AddEvolveCommand(CLI::App& app, EvolveCommandOptions& options);

// Runs it. Exit code: 0 a correct candidate was found, 1 none was, 2 usage or input error,
// 3 the files proposer is waiting for answers (the run is stored; resume with --resume).
int RunEvolveCommand(const EvolveCommandOptions& options, const CLI::App& command);

}  // namespace ks
