// RewardServer: the HTTP face of the reward service (docs/training.md).
//
//   POST /v1/evaluate   problem + candidate source → EvalResult
//   POST /v1/reward     [{completion, ground_truth}] → rewards and per-item details
//   POST /get_reward    OpenRLHF's remote reward model: {query, prompts, labels} →
//                       {rewards, scores, extra_logs}
//   GET  /healthz       liveness, queue and device
//   GET  /metrics       Prometheus text
//
// Errors are JSON {"error": {"message", "type"}}: 400 malformed or invalid body (the message
// names the field), 404 unknown route, 413 body over the limit or a batch larger than the
// queue, 429 queue full (with Retry-After), 503 shutting down, 504 deadline passed, 500 a
// defect. Handlers never throw.
// Thread-safety: Start, Stop and port may be called from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "core/status.h"
#include "serve/reward_service.h"
#include "serve/serve_metrics.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace ks {

struct RewardServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                            // 0: any free port (see port())
  int threads = 32;                           // HTTP handler threads (each waits on one call)
  size_t max_body_bytes = 64 * 1024 * 1024;   // larger bodies get 413
  double request_timeout_s = 900;             // deadline of a call that names no timeout_s
  nlohmann::json hello = nlohmann::json::object();  // the worker's hello (device, backends)
  size_t slots = 1;                           // evaluations that may run at once
  // More metric families for /metrics (the cluster's figures when evaluating on a cluster);
  // called on a handler thread. Empty: none.
  std::function<std::vector<prometheus::MetricFamily>()> extra_metrics;
};

class RewardServer {
 public:
  // The pieces must outlive the server.
  RewardServer(RewardService* service, AdmissionQueue* queue, ParentBaselines* baselines,
               ServeMetrics* metrics, RewardServerOptions options);
  ~RewardServer();  // Stop()

  // Binds host:port and starts serving on a background thread. IOError naming the address when
  // it cannot bind (in use, no permission).
  Status Start();
  int port() const { return port_; }
  // Waiting calls end with 503, the listener closes, handler threads are joined. Idempotent.
  void Stop();

 private:
  using Body = std::function<void(const httplib::Request&, httplib::Response&)>;
  void Route(const std::string& endpoint, const httplib::Request& req, httplib::Response& res,
             const Body& body);
  WaitControl WaitFor(const httplib::Request& req, std::optional<double> timeout_s) const;
  // Answers a call that did not finish; false when `o` is kDone.
  bool Unfinished(CallOutcome o, size_t evaluations, httplib::Response& res) const;
  Status BackendServed(const std::string& backend) const;

  void Evaluate(const httplib::Request& req, httplib::Response& res);
  void Reward(const httplib::Request& req, httplib::Response& res);
  void OpenRlhf(const httplib::Request& req, httplib::Response& res);
  void Health(httplib::Response& res) const;

  RewardService* const service_;
  AdmissionQueue* const queue_;
  ParentBaselines* const baselines_;
  ServeMetrics* const metrics_;
  const RewardServerOptions options_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
};

}  // namespace ks
