#include "serve/serve_metrics.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "serve/fake_runner_test_util.h"

namespace ks {
namespace {

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string Scrape(ServeMetrics& m) {
  AdmissionStats q;
  q.queued = 3;
  q.in_flight = 2;
  BaselineStats b;
  b.hits = 4;
  return m.Prometheus(q, 16, 2, b);
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
  m.RecordReward("ok", -0.5);  // a log_ratio reward below the parent
  std::string text = Scrape(m);
  EXPECT_TRUE(Has(text,
                  "# HELP ks_queue_depth evaluations waiting for a worker\n"
                  "# TYPE ks_queue_depth gauge\nks_queue_depth 3\n"))
      << text;
  EXPECT_TRUE(Has(text, "\nks_in_flight 2\n"));
  EXPECT_TRUE(Has(text, "# TYPE ks_evaluations_total counter\n"));
  EXPECT_TRUE(Has(text, "\nks_evaluations_total{status=\"ok\"} 2\n"));
  EXPECT_TRUE(Has(text, "\nks_evaluations_total{status=\"incorrect\"} 1\n"));
  EXPECT_TRUE(Has(text, "# TYPE ks_evaluation_seconds histogram\n"));
  EXPECT_TRUE(Has(text, "\nks_evaluation_seconds_count 3\n"));
  EXPECT_TRUE(Has(text, "\nks_evaluation_seconds_bucket{le=\"+Inf\"} 3\n")) << text;
  // Buckets are cumulative: the two 0.75 s device holds are above 0.5 and within 1.
  EXPECT_TRUE(Has(text, "\nks_device_seconds_bucket{le=\"0.5\"} 1\n")) << text;
  EXPECT_TRUE(Has(text, "\nks_device_seconds_bucket{le=\"1\"} 3\n")) << text;
  EXPECT_TRUE(Has(text, "\nks_device_seconds_sum 1.5\n"));
  EXPECT_TRUE(Has(text, "\nks_device_seconds_total 1.5\n"));
  EXPECT_TRUE(Has(text, "# TYPE ks_gpu_seconds_total counter\nks_gpu_seconds_total 2.5\n"))
      << text;
  EXPECT_TRUE(Has(text, "\nks_requests_total{code=\"429\",endpoint=\"/v1/reward\"} 1\n")) << text;
  EXPECT_TRUE(Has(text, "\nks_request_seconds_bucket{endpoint=\"/v1/reward\",le=\"0.001\"} 1\n"))
      << text;
  EXPECT_TRUE(Has(text, "\nks_request_seconds_bucket{endpoint=\"/v1/reward\",le=\"0.25\"} 2\n"));
  EXPECT_TRUE(Has(text, "\nks_rewards_total{outcome=\"ok\"} 2\n"));
  EXPECT_TRUE(Has(text, "\nks_rewards_total{outcome=\"parse_error\"} 1\n"));
  EXPECT_TRUE(Has(text, "# TYPE ks_reward_sum gauge\nks_reward_sum 1\n")) << text;
  EXPECT_TRUE(Has(text, "\nks_parent_cache_hits_total 4\n"));
}

// Every line is a comment (# HELP / # TYPE) or a sample of the text exposition format, and
// every sample belongs to a family announced by a TYPE line before it; label values escape
// backslash, double quote and newline.
TEST(ServeMetricsTest, FollowsTheTextExpositionFormat) {
  ServeMetrics m;
  m.RecordRequest("/odd\"path\\with\nnewline", 400, 0.5);
  std::string text = Scrape(m);
  EXPECT_TRUE(
      Has(text, "ks_requests_total{code=\"400\",endpoint=\"/odd\\\"path\\\\with\\nnewline\"} 1\n"))
      << text;
  const std::regex comment(R"(# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) .*)");
  const std::regex type_line(
      R"(# TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge|summary|histogram|untyped))");
  // name{label="value",...} value, where a value escapes only \\, \" and \n.
  const std::string label = R"([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*")";
  const std::regex sample("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(" + label + ",?)*\\})? " +
                          R"((-?[0-9.e+-]+|NaN|[+-]Inf))");
  const std::regex le_label(R"re(.*le="([0-9.e+-]+|\+Inf)".*)re");
  std::istringstream lines(text);
  std::string line, family;
  int samples = 0;
  while (std::getline(lines, line)) {
    std::smatch match;
    if (line.rfind("# ", 0) == 0) {
      ASSERT_TRUE(std::regex_match(line, match, comment)) << line;
      if (match[1] == "TYPE") {
        ASSERT_TRUE(std::regex_match(line, type_line)) << line;
        family = match[2];
      }
      continue;
    }
    ASSERT_TRUE(std::regex_match(line, match, sample)) << line;
    std::string name = match[1];
    EXPECT_EQ(name.rfind(family, 0), 0u) << name << " after TYPE " << family;
    if (name.size() > 7 && name.substr(name.size() - 7) == "_bucket") {
      EXPECT_TRUE(std::regex_match(line, le_label)) << line;
    }
    ++samples;
  }
  EXPECT_GT(samples, 15);
}

}  // namespace
}  // namespace ks
