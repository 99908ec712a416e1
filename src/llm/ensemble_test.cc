#include "llm/ensemble.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "testing/llm_test_server.h"

namespace ks {
namespace {

// Answers with its name, or fails while `fail` is set; counts calls.
class FakeClient final : public LlmClient {
 public:
  explicit FakeClient(std::string name) : name_(std::move(name)) {}
  Result<ChatResponse> Complete(const ChatRequest&) override {
    ++calls;
    if (fail) return Status::IOError("cannot get a reply from " + name_ + ": refused");
    ChatResponse r;
    r.content = name_;
    return r;
  }
  std::string Endpoint() const override { return "http://" + name_ + "/v1"; }

  std::atomic<int> calls{0};
  std::atomic<bool> fail{false};

 private:
  std::string name_;
};

LlmEnsembleOptions Seed(uint64_t seed, int max_failures = 5) {
  LlmEnsembleOptions o;
  o.seed = seed;
  o.max_consecutive_failures = max_failures;
  return o;
}

ChatRequest Hello() {
  ChatRequest r;
  r.messages = {{"user", "hi"}};
  return r;
}

TEST(LlmDeadEndpointTest, ConnectionRefusedStopsAfterNAttemptsWithoutSpinning) {
  auto server = TestLlmServer::Start();
  ASSERT_TRUE(server.ok());
  const std::string url = (*server)->base_url();
  (*server)->Stop();  // the port is now closed: connection refused

  OpenAiClientOptions o;
  o.base_url = url;
  o.model = "m";
  o.max_attempts = 1;
  o.connect_timeout_s = 1;
  o.request_timeout_s = 1;
  auto client = OpenAiClient::Create(o);
  ASSERT_TRUE(client.ok());
  DeadEndpointGuard guard(std::shared_ptr<LlmClient>(std::move(*client)), 3);
  for (int i = 0; i < 3; ++i) {
    Result<ChatResponse> r = guard.Complete(Hello());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message().find("unreachable after"), std::string::npos)
        << "call " << i << " should still try the network";
  }
  EXPECT_TRUE(guard.dead());
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 100; ++i) {
    Result<ChatResponse> r = guard.Complete(Hello());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Status::Code::kIOError);
    EXPECT_NE(r.status().message().find("LLM endpoint " + url + " unreachable after 3 attempts: "),
              std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find("check --llm-url"), std::string::npos);
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0.05);
}

TEST(LlmDeadEndpointTest, SuccessResetsTheCountAndDeadEndpointIsNotCalledAgain) {
  auto fake = std::make_shared<FakeClient>("a");
  DeadEndpointGuard guard(fake, 3);
  fake->fail = true;
  EXPECT_FALSE(guard.Complete(Hello()).ok());
  EXPECT_FALSE(guard.Complete(Hello()).ok());
  EXPECT_TRUE(guard.GaveUp().ok());
  fake->fail = false;
  EXPECT_TRUE(guard.Complete(Hello()).ok());  // resets
  fake->fail = true;
  EXPECT_FALSE(guard.Complete(Hello()).ok());
  EXPECT_FALSE(guard.Complete(Hello()).ok());
  EXPECT_FALSE(guard.dead()) << "only 2 consecutive failures since the success";
  EXPECT_FALSE(guard.Complete(Hello()).ok());
  EXPECT_TRUE(guard.dead());
  EXPECT_EQ(guard.GaveUp().message(), guard.dead_status().message());
  EXPECT_EQ(fake->calls.load(), 6);
  fake->fail = false;
  EXPECT_FALSE(guard.Complete(Hello()).ok()) << "a dead endpoint stays dead";
  EXPECT_EQ(fake->calls.load(), 6) << "a dead endpoint is not called";
  EXPECT_NE(guard.dead_status().message().find("refused"), std::string::npos)
      << "the last error is part of the message";
}

TEST(LlmEnsembleTest, PicksFollowWeightsAndTheSeed) {
  auto a = std::make_shared<FakeClient>("a");
  auto b = std::make_shared<FakeClient>("b");
  auto c = std::make_shared<FakeClient>("c");
  auto e = LlmEnsemble::Create({{a, 1}, {b, 3}, {c, 6}}, Seed(42));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  const int n = 20000;
  std::vector<int> counts(3, 0);
  std::vector<int> first_picks;
  for (int i = 0; i < n; ++i) {
    int k = (*e)->PickMember();
    ASSERT_GE(k, 0);
    ++counts[static_cast<size_t>(k)];
    if (i < 50) first_picks.push_back(k);
  }
  EXPECT_NEAR(counts[0] / double(n), 0.1, 0.015);
  EXPECT_NEAR(counts[1] / double(n), 0.3, 0.015);
  EXPECT_NEAR(counts[2] / double(n), 0.6, 0.015);

  auto again = LlmEnsemble::Create({{a, 1}, {b, 3}, {c, 6}}, Seed(42));
  ASSERT_TRUE(again.ok());
  for (int k : first_picks) EXPECT_EQ((*again)->PickMember(), k) << "same seed, same picks";

  for (int i = 0; i < 100; ++i) ASSERT_TRUE((*e)->Complete(Hello()).ok());
  EXPECT_EQ(a->calls + b->calls + c->calls, 100);
  EXPECT_GT(c->calls.load(), a->calls.load());
}

TEST(LlmEnsembleTest, SkipsDeadMembersAndReportsWhenAllAreDead) {
  auto a = std::make_shared<FakeClient>("a");
  auto b = std::make_shared<FakeClient>("b");
  auto e = LlmEnsemble::Create({{a, 1}, {b, 1}}, Seed(7, 2));
  ASSERT_TRUE(e.ok());
  a->fail = true;
  while (a->calls < 2) (*e)->Complete(Hello());  // a dies after 2 failures in a row
  for (int i = 0; i < 50; ++i) {
    Result<ChatResponse> r = (*e)->Complete(Hello());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->content, "b");
  }
  EXPECT_EQ(a->calls.load(), 2);
  EXPECT_TRUE((*e)->GaveUp().ok()) << "b is still alive";
  b->fail = true;
  (*e)->Complete(Hello());
  (*e)->Complete(Hello());
  EXPECT_FALSE((*e)->GaveUp().ok()) << "every member is dead: callers can stop";
  Result<ChatResponse> r = (*e)->Complete(Hello());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), (*e)->GaveUp().message());
  EXPECT_NE(r.status().message().find("all 2 LLM endpoints are dead"), std::string::npos);
  EXPECT_NE(r.status().message().find("http://a/v1 unreachable after 2 attempts"),
            std::string::npos)
      << r.status().message();
}

TEST(LlmEnsembleTest, RejectsBadWeights) {
  auto a = std::make_shared<FakeClient>("a");
  EXPECT_FALSE(LlmEnsemble::Create({}).ok());
  EXPECT_FALSE(LlmEnsemble::Create({{a, 0}}).ok());
  EXPECT_FALSE(LlmEnsemble::Create({{a, -1}}).ok());
  EXPECT_FALSE(LlmEnsemble::Create({{nullptr, 1}}).ok());
}

}  // namespace
}  // namespace ks
