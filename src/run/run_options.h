// The options of one evolve run, shared by `evolve` (one problem) and `bench` (each problem of
// a suite): the proposer and its LLM endpoints, the search, the evaluation, the LLM limits and
// prices. The same keys serve config files (--config), run.json and bench_config.json.
// Thread-safety: plain data and functions.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/proposer_factory.h"

namespace ks {

struct RunOptions {
  std::string seed_kernel;  // evolve: the seed file; bench: set per problem from the suite
  std::string backend;      // empty: triton when a CUDA GPU is visible, else cpu
  std::string proposer;     // llm | tuner | command | files; empty: chosen from what is given
  int rounds = 40;
  int islands = 2;
  int parallel_proposals = 4;
  int parallel_evals =
      0;             // evaluation workers; 0: one per GPU (bench: at least one per run at once)
  std::string gpus;  // --gpus: all or 0,1,...; empty: every GPU there is (none for cpu)
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
  std::string python;  // default $KS_PYTHON or python3
  std::string queue;   // redis://... : evaluate on cluster workers; empty: a local pool
  LlmLimits llm_limits;
  double price_in = 0;   // USD per million prompt tokens; 0: no cost figure
  double price_out = 0;  // USD per million completion tokens
};

// The options as a config object (every key, flag names with '_' for '-').
nlohmann::json ConfigOf(const RunOptions& options);

// Sets the options named in `config` for which `flag_given("--flag-name")` is false (flags
// win). InvalidArgument from `source` names an unknown key (with the known ones) or a value of
// the wrong type.
Status ApplyConfig(const nlohmann::json& config,
                   const std::function<bool(const std::string&)>& flag_given,
                   const std::string& source, RunOptions& options);

// Fills an empty `options.proposer` from what is given (an LLM: llm, a command: command, an
// exchange directory: files, else tuner) and returns the proposer's spec. InvalidArgument says
// which flag is missing or malformed. `run_id` is set later, per run.
Result<ProposerSpec> ProposerSpecOf(RunOptions& options);

}  // namespace ks
