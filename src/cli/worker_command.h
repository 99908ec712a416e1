// `kernelsmith worker`: joins a cluster as an evaluation worker (docs/cluster.md), and
// `kernelsmith cluster status`: the cluster's workers, queue and throughput.
// Thread-safety: called once from main.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace ks {

struct WorkerCommandOptions {
  std::string queue;    // redis://HOST:PORT[/DB]
  std::string gpus;     // "all", "0,1", or empty: CPU-only
  std::string backend;  // empty: triton with a CUDA GPU, else cpu
  int slots_per_gpu = 1;
  std::string name;  // empty: HOST-PID
  std::string python;
  double visibility_timeout_s = 60;
  int max_deliveries = 3;
};

struct ClusterCommandOptions {
  std::string queue;
  bool json = false;
  double visibility_timeout_s = 60;
};

CLI::App* AddWorkerCommand(CLI::App& app, WorkerCommandOptions& options);
// Serves until SIGINT or SIGTERM (the evaluations held finish first). 0 after a clean stop,
// 2 on a usage or start-up error.
int RunWorkerCommand(const WorkerCommandOptions& options);

CLI::App* AddClusterCommand(CLI::App& app, ClusterCommandOptions& options);
int RunClusterCommand(const ClusterCommandOptions& options);

}  // namespace ks
