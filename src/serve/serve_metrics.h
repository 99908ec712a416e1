// ServeMetrics: counters and latency samples of the reward service, rendered in Prometheus'
// text format for GET /metrics. MeteredRunner is the Runner decorator that feeds it every
// evaluation's status and duration.
// Thread-safety: all methods may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "eval/runner.h"
#include "serve/admission_queue.h"
#include "serve/parent_baselines.h"

namespace ks {

// The q-quantile (0 <= q <= 1) of `samples` by nearest rank; 0 for no samples.
double Quantile(std::vector<double> samples, double q);

class ServeMetrics {
 public:
  // Latency samples kept per series (the most recent ones).
  static constexpr size_t kWindow = 2048;

  // `device_seconds`: how long the evaluation held its device exclusively (timing);
  // `gpu_seconds`: how long it had work on its GPU (EvalResult::gpu_seconds).
  void RecordEvaluation(EvalStatus status, double seconds, double device_seconds = 0,
                        double gpu_seconds = 0);
  void RecordRequest(const std::string& endpoint, int http_status, double seconds);
  void RecordReward(const std::string& outcome, double reward);

  // The exposition text: ks_queue_depth, ks_in_flight, ks_evaluations_total{status},
  // ks_evaluation_seconds{quantile}, ks_device_seconds{quantile}, ks_device_seconds_total,
  // ks_gpu_seconds_total,
  // ks_requests_total{endpoint,code},
  // ks_request_seconds{endpoint,quantile}, ks_rewards_total{outcome}, ks_reward_sum, the
  // parent-baseline cache figures and ks_up.
  std::string Prometheus(const AdmissionStats& queue, size_t max_queue, size_t slots,
                         const BaselineStats& baselines) const;

 private:
  mutable std::mutex mu_;  // guards the fields below
  std::map<std::string, uint64_t> evaluations_;  // by status
  std::deque<double> evaluation_seconds_;
  std::deque<double> device_seconds_;
  double device_seconds_sum_ = 0;
  double gpu_seconds_sum_ = 0;
  std::map<std::pair<std::string, int>, uint64_t> requests_;  // (endpoint, code)
  std::map<std::string, std::deque<double>> request_seconds_;
  std::map<std::string, uint64_t> rewards_;  // by outcome
  double reward_sum_ = 0;
};

// Runner decorator: forwards to `inner` and records each result's status and wall time.
class MeteredRunner : public Runner {
 public:
  MeteredRunner(Runner* inner, ServeMetrics* metrics) : inner_(inner), metrics_(metrics) {}
  void Submit(EvalRequest request, Callback done) override;
  void Shutdown() override { inner_->Shutdown(); }

 private:
  Runner* const inner_;
  ServeMetrics* const metrics_;
};

}  // namespace ks
