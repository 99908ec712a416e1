// The HTTP layer on loopback with a fake Runner at the seam: real sockets, real JSON.
#include "serve/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <thread>
#include <vector>

#include "serve/fake_runner_test_util.h"

namespace ks {
namespace {

using nlohmann::json;

std::string Program(const std::string& verdict) {
  return "import torch\n# EVOLVE-BLOCK-START\n# " + verdict + "\n# EVOLVE-BLOCK-END\n";
}
std::string Rewrite(const std::string& verdict) {
  return "```python\n# EVOLVE-BLOCK-START\n# " + verdict + "\n# EVOLVE-BLOCK-END\n```";
}
std::string Truth(const std::string& parent_verdict) {
  return json({{"problem_id", "p"},
               {"reference_code", "class Model: ..."},
               {"parent_code", Program(parent_verdict)},
               {"backend", "cpu"}})
      .dump();
}

// A service stack on a free loopback port.
struct Stack {
  explicit Stack(bool auto_release, size_t max_queue = 8, size_t max_body = 1 << 20)
      : runner(auto_release),
        metered(&runner, &metrics),
        queue(&metered, {.max_queue = max_queue, .max_in_flight = 1}),
        baselines(&queue),
        service(&queue, &baselines, {}),
        server(&service, &queue, &baselines, &metrics, Options(max_body)) {
    Status s = server.Start();
    EXPECT_TRUE(s.ok()) << s.message();
  }
  ~Stack() {
    runner.ReleaseAll();
    server.Stop();
    queue.Shutdown();
  }
  static RewardServerOptions Options(size_t max_body) {
    RewardServerOptions o;
    o.port = 0;
    o.threads = 8;
    o.max_body_bytes = max_body;
    o.hello = {{"backends", {"cpu"}}, {"device", {{"kind", "cpu"}}}};
    return o;
  }
  httplib::Client Client() {
    httplib::Client c("127.0.0.1", server.port());
    c.set_read_timeout(10);
    return c;
  }
  FakeRunner runner;
  ServeMetrics metrics;
  MeteredRunner metered;
  AdmissionQueue queue;
  ParentBaselines baselines;
  RewardService service;
  RewardServer server;
};

TEST(RewardServerTest, RewardEndpointsAnswerOverHttp) {
  Stack s(/*auto_release=*/true);
  httplib::Client c = s.Client();
  json body = {{"items",
                {{{"completion", Rewrite("speedup=3")}, {"ground_truth", Truth("speedup=1.5")}},
                 {{"completion", "prose only"}, {"ground_truth", Truth("speedup=1.5")}}}}};
  auto res = c.Post("/v1/reward", body.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  json out = json::parse(res->body);
  EXPECT_EQ(out["rewards"], json({2.0, 0.0}));
  EXPECT_EQ(out["results"][0]["parent_baseline"], "interleaved");
  EXPECT_EQ(out["results"][0]["speedup_vs_parent_ci95"].size(), 2u);
  EXPECT_EQ(out["results"][1]["status"], "parse_error");
  EXPECT_NE(out["results"][1]["parse_error"].get<std::string>().find("no code block"),
            std::string::npos);

  // OpenRLHF: query = prompt + response; labels are the ground-truth strings.
  json openrlhf = {{"query", {"<user>make it fast</user>" + Rewrite("speedup=6")}},
                   {"prompts", {"<user>make it fast</user>"}},
                   {"labels", {Truth("speedup=1.5")}}};
  res = c.Post("/get_reward", openrlhf.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  out = json::parse(res->body);
  EXPECT_EQ(out["rewards"], json({4.0}));
  EXPECT_EQ(out["scores"], json({4.0}));
  EXPECT_EQ(out["extra_logs"]["correct"], json({1.0}));
  EXPECT_EQ(out["extra_logs"]["speedup_vs_parent"], json({4.0}));

  json evaluate = {{"problem_source", "class Model: ..."}, {"candidate_source", "status=incorrect"}};
  res = c.Post("/v1/evaluate", evaluate.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(json::parse(res->body)["status"], "incorrect");

  res = c.Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(res->body)["status"], "ok");
  res = c.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_NE(res->body.find("ks_requests_total{code=\"200\",endpoint=\"/v1/reward\"} 1"),
            std::string::npos)
      << res->body;
  EXPECT_NE(res->body.find("ks_evaluations_total{status=\"incorrect\"} 1"), std::string::npos);
  EXPECT_NE(res->body.find("ks_rewards_total{outcome=\"parse_error\"} 1"), std::string::npos);
}

TEST(RewardServerTest, BadRequestsGetPreciseErrors) {
  Stack s(/*auto_release=*/true, /*max_queue=*/8, /*max_body=*/4096);
  httplib::Client c = s.Client();
  auto res = c.Post("/v1/reward", "{\"items\": [", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("malformed JSON at byte"), std::string::npos) << res->body;
  res = c.Post("/v1/reward", json({{"items", {{{"completion", "x"}}}}}).dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("items[0].ground_truth"), std::string::npos) << res->body;
  res = c.Post("/get_reward", json({{"query", {"q"}}}).dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("labels"), std::string::npos);
  json cuda = {{"problem_source", "R"}, {"candidate_source", "C"}, {"backend", "cuda"}};
  res = c.Post("/v1/evaluate", cuda.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("cannot run on this service"), std::string::npos) << res->body;
  res = c.Post("/v1/evaluate", std::string(8192, ' '), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  EXPECT_NE(res->body.find("--max-body-mb"), std::string::npos) << res->body;
  res = c.Get("/nope");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_NE(res->body.find("/v1/reward"), std::string::npos);
}

TEST(RewardServerTest, FullQueueAnswers429WithRetryAfter) {
  Stack s(/*auto_release=*/false, /*max_queue=*/1);
  json one = {{"problem_source", "R"}, {"candidate_source", "speedup=2"}};
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int i = 0; i < 2; ++i) {  // one runs, one waits in the queue
    clients.emplace_back([&] {
      httplib::Client c = s.Client();
      auto res = c.Post("/v1/evaluate", one.dump(), "application/json");
      if (res && res->status == 200) ++ok;
    });
  }
  ASSERT_TRUE(s.runner.WaitPending(1));
  for (int i = 0; i < 200 && s.queue.stats().queued < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  httplib::Client c = s.Client();
  auto res = c.Post("/v1/evaluate", one.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 429) << res->body;
  EXPECT_FALSE(res->get_header_value("Retry-After").empty());
  EXPECT_NE(res->body.find("queue is full"), std::string::npos);
  s.runner.ReleaseAll();
  while (s.queue.stats().in_flight > 0 || s.queue.stats().queued > 0) s.runner.ReleaseAll();
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(ok.load(), 2);
}

TEST(RewardServerTest, DeadlineAndDisconnectTakeQueuedWorkBack) {
  Stack s(/*auto_release=*/false, /*max_queue=*/4);
  httplib::Client c = s.Client();
  json slow = {{"problem_source", "R"}, {"candidate_source", "speedup=2"}, {"timeout_s", 0.3}};
  auto res = c.Post("/v1/evaluate", slow.dump(), "application/json");  // runs, never released
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 504);
  EXPECT_NE(res->body.find("deadline"), std::string::npos);
  // A client that gives up while its evaluation is queued: the service notices and cancels.
  std::thread gone([&] {
    httplib::Client impatient = s.Client();
    impatient.set_read_timeout(0, 300000);  // 0.3 s, then it closes the connection
    json queued = {{"problem_source", "R"}, {"candidate_source", "speedup=3"}};
    impatient.Post("/v1/evaluate", queued.dump(), "application/json");
  });
  gone.join();
  bool cancelled = false;
  for (int i = 0; i < 300 && !cancelled; ++i) {
    cancelled = s.queue.stats().cancelled >= 1 && s.queue.stats().queued == 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(cancelled);
  s.runner.ReleaseAll();
  EXPECT_EQ(s.runner.submitted().size(), 1u);  // the gone client's job never ran
}

}  // namespace
}  // namespace ks
