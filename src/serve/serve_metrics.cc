#include "serve/serve_metrics.h"

#include <prometheus/client_metric.h>
#include <prometheus/text_serializer.h>

#include <chrono>
#include <sstream>
#include <utility>

namespace ks {
namespace {

// Bucket bounds (seconds): an HTTP request can be answered in a millisecond (a 429, a cached
// parent) or wait minutes for a worker; an evaluation takes from a fraction of a second (CPU)
// to minutes (a slow compile).
const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const prometheus::Histogram::BucketBoundaries b = {
      0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600};
  return b;
}

prometheus::Histogram& AddLatency(prometheus::Family<prometheus::Histogram>& family,
                                  const prometheus::Labels& labels = {}) {
  return family.Add(labels, LatencyBuckets());
}

prometheus::MetricFamily Scraped(const std::string& name, const std::string& help,
                                 prometheus::MetricType type, double value) {
  prometheus::ClientMetric m;
  if (type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  return prometheus::MetricFamily{name, help, type, {m}};
}

}  // namespace

prometheus::MetricFamily ScrapedGauge(const std::string& name, const std::string& help,
                                      double value) {
  return Scraped(name, help, prometheus::MetricType::Gauge, value);
}

prometheus::MetricFamily ScrapedCounter(const std::string& name, const std::string& help,
                                        double value) {
  return Scraped(name, help, prometheus::MetricType::Counter, value);
}

std::string PrometheusText(const std::vector<prometheus::MetricFamily>& families) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

ServeMetrics::ServeMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      evaluations_(prometheus::BuildCounter()
                       .Name("ks_evaluations_total")
                       .Help("finished evaluations by status")
                       .Register(*registry_)),
      evaluation_seconds_(AddLatency(prometheus::BuildHistogram()
                                         .Name("ks_evaluation_seconds")
                                         .Help("evaluation wall time in a worker")
                                         .Register(*registry_))),
      device_seconds_(AddLatency(prometheus::BuildHistogram()
                                     .Name("ks_device_seconds")
                                     .Help("seconds an evaluation held its device exclusively "
                                           "(the timing lease)")
                                     .Register(*registry_))),
      device_seconds_total_(prometheus::BuildCounter()
                                .Name("ks_device_seconds_total")
                                .Help("seconds evaluations held their devices exclusively")
                                .Register(*registry_)
                                .Add({})),
      gpu_seconds_total_(prometheus::BuildCounter()
                             .Name("ks_gpu_seconds_total")
                             .Help("seconds evaluations had work on their GPUs (load, "
                                   "correctness, audit, timing)")
                             .Register(*registry_)
                             .Add({})),
      requests_(prometheus::BuildCounter()
                    .Name("ks_requests_total")
                    .Help("HTTP requests by endpoint and status code")
                    .Register(*registry_)),
      request_seconds_(prometheus::BuildHistogram()
                           .Name("ks_request_seconds")
                           .Help("HTTP request latency by endpoint")
                           .Register(*registry_)),
      rewards_(prometheus::BuildCounter()
                   .Name("ks_rewards_total")
                   .Help("rewards returned, by outcome")
                   .Register(*registry_)),
      reward_sum_(prometheus::BuildGauge()
                      .Name("ks_reward_sum")
                      .Help("sum of the rewards returned")
                      .Register(*registry_)
                      .Add({})) {}

void ServeMetrics::RecordEvaluation(EvalStatus status, double seconds, double device_seconds,
                                    double gpu_seconds) {
  evaluations_.Add({{"status", EvalStatusName(status)}}).Increment();
  evaluation_seconds_.Observe(seconds);
  device_seconds_.Observe(device_seconds);
  if (device_seconds > 0) device_seconds_total_.Increment(device_seconds);
  if (gpu_seconds > 0) gpu_seconds_total_.Increment(gpu_seconds);
}

void ServeMetrics::RecordRequest(const std::string& endpoint, int http_status, double seconds) {
  requests_.Add({{"endpoint", endpoint}, {"code", std::to_string(http_status)}}).Increment();
  AddLatency(request_seconds_, {{"endpoint", endpoint}}).Observe(seconds);
}

void ServeMetrics::RecordReward(const std::string& outcome, double reward) {
  rewards_.Add({{"outcome", outcome}}).Increment();
  reward_sum_.Increment(reward);
}

std::vector<prometheus::MetricFamily> ServeMetrics::Collect(const AdmissionStats& queue,
                                                            size_t max_queue, size_t slots,
                                                            const BaselineStats& baselines) const {
  auto n = [](auto v) { return static_cast<double>(v); };
  std::vector<prometheus::MetricFamily> families = {
      ScrapedGauge("ks_up", "1 while the service accepts requests", 1),
      ScrapedGauge("ks_queue_depth", "evaluations waiting for a worker", n(queue.queued)),
      ScrapedGauge("ks_queue_capacity", "--max-queue", n(max_queue)),
      ScrapedGauge("ks_in_flight", "evaluations running in workers", n(queue.in_flight)),
      ScrapedGauge("ks_worker_slots", "evaluations that may run at once", n(slots)),
      ScrapedCounter("ks_evaluations_cancelled_total",
                     "queued evaluations taken back (client gone, deadline, shutdown)",
                     n(queue.cancelled)),
      ScrapedCounter("ks_evaluations_refused_total", "evaluations in requests refused with 429",
                     n(queue.refused)),
      ScrapedCounter("ks_parent_cache_hits_total", "parent baselines answered from the cache",
                     n(baselines.hits)),
      ScrapedCounter("ks_parent_measured_total", "parent baseline evaluations started",
                     n(baselines.measured)),
      ScrapedGauge("ks_parent_cache_entries", "parent baselines cached", n(baselines.cached)),
  };
  for (prometheus::MetricFamily& f : registry_->Collect()) families.push_back(std::move(f));
  return families;
}

std::string ServeMetrics::Prometheus(const AdmissionStats& queue, size_t max_queue, size_t slots,
                                     const BaselineStats& baselines) const {
  return PrometheusText(Collect(queue, max_queue, slots, baselines));
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
