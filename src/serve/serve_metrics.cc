#include "serve/serve_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ks {
namespace {

void Push(std::deque<double>& window, double value) {
  window.push_back(value);
  if (window.size() > ServeMetrics::kWindow) window.pop_front();
}

constexpr double kQuantiles[] = {0.5, 0.9, 0.99};

}  // namespace

double Quantile(std::vector<double> samples, double q) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  double rank = std::ceil(q * static_cast<double>(samples.size()));
  size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return samples[std::min(index, samples.size() - 1)];
}

void ServeMetrics::RecordEvaluation(EvalStatus status, double seconds, double device_seconds,
                                    double gpu_seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  ++evaluations_[EvalStatusName(status)];
  Push(evaluation_seconds_, seconds);
  Push(device_seconds_, device_seconds);
  device_seconds_sum_ += device_seconds;
  gpu_seconds_sum_ += gpu_seconds;
}

void ServeMetrics::RecordRequest(const std::string& endpoint, int http_status, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{endpoint, http_status}];
  Push(request_seconds_[endpoint], seconds);
}

void ServeMetrics::RecordReward(const std::string& outcome, double reward) {
  std::lock_guard<std::mutex> lock(mu_);
  ++rewards_[outcome];
  reward_sum_ += reward;
}

std::string ServeMetrics::Prometheus(const AdmissionStats& queue, size_t max_queue, size_t slots,
                                     const BaselineStats& baselines) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  auto gauge = [&](const char* name, const char* help, double value) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} gauge\n{0} {2}\n", name, help, value);
  };
  auto counter = [&](const char* name, const char* help, double value) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} counter\n{0} {2}\n", name, help, value);
  };
  gauge("ks_up", "1 while the service accepts requests", 1);
  gauge("ks_queue_depth", "evaluations waiting for a worker", static_cast<double>(queue.queued));
  gauge("ks_queue_capacity", "--max-queue", static_cast<double>(max_queue));
  gauge("ks_in_flight", "evaluations running in workers", static_cast<double>(queue.in_flight));
  gauge("ks_worker_slots", "evaluations that may run at once", static_cast<double>(slots));
  counter("ks_evaluations_cancelled_total", "queued evaluations taken back (client gone, "
          "deadline, shutdown)", static_cast<double>(queue.cancelled));
  counter("ks_evaluations_refused_total", "evaluations in requests refused with 429",
          static_cast<double>(queue.refused));

  out += "# HELP ks_evaluations_total finished evaluations by status\n"
         "# TYPE ks_evaluations_total counter\n";
  for (const auto& [status, n] : evaluations_) {
    out += fmt::format("ks_evaluations_total{{status=\"{}\"}} {}\n", status, n);
  }
  std::vector<double> eval(evaluation_seconds_.begin(), evaluation_seconds_.end());
  out += "# HELP ks_evaluation_seconds evaluation wall time in a worker (recent window)\n"
         "# TYPE ks_evaluation_seconds summary\n";
  for (double q : kQuantiles) {
    out += fmt::format("ks_evaluation_seconds{{quantile=\"{}\"}} {:.6f}\n", q, Quantile(eval, q));
  }
  out += fmt::format("ks_evaluation_seconds_count {}\n", eval.size());
  std::vector<double> held(device_seconds_.begin(), device_seconds_.end());
  out += "# HELP ks_device_seconds seconds an evaluation held its device exclusively (the "
         "timing lease; recent window)\n"
         "# TYPE ks_device_seconds summary\n";
  for (double q : kQuantiles) {
    out += fmt::format("ks_device_seconds{{quantile=\"{}\"}} {:.6f}\n", q, Quantile(held, q));
  }
  out += fmt::format("ks_device_seconds_count {}\n", held.size());
  counter("ks_device_seconds_total", "seconds evaluations held their devices exclusively",
          device_seconds_sum_);
  counter("ks_gpu_seconds_total", "seconds evaluations had work on their GPUs (load, "
          "correctness, audit, timing)", gpu_seconds_sum_);

  out += "# HELP ks_requests_total HTTP requests by endpoint and status code\n"
         "# TYPE ks_requests_total counter\n";
  for (const auto& [key, n] : requests_) {
    out += fmt::format("ks_requests_total{{endpoint=\"{}\",code=\"{}\"}} {}\n", key.first,
                       key.second, n);
  }
  out += "# HELP ks_request_seconds HTTP request latency (recent window)\n"
         "# TYPE ks_request_seconds summary\n";
  for (const auto& [endpoint, window] : request_seconds_) {
    std::vector<double> v(window.begin(), window.end());
    for (double q : kQuantiles) {
      out += fmt::format("ks_request_seconds{{endpoint=\"{}\",quantile=\"{}\"}} {:.6f}\n",
                         endpoint, q, Quantile(v, q));
    }
  }
  out += "# HELP ks_rewards_total rewards returned, by outcome\n"
         "# TYPE ks_rewards_total counter\n";
  for (const auto& [outcome, n] : rewards_) {
    out += fmt::format("ks_rewards_total{{outcome=\"{}\"}} {}\n", outcome, n);
  }
  counter("ks_reward_sum", "sum of the rewards returned", reward_sum_);
  counter("ks_parent_cache_hits_total", "parent baselines answered from the cache",
          static_cast<double>(baselines.hits));
  counter("ks_parent_measured_total", "parent baseline evaluations started",
          static_cast<double>(baselines.measured));
  gauge("ks_parent_cache_entries", "parent baselines cached", static_cast<double>(baselines.cached));
  return out;
}

void MeteredRunner::Submit(EvalRequest request, Callback done) {
  auto start = std::chrono::steady_clock::now();
  inner_->Submit(std::move(request), [this, start, done = std::move(done)](EvalResult r) {
    metrics_->RecordEvaluation(
        r.status, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
        r.device_seconds, r.gpu_seconds);
    done(std::move(r));
  });
}

}  // namespace ks
