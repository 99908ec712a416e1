// `kernelsmith serve`: the reward service for RL trainers (docs/training.md).
// Thread-safety: called once from main.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace ks {

struct ServeCommandOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string backend;       // empty: triton when the worker sees a CUDA GPU, else cpu
  std::string gpus;          // "all", "0,1", or empty: CPU-only workers (GPU not pinned)
  int slots_per_gpu = 1;     // workers per GPU (total workers without --gpus)
  int max_queue = 256;       // evaluations waiting; more get 429
  int threads = 0;           // HTTP handler threads; 0: sized from --max-queue and the slots
  double max_body_mb = 64;
  double request_timeout_s = 900;
  int trials = 5;
  std::string tolerance = "default";
  uint64_t seed = 42;
  std::string reward = "ratio";
  double reward_floor = 0;
  double reward_clip = 0;    // 0: no clip
  std::string python;        // interpreter for the workers; default $KS_PYTHON or python3
  std::string queue;         // redis://... : evaluate on cluster workers; empty: local pool
};

CLI::App* AddServeCommand(CLI::App& app, ServeCommandOptions& options);

// Serves until SIGINT or SIGTERM. Returns 0 after a clean shutdown, 2 on a usage or startup
// error.
int RunServeCommand(const ServeCommandOptions& options);

}  // namespace ks
