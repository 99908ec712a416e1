// ServeMetrics: the reward service's figures for GET /metrics, kept in a prometheus-cpp
// Registry and written in Prometheus' text exposition format by prometheus-cpp's
// TextSerializer (escaping, HELP and TYPE lines). MeteredRunner is the Runner decorator that
// feeds it every evaluation's status and duration.
//
// Adding a figure: register a family on registry() in ServeMetrics' constructor (counters,
// gauges and summaries the service updates as things happen), or, for a value read when
// scraped, append ScrapedGauge / ScrapedCounter to the families Collect() builds. Latencies
// are histograms (exact bucket counts that add up across services; quantiles come from
// Prometheus' histogram_quantile).
// Thread-safety: all methods may be called from any thread (prometheus-cpp's metrics are).
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>
#include <vector>

#include "eval/runner.h"
#include "serve/admission_queue.h"
#include "serve/parent_baselines.h"

namespace ks {

// A one-sample gauge or counter family whose value is read when /metrics is scraped.
prometheus::MetricFamily ScrapedGauge(const std::string& name, const std::string& help,
                                      double value);
prometheus::MetricFamily ScrapedCounter(const std::string& name, const std::string& help,
                                        double value);

// The text exposition of `families` (format version 0.0.4).
std::string PrometheusText(const std::vector<prometheus::MetricFamily>& families);

class ServeMetrics {
 public:
  ServeMetrics();

  // `device_seconds`: how long the evaluation held its device exclusively (timing);
  // `gpu_seconds`: how long it had work on its GPU (EvalResult::gpu_seconds).
  void RecordEvaluation(EvalStatus status, double seconds, double device_seconds = 0,
                        double gpu_seconds = 0);
  void RecordRequest(const std::string& endpoint, int http_status, double seconds);
  void RecordReward(const std::string& outcome, double reward);

  // Where the service's metric families live.
  prometheus::Registry& registry() { return *registry_; }

  // Every family: the registry's (ks_evaluations_total{status}, ks_evaluation_seconds,
  // ks_device_seconds, ks_device_seconds_total, ks_gpu_seconds_total,
  // ks_requests_total{endpoint,code}, ks_request_seconds{endpoint}, ks_rewards_total{outcome},
  // the gauge ks_reward_sum) and the figures read now (ks_up, queue depth, capacity, in flight,
  // worker slots, cancelled and refused evaluations, the parent-baseline cache).
  std::vector<prometheus::MetricFamily> Collect(const AdmissionStats& queue, size_t max_queue,
                                                size_t slots, const BaselineStats& baselines) const;
  // Collect's families as exposition text.
  std::string Prometheus(const AdmissionStats& queue, size_t max_queue, size_t slots,
                         const BaselineStats& baselines) const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& evaluations_;
  prometheus::Histogram& evaluation_seconds_;
  prometheus::Histogram& device_seconds_;
  prometheus::Counter& device_seconds_total_;
  prometheus::Counter& gpu_seconds_total_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& request_seconds_;
  prometheus::Family<prometheus::Counter>& rewards_;
  prometheus::Gauge& reward_sum_;  // a gauge: log_ratio rewards may be negative
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
