#include "cli/worker_command.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "cli/backend_choice.h"
#include "cli/eval_runner_setup.h"
#include "cluster/cluster_status.h"
#include "cluster/queue_worker.h"

namespace ks {
namespace {

int UsageError(const std::string& who, const std::string& message) {
  fmt::print(stderr, "kernelsmith {}: error: {}\n", who, message);
  return 2;
}

}  // namespace

CLI::App* AddWorkerCommand(CLI::App& app, WorkerCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "worker",
      "Join a cluster as an evaluation worker: take requests from the Redis queue, evaluate "
      "them in local workers (sandboxed, one timing at a time per GPU) and store the results "
      "(docs/cluster.md). Runs until SIGINT or SIGTERM.");
  cmd->add_option("--queue", o.queue, "redis://HOST:PORT[/DB]; password from $KS_REDIS_PASSWORD")
      ->required();
  cmd->add_option("--gpus", o.gpus, "GPUs to use: all or e.g. 0,1 (default: CPU-only)");
  cmd->add_option("--backend", o.backend, "triton, cuda or cpu (default: triton with a GPU)");
  cmd->add_option("--slots-per-gpu", o.slots_per_gpu,
                  "Evaluations at once per GPU (total without --gpus)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--name", o.name, "Worker name in results and status (default: HOST-PID)");
  cmd->add_option("--python", o.python, "Python with torch for the workers");
  cmd->add_option("--visibility-timeout", o.visibility_timeout_s,
                  "Seconds after which a dead worker's requests are taken over")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  cmd->add_option("--max-deliveries", o.max_deliveries,
                  "Deliveries after which a request that keeps losing its worker gets a crash "
                  "result")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  return cmd;
}

int RunWorkerCommand(const WorkerCommandOptions& o) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  Result<QueueUrl> url = ParseQueueUrl(o.queue);
  if (!url.ok()) return UsageError("worker", url.status().message());
  if (!url->device.empty()) {
    return UsageError("worker",
                      "--queue: device= is for producers; a worker serves its own "
                      "device kind");
  }
  Result<std::vector<int>> gpus = ParseGpus(o.gpus);
  if (!gpus.ok()) return UsageError("worker", gpus.status().message());
  EvalRunnerSpec spec;  // the local pool that evaluates what this worker takes
  spec.python = o.python;
  spec.gpus = *gpus;
  spec.slots_per_gpu = o.slots_per_gpu;
  Result<EvalRunnerSetup> setup = StartEvalRunner(spec);
  if (!setup.ok()) return UsageError("worker", setup.status().message());
  Result<std::string> backend = ResolveBackend(o.backend, setup->hello);
  if (!backend.ok()) return UsageError("worker", backend.status().message());

  std::atomic<bool> stop{false};
  QueueWorkerOptions wo;
  wo.redis = RedisOptionsFor(*url);
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  wo.name = o.name.empty() ? fmt::format("{}-{}", host, getpid()) : o.name;
  wo.consumers = setup->slots;
  wo.hello = setup->hello;
  wo.backend = *backend;
  wo.visibility_timeout_s = o.visibility_timeout_s;
  wo.max_deliveries = o.max_deliveries;
  wo.stop = &stop;

  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    fmt::print("kernelsmith worker {}: {} received; finishing the evaluations held\n", wo.name,
               sig == SIGINT ? "SIGINT" : "SIGTERM");
    std::fflush(stdout);
    stop.store(true);
  });
  fmt::print("kernelsmith worker {}: serving {} with {} slot(s) on {} ({}), backend {}\n", wo.name,
             url->text, wo.consumers,
             setup->hello.value("device", nlohmann::json::object()).value("name", "?"),
             WorkerDeviceKind(setup->hello), *backend);
  std::fflush(stdout);
  Status s = RunQueueWorker(wo, setup->runner.get());
  if (!s.ok()) {
    fmt::print(stderr, "kernelsmith worker: error: {}\n", s.message());
    stop.store(true);
    pthread_kill(signal_thread.native_handle(), SIGTERM);
  }
  signal_thread.join();
  setup->runner->Shutdown();
  fmt::print("kernelsmith worker {}: stopped\n", wo.name);
  return s.ok() ? 0 : 2;
}

CLI::App* AddClusterCommand(CLI::App& app, ClusterCommandOptions& o) {
  CLI::App* cluster = app.add_subcommand("cluster", "Inspect an evaluation cluster");
  cluster->require_subcommand(1);
  CLI::App* status = cluster->add_subcommand(
      "status",
      "Workers (devices, slots), queue depth, in flight, evaluations/s over the last minute, "
      "stalled requests");
  status->add_option("--queue", o.queue, "redis://HOST:PORT[/DB]")->required();
  status->add_flag("--json", o.json, "Print JSON");
  status
      ->add_option("--visibility-timeout", o.visibility_timeout_s,
                   "Idle seconds after which a held request counts as stalled")
      ->capture_default_str();
  return cluster;
}

int RunClusterCommand(const ClusterCommandOptions& o) {
  Result<QueueUrl> url = ParseQueueUrl(o.queue);
  if (!url.ok()) return UsageError("cluster", url.status().message());
  RedisOptions redis = RedisOptionsFor(*url);
  redis.give_up_s = 5;
  Result<std::unique_ptr<RedisClient>> c = RedisClient::Connect(redis);
  if (!c.ok()) return UsageError("cluster", c.status().message());
  Result<ClusterStatus> st = ReadClusterStatus(c->get(), o.visibility_timeout_s);
  if (!st.ok()) return UsageError("cluster", st.status().message());
  fmt::print("{}", o.json ? st->ToJson().dump(2) + "\n" : st->ToText());
  return 0;
}

}  // namespace ks
