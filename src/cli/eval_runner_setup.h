// The one set-up path of a command's evaluation runner (evolve, bench, serve, worker): a
// local WorkerPool, or with --queue the cluster's QueueRunner (docs/cluster.md).
// Thread-safety: called from the command's thread.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cluster/queue_runner.h"
#include "core/status.h"
#include "eval/runner.h"

namespace ks {

struct EvalRunnerSpec {
  std::string queue;                // redis://... (--queue); empty: a local pool
  std::string python;               // --python flag; empty: $KS_PYTHON or python3
  std::vector<int> gpus;            // local pool: GPUs to pin workers to; empty: CPU-only
  int slots_per_gpu = 1;            // local pool: workers per GPU (total without GPUs)
  std::string who = "kernelsmith";  // prefix of progress lines
};

struct EvalRunnerSetup {
  std::unique_ptr<Runner> runner;
  // The hello of a worker that will evaluate (docs/protocol.md): the local pool's, or the
  // advertised hello of a live cluster worker.
  nlohmann::json hello;
  size_t slots = 0;              // evaluations that may run at once
  QueueRunner* queue = nullptr;  // set when `runner` is the cluster queue
};

// Starts the runner; with --queue, waits (with a progress line) until a worker is live.
// InvalidArgument with a message that says what to do when no worker can start or the queue
// URL is bad or unreachable.
Result<EvalRunnerSetup> StartEvalRunner(const EvalRunnerSpec& spec);

// The local pool's GPUs for a command: --gpus as given, else every GPU there is, or none (CPU
// workers) on a machine without one or with --backend cpu.
Result<std::vector<int>> GpusFor(const std::string& gpus_flag, const std::string& backend);

// Workers per GPU so that at least `workers` run in all, spread evenly over `gpu_count` GPUs
// (no GPU: `workers`).
int SlotsPerGpuFor(int workers, size_t gpu_count);

// GPU indices for --gpus: "all" (CUDA_VISIBLE_DEVICES' entries when set, else every GPU the
// NVIDIA driver lists) or a comma-separated list; empty: none.
Result<std::vector<int>> ParseGpus(const std::string& spec);

}  // namespace ks
