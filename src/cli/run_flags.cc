#include "cli/run_flags.h"

#include "cli/llm_limit_flags.h"

namespace ks {

void AddRunFlags(CLI::App* cmd, RunOptions& o, std::string& config_path) {
  cmd->add_option(
      "--config", config_path,
      "YAML (.yaml/.yml) or JSON file of options (keys: flag names with '_' for '-'); flags win");
  cmd->add_option("--backend", o.backend, "triton | cuda | cpu (default: triton with a GPU)")
      ->check(CLI::IsMember({"triton", "cuda", "cpu"}));
  cmd->add_option("--proposer", o.proposer,
                  "llm | tuner | command | files (default: llm when an LLM is given, command "
                  "with --command, files with --exchange-dir, else tuner)")
      ->check(CLI::IsMember({"llm", "tuner", "command", "files"}));
  cmd->add_option("--rounds", o.rounds, "Rounds after the seed (per problem)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_option("--islands", o.islands, "Islands of the archive")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--parallel-proposals", o.parallel_proposals, "Proposals in flight (per problem)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--parallel-evals", o.parallel_evals,
                  "Evaluation workers, spread over the GPUs (default: one per GPU; bench: at "
                  "least --concurrency, shared by all problems)")
      ->check(CLI::Range(0, 64));
  cmd->add_option("--gpus", o.gpus,
                  "GPUs for the evaluation workers: all, or indices like 0,1 (default: all on a "
                  "machine with NVIDIA GPUs, each worker pinned to one, one timing at a time per "
                  "GPU; CPU workers on one without or with --backend cpu)");
  cmd->add_option("--llm-url", o.llm_url, "OpenAI-compatible base URL, e.g. http://host:8000/v1");
  cmd->add_option("--model", o.model, "Model name for --llm-url");
  cmd->add_option("--api-key-env", o.api_key_env, "Environment variable holding the API key");
  AddLlmLimitFlags(cmd, o.llm_limits);
  cmd->add_option("--llm", o.llms,
                  "URL,MODEL[,WEIGHT[,API_KEY_ENV]]: an ensemble member (repeatable; with "
                  "--llm-url/--model as one more member of weight 1)");
  cmd->add_option("--price-in", o.price_in,
                  "USD per million prompt tokens: summaries then give the LLM cost")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--price-out", o.price_out, "USD per million completion tokens")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--prompts", o.prompts_dir,
                  "Directory of prompt templates overriding prompts/ (DIR/<backend>/*.md)");
  cmd->add_option("--exchange-dir", o.exchange_dir,
                  "--proposer files: prompts go to DIR/*.prompt.md, answers are read from "
                  "DIR/*.answer.md");
  cmd->add_option("--migration-interval", o.migration_interval,
                  "Generations between ring migrations (0: none)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_option("--exploitation", o.exploitation, "Parent sampling weight: elites")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  cmd->add_option("--exploration", o.exploration, "Parent sampling weight: diverse cells")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  cmd->add_option("--random", o.random, "Parent sampling weight: any program")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  cmd->add_option("--tuner-ratio", o.tuner_ratio,
                  "Share of proposals made by the tuner between LLM/command/files proposals "
                  "(parents with tunable constants only)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--command", o.command,
                  "Proposer command (run by /bin/sh): prompt on stdin, completion on stdout");
  cmd->add_option("--command-timeout", o.command_timeout_s, "Seconds per --command call")
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed of the search and of the evaluations")
      ->capture_default_str();
  cmd->add_option("--trials", o.trials, "Correctness trials per candidate")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--python", o.python, "Python with torch for the workers");
  cmd->add_option("--queue", o.queue,
                  "Evaluate on cluster workers through Redis: redis://HOST:PORT[/DB]"
                  "[?device=KIND] (docs/cluster.md; config key: queue)");
}

bool FlagGiven(const CLI::App& cmd, const std::string& flag) {
  const CLI::Option* option = cmd.get_option_no_throw(flag);
  return option != nullptr && option->count() > 0;
}

Status ApplyConfigUnderFlags(const nlohmann::json& config, const CLI::App& cmd,
                             const std::string& source, RunOptions& options) {
  return ApplyConfig(
      config, [&](const std::string& flag) { return FlagGiven(cmd, flag); }, source, options);
}

}  // namespace ks
