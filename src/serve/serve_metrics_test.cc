#include "serve/serve_metrics.h"

#include <gtest/gtest.h>

#include "serve/fake_runner_test_util.h"

namespace ks {
namespace {

TEST(ServeMetricsTest, QuantileByNearestRank) {
  EXPECT_EQ(Quantile({}, 0.5), 0);
  EXPECT_EQ(Quantile({3, 1, 2}, 0.5), 2);
  EXPECT_EQ(Quantile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.9), 9);
  EXPECT_EQ(Quantile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.99), 10);
  EXPECT_EQ(Quantile({5}, 0.0), 5);
}

TEST(ServeMetricsTest, ExposesCountersGaugesAndQuantiles) {
  ServeMetrics m;
  FakeRunner fake;
  MeteredRunner runner(&fake, &m);
  EvalRequest ok, bad;
  ok.candidate_source = "speedup=2 device_seconds=0.75 gpu_seconds=1.25";
  bad.candidate_source = "status=incorrect";
  runner.Evaluate(ok);
  runner.Evaluate(ok);
  runner.Evaluate(bad);
  m.RecordRequest("/v1/reward", 200, 0.25);
  m.RecordRequest("/v1/reward", 429, 0.001);
  m.RecordReward("ok", 1.5);
  m.RecordReward("parse_error", 0);
  AdmissionStats q;
  q.queued = 3;
  q.in_flight = 2;
  BaselineStats b;
  b.hits = 4;
  std::string text = m.Prometheus(q, 16, 2, b);
  EXPECT_NE(text.find("ks_queue_depth 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("ks_in_flight 2\n"), std::string::npos);
  EXPECT_NE(text.find("ks_evaluations_total{status=\"ok\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("ks_evaluations_total{status=\"incorrect\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("ks_evaluation_seconds{quantile=\"0.5\"}"), std::string::npos);
  EXPECT_NE(text.find("ks_evaluation_seconds_count 3\n"), std::string::npos);
  EXPECT_NE(text.find("ks_device_seconds{quantile=\"0.5\"} 0.750000\n"), std::string::npos);
  EXPECT_NE(text.find("ks_device_seconds_total 1.5\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE ks_gpu_seconds_total counter\nks_gpu_seconds_total 2.5\n"),
            std::string::npos);
  EXPECT_NE(text.find("ks_requests_total{endpoint=\"/v1/reward\",code=\"429\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("ks_request_seconds{endpoint=\"/v1/reward\",quantile=\"0.99\"} 0.250000"),
            std::string::npos);
  EXPECT_NE(text.find("ks_rewards_total{outcome=\"parse_error\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("ks_reward_sum 1.5\n"), std::string::npos);
  EXPECT_NE(text.find("ks_parent_cache_hits_total 4\n"), std::string::npos);
}

}  // namespace
}  // namespace ks
