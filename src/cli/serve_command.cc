#include "cli/serve_command.h"

#include <dirent.h>
#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <sstream>

#include "cli/backend_choice.h"
#include "cli/eval_runner_setup.h"
#include "cli/python_choice.h"
#include "cluster/cluster_status.h"
#include "eval/worker_pool.h"
#include "serve/admission_queue.h"
#include "serve/http_server.h"
#include "serve/parent_baselines.h"
#include "serve/reward_service.h"
#include "serve/serve_metrics.h"

namespace ks {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;

int UsageError(const std::string& message) {
  fmt::print(stderr, "kernelsmith serve: error: {}\n", message);
  return kExitUsage;
}

// The cluster's figures as metric families, read from Redis at each scrape.
std::function<std::vector<prometheus::MetricFamily>()> ClusterMetrics(const QueueUrl& url) {
  struct State {
    std::mutex mu;
    RedisOptions options;
    std::unique_ptr<RedisClient> client;
  };
  auto state = std::make_shared<State>();
  state->options = RedisOptionsFor(url);
  state->options.give_up_s = 2;
  return [state]() -> std::vector<prometheus::MetricFamily> {
    std::lock_guard<std::mutex> lock(state->mu);
    auto up = [](bool reached) {
      return ScrapedGauge("ks_cluster_up", "1 when the cluster's Redis answered this scrape",
                          reached ? 1 : 0);
    };
    if (state->client == nullptr) {
      Result<std::unique_ptr<RedisClient>> c = RedisClient::Connect(state->options);
      if (!c.ok()) return {up(false)};
      state->client = std::move(*c);
    }
    Result<ClusterStatus> st = ReadClusterStatus(state->client.get());
    if (!st.ok()) {
      state->client.reset();  // reconnect on the next scrape
      return {up(false)};
    }
    auto n = [](auto v) { return static_cast<double>(v); };
    return {up(true),
            ScrapedGauge("ks_cluster_workers", "live workers", n(st->workers.size())),
            ScrapedGauge("ks_cluster_slots", "evaluation slots of the workers", n(st->slots)),
            ScrapedGauge("ks_cluster_busy_slots",
                         "slots evaluating now (as the workers last advertised)", n(st->busy)),
            ScrapedGauge("ks_cluster_queue_depth", "requests no worker has taken yet",
                         n(st->queue_depth)),
            ScrapedGauge("ks_cluster_in_flight", "requests taken and not acknowledged",
                         n(st->in_flight)),
            ScrapedGauge("ks_cluster_stalled",
                         "requests in flight and idle longer than the visibility timeout",
                         n(st->stalled)),
            ScrapedGauge("ks_cluster_evals_per_second",
                         "results stored per second over the last minute", st->evals_per_s)};
  };
}

}  // namespace

CLI::App* AddServeCommand(CLI::App& app, ServeCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Serve evaluations and RL rewards over HTTP: POST /v1/evaluate, POST /v1/reward, "
      "POST /get_reward (OpenRLHF), GET /healthz, GET /metrics (docs/training.md). Runs until "
      "SIGINT or SIGTERM.");
  cmd->add_option("--host", o.host, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", o.port, "Port to listen on (0: any free port, printed)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--backend", o.backend,
                  "Default backend for requests that name none: triton | cuda | cpu (default: "
                  "triton when a CUDA GPU is visible, else cpu)")
      ->check(CLI::IsMember({"triton", "cuda", "cpu"}));
  cmd->add_option("--gpus", o.gpus,
                  "GPUs for workers: all, or indices like 0,1 (default: all on a machine with "
                  "NVIDIA GPUs, each worker pinned to its GPU; CPU workers on one without or "
                  "with --backend cpu)");
  cmd->add_option("--slots-per-gpu", o.slots_per_gpu,
                  "Workers per GPU (total workers without --gpus)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--max-queue", o.max_queue,
                  "Evaluations that may wait for a worker; a request that does not fit gets 429")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--threads", o.threads, "HTTP handler threads (default: from --max-queue)")
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--max-body-mb", o.max_body_mb, "Largest request body; larger gets 413")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--request-timeout", o.request_timeout_s,
                  "Deadline in seconds of a request that names no timeout_s; past it: 504")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--trials", o.trials, "Correctness trials per evaluation")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--tolerance", o.tolerance, "default (1e-2) | strict (1e-4)")
      ->check(CLI::IsMember({"default", "strict"}))
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed of inputs and parameters")->capture_default_str();
  cmd->add_option("--reward", o.reward,
                  "ratio (child/parent speedup, the paper's) | log_ratio (1 + log2 of it)")
      ->check(CLI::IsMember({"ratio", "log_ratio"}))
      ->capture_default_str();
  cmd->add_option("--reward-floor", o.reward_floor, "Least reward of a correct kernel")
      ->capture_default_str();
  cmd->add_option("--reward-clip", o.reward_clip, "Largest reward (0: no clip)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--queue", o.queue,
                  "Evaluate on cluster workers through Redis: redis://HOST:PORT[/DB]"
                  "[?device=KIND] (docs/cluster.md); --gpus and --slots-per-gpu then do not apply");
  cmd->add_option("--python", o.python,
                  "Python interpreter with torch for the workers (default: $KS_PYTHON or python3)");
  return cmd;
}

int RunServeCommand(const ServeCommandOptions& o) {
  // SIGINT/SIGTERM are taken with sigwait below; block them before any thread starts so no
  // other thread gets them (workers get a clean mask from Subprocess).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client that hangs up mid-response must not end the service

  RewardServiceOptions service_options;
  Result<RewardShape> shape = ParseRewardShape(o.reward);
  if (!shape.ok()) return UsageError(shape.status().message());
  service_options.reward.shape = *shape;
  service_options.reward.floor = o.reward_floor;
  service_options.reward.clip =
      o.reward_clip > 0 ? o.reward_clip : std::numeric_limits<double>::infinity();
  Status valid = ValidateRewardOptions(service_options.reward);
  if (!valid.ok()) return UsageError(valid.message());
  service_options.trials = o.trials;
  service_options.tolerance = o.tolerance;
  service_options.seed = o.seed;

  Result<std::vector<int>> gpus = GpusFor(o.gpus, o.backend);
  if (!gpus.ok()) return UsageError(gpus.status().message());
  Result<EvalRunnerSetup> setup = StartEvalRunner({.queue = o.queue,
                                                   .python = o.python,
                                                   .gpus = *gpus,
                                                   .slots_per_gpu = o.slots_per_gpu,
                                                   .who = "kernelsmith serve"});
  if (!setup.ok()) return UsageError(setup.status().message());
  const nlohmann::json* hello = &setup->hello;
  Result<std::string> backend = ResolveBackend(o.backend, *hello);
  if (!backend.ok()) return UsageError(backend.status().message());
  service_options.default_backend = *backend;

  const size_t slots = setup->slots;
  ServeMetrics metrics;
  MeteredRunner metered(setup->runner.get(), &metrics);
  // A local pool takes as many evaluations at once as it has slots. The cluster's workers pull
  // from Redis and may join later, so with --queue up to --max-queue evaluations are handed to
  // it at once (and as many more wait here).
  const size_t in_flight = setup->queue != nullptr ? static_cast<size_t>(o.max_queue) : slots;
  AdmissionQueue queue(&metered,
                       {.max_queue = static_cast<size_t>(o.max_queue), .max_in_flight = in_flight});
  ParentBaselines baselines(&queue);
  RewardService service(&queue, &baselines, service_options);
  RewardServerOptions server_options;
  server_options.host = o.host;
  server_options.port = o.port;
  server_options.threads = o.threads > 0
                               ? o.threads
                               : static_cast<int>(std::clamp<size_t>(
                                     static_cast<size_t>(o.max_queue) + in_flight + 8, 16, 512));
  server_options.max_body_bytes = static_cast<size_t>(o.max_body_mb * 1024 * 1024);
  server_options.request_timeout_s = o.request_timeout_s;
  server_options.hello = *hello;
  server_options.slots = slots;
  if (setup->queue != nullptr) server_options.extra_metrics = ClusterMetrics(setup->queue->url());
  RewardServer server(&service, &queue, &baselines, &metrics, server_options);
  Status started = server.Start();
  if (!started.ok()) return UsageError(started.message());

  std::string device = hello->value("device", nlohmann::json::object()).value("name", "");
  fmt::print(
      "kernelsmith serve: listening on http://{}:{} (backend {}, {} worker slot(s){}, "
      "max queue {}, reward {})\n",
      o.host, server.port(), *backend, slots, device.empty() ? "" : " on " + device, o.max_queue,
      o.reward);
  std::fflush(stdout);

  int sig = 0;
  sigwait(&signals, &sig);
  AdmissionStats s = queue.stats();
  fmt::print(
      "kernelsmith serve: {} received; stopping ({} queued evaluation(s) cancelled, "
      "waiting for {} running)\n",
      sig == SIGINT ? "SIGINT" : "SIGTERM", s.queued, s.in_flight);
  std::fflush(stdout);
  server.Stop();     // waiting requests answer 503; no new ones
  queue.Shutdown();  // cancels what is queued, waits for what runs
  setup->runner->Shutdown();
  fmt::print("kernelsmith serve: stopped\n");
  return kExitOk;
}

}  // namespace ks
