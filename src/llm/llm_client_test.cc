// OpenAiClient against TestLlmServer over real HTTP on loopback.
#include "llm/llm_client.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/llm_test_server.h"

namespace ks {
namespace {

constexpr char kKeyVar[] = "KS_TEST_LLM_KEY";
constexpr char kKey[] = "sk-test-secret-123";

ChatRequest Hello() {
  ChatRequest r;
  r.messages = {{"system", "You write kernels."}, {"user", "Make it fast."}};
  return r;
}

class LlmClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv(kKeyVar, kKey, 1);
    auto s = TestLlmServer::Start();
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
  }

  // Small timeouts and backoffs so the suite stays fast.
  OpenAiClientOptions Options() const {
    OpenAiClientOptions o;
    o.base_url = server_->base_url();
    o.model = "qwen-test";
    o.api_key_env = kKeyVar;
    o.connect_timeout_s = 1;
    o.request_timeout_s = 2;
    o.max_attempts = 4;
    o.backoff_initial_s = 0.01;
    o.backoff_max_s = 0.05;
    return o;
  }

  std::unique_ptr<OpenAiClient> Client(const OpenAiClientOptions& o) {
    auto c = OpenAiClient::Create(o);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(*c) : nullptr;
  }

  std::unique_ptr<TestLlmServer> server_;
};

TEST_F(LlmClientTest, CompletesWithUsageTokensAndSendsTheRequest) {
  ScriptedReply reply = ScriptedReply::Completion("```python\nclass ModelNew: pass\n```");
  reply.prompt_tokens = 123;
  reply.completion_tokens = 45;
  reply.reasoning_content = "think first";
  server_->Push(reply);
  auto client = Client(Options());
  Result<ChatResponse> r = client->Complete(Hello());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->content, "```python\nclass ModelNew: pass\n```");
  EXPECT_EQ(r->reasoning_content, "think first");
  EXPECT_EQ(r->finish_reason, "stop");
  EXPECT_EQ(r->prompt_tokens, 123);
  EXPECT_EQ(r->completion_tokens, 45);
  EXPECT_EQ(r->model, "qwen-test");
  EXPECT_EQ(r->attempts, 1);
  EXPECT_GT(r->latency_s, 0);

  auto reqs = server_->requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].path, "/v1/chat/completions");
  EXPECT_EQ(reqs[0].authorization, std::string("Bearer ") + kKey);
  auto body = nlohmann::json::parse(reqs[0].body);
  EXPECT_EQ(body["model"], "qwen-test");
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.6);
  EXPECT_DOUBLE_EQ(body["top_p"].get<double>(), 0.95);
  EXPECT_EQ(body["max_tokens"], 32768);
  ASSERT_EQ(body["messages"].size(), 2u);
  EXPECT_EQ(body["messages"][1]["content"], "Make it fast.");
  EXPECT_FALSE(body.contains("stop"));
}

TEST_F(LlmClientTest, HonoursRetryAfterOn429) {
  server_->Push(ScriptedReply::HttpError(429, "1"));
  server_->Push(ScriptedReply::Completion("ok"));
  auto client = Client(Options());  // backoff alone would wait ~10 ms
  Result<ChatResponse> r = client->Complete(Hello());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->attempts, 2);
  auto reqs = server_->requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_GE(reqs[1].received_s - reqs[0].received_s, 0.95);
}

TEST_F(LlmClientTest, RetryAfterIsCappedByOptions) {
  server_->Push(ScriptedReply::HttpError(503, "3600"));
  server_->Push(ScriptedReply::Completion("ok"));
  OpenAiClientOptions o = Options();
  o.retry_after_max_s = 0.05;
  auto t0 = std::chrono::steady_clock::now();
  Result<ChatResponse> r = Client(o)->Complete(Hello());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
}

TEST_F(LlmClientTest, RetriesServerErrorsThenSucceeds) {
  server_->Push(ScriptedReply::HttpError(500));
  server_->Push(ScriptedReply::HttpError(502));
  server_->Push(ScriptedReply::Completion("third time"));
  Result<ChatResponse> r = Client(Options())->Complete(Hello());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->content, "third time");
  EXPECT_EQ(r->attempts, 3);
  EXPECT_EQ(server_->requests().size(), 3u);
}

TEST_F(LlmClientTest, GivesUpAfterMaxAttemptsOnPersistent503) {
  server_->SetFallback(ScriptedReply::HttpError(503, "", R"({"error":{"message":"overloaded"}})"));
  OpenAiClientOptions o = Options();
  o.max_attempts = 3;
  Result<ChatResponse> r = Client(o)->Complete(Hello());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kIOError);
  EXPECT_NE(r.status().message().find("HTTP 503"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("overloaded"), std::string::npos);
  EXPECT_NE(r.status().message().find("after 3 attempts"), std::string::npos);
  EXPECT_EQ(server_->requests().size(), 3u);
}

TEST_F(LlmClientTest, Unauthorized401IsNotRetriedAndNamesTheKeyVariable) {
  server_->Push(ScriptedReply::HttpError(401, "", R"({"error":{"message":"bad key"}})"));
  Result<ChatResponse> r = Client(Options())->Complete(Hello());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  const std::string& msg = r.status().message();
  EXPECT_NE(msg.find("the endpoint rejected the API key from $KS_TEST_LLM_KEY"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("bad key"), std::string::npos);
  EXPECT_EQ(msg.find(kKey), std::string::npos) << "the key must never appear in messages";
  EXPECT_EQ(server_->requests().size(), 1u);
}

TEST_F(LlmClientTest, NotFound404NamesTheUrlAndIsNotRetried) {
  OpenAiClientOptions o = Options();
  o.base_url = server_->base_url() + "/oops";
  Result<ChatResponse> r = Client(o)->Complete(Hello());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kNotFound);
  EXPECT_NE(
      r.status().message().find("no such model or path at " + o.base_url + "/chat/completions"),
      std::string::npos)
      << r.status().message();
  EXPECT_EQ(server_->requests().size(), 1u);
}

TEST_F(LlmClientTest, BadRequest400IsNotRetried) {
  server_->Push(ScriptedReply::HttpError(
      400, "", R"({"error":{"message":"temperature must be at most 2"}})"));
  Result<ChatResponse> r = Client(Options())->Complete(Hello());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("temperature must be at most 2"), std::string::npos);
  EXPECT_EQ(server_->requests().size(), 1u);
}

TEST_F(LlmClientTest, TimeoutIsRetried) {
  server_->Push(ScriptedReply::Completion("too late", /*delay_s=*/1.5));
  server_->Push(ScriptedReply::Completion("in time"));
  OpenAiClientOptions o = Options();
  o.request_timeout_s = 0.3;
  Result<ChatResponse> r = Client(o)->Complete(Hello());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->content, "in time");
  EXPECT_EQ(r->attempts, 2);
  EXPECT_LT(r->latency_s, 1.2) << "the first attempt must be cut at the request timeout";
}

TEST_F(LlmClientTest, PersistentTimeoutIsATimeoutStatus) {
  server_->SetFallback(ScriptedReply::Completion("never", /*delay_s=*/1.0));
  OpenAiClientOptions o = Options();
  o.request_timeout_s = 0.2;
  o.max_attempts = 2;
  Result<ChatResponse> r = Client(o)->Complete(Hello());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kTimeout) << r.status().ToString();
  EXPECT_NE(r.status().message().find("within 0.2 s"), std::string::npos) << r.status().message();
}

TEST_F(LlmClientTest, TruncatedJsonIsAProtocolErrorQuotingTheBody) {
  server_->Push(ScriptedReply::TruncatedJson());
  Result<ChatResponse> r = Client(Options())->Complete(Hello());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kProtocol);
  EXPECT_NE(r.status().message().find("not valid JSON"), std::string::npos);
  EXPECT_NE(r.status().message().find("\"{\"choices\":[{"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(server_->requests().size(), 1u);
}

TEST_F(LlmClientTest, MalformedJsonIsAProtocolErrorAndNotRetried) {
  server_->Push(ScriptedReply::RawBody("<html><body>502 Bad Gateway</body></html>"));
  server_->Push(ScriptedReply::RawBody("{\"choices\": [{\"message\": \"not an object\"}]}"));
  server_->Push(ScriptedReply::RawBody("{\"choices\": [{\"message\": {\"content\": 42}}]}"));
  auto client = Client(Options());
  Result<ChatResponse> html = client->Complete(Hello());
  ASSERT_FALSE(html.ok());
  EXPECT_EQ(html.status().code(), Status::Code::kProtocol);
  EXPECT_NE(html.status().message().find("not valid JSON"), std::string::npos);
  EXPECT_NE(html.status().message().find("\"<html><body>502 Bad Gateway"), std::string::npos)
      << html.status().message();
  Result<ChatResponse> shape = client->Complete(Hello());
  ASSERT_FALSE(shape.ok());
  EXPECT_NE(shape.status().message().find("without choices[0].message"), std::string::npos)
      << shape.status().message();
  Result<ChatResponse> number = client->Complete(Hello());
  ASSERT_FALSE(number.ok());
  EXPECT_NE(number.status().message().find("empty completion"), std::string::npos)
      << number.status().message();
  EXPECT_EQ(server_->requests().size(), 3u) << "a reply that cannot be parsed is not retried";
}

TEST_F(LlmClientTest, DroppedConnectionIsRetried) {
  server_->Push(ScriptedReply::DropConnection());
  server_->Push(ScriptedReply::Completion("after the drop"));
  Result<ChatResponse> r = Client(Options())->Complete(Hello());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->content, "after the drop");
  EXPECT_EQ(r->attempts, 2);
}

TEST_F(LlmClientTest, EmptyCompletionIsAnError) {
  ScriptedReply empty = ScriptedReply::Completion("  \n");
  empty.finish_reason = "length";
  server_->Push(empty);
  Result<ChatResponse> r = Client(Options())->Complete(Hello());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kProtocol);
  EXPECT_NE(r.status().message().find("empty completion (finish_reason=length"), std::string::npos)
      << r.status().message();
}

TEST_F(LlmClientTest, EnormousCompletionIsCapped) {
  server_->Push(ScriptedReply::Completion(std::string(50000, 'x')));
  server_->Push(ScriptedReply::Completion(std::string(50000, 'y')));
  OpenAiClientOptions o = Options();
  o.max_completion_chars = 1000;
  auto client = Client(o);
  Result<ChatResponse> r = client->Complete(Hello());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->capped);
  EXPECT_EQ(r->content.size(), 1000u);

  o.max_response_bytes = 4096;  // the body itself is too large: the transfer is aborted
  Result<ChatResponse> r2 = Client(o)->Complete(Hello());
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.status().code(), Status::Code::kProtocol);
  EXPECT_NE(r2.status().message().find("larger than 4096 bytes"), std::string::npos);
}

TEST_F(LlmClientTest, RequestsInFlightNeverExceedTheBound) {
  server_->SetFallback(ScriptedReply::Completion("slow", /*delay_s=*/0.15));
  OpenAiClientOptions o = Options();
  o.max_in_flight = 3;
  auto client = Client(o);
  std::vector<std::future<Result<ChatResponse>>> calls;
  for (int i = 0; i < 10; ++i) {
    calls.push_back(std::async(std::launch::async, [&] { return client->Complete(Hello()); }));
  }
  for (auto& f : calls) {
    Result<ChatResponse> r = f.get();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
  }
  EXPECT_EQ(server_->requests().size(), 10u);
  EXPECT_LE(server_->max_concurrent(), 3);
  EXPECT_EQ(server_->max_concurrent(), 3) << "the bound should also be reached";
}

TEST_F(LlmClientTest, ConnectionRefusedIsRetriedThenReported) {
  int port = server_->port();
  server_->Stop();
  OpenAiClientOptions o = Options();
  o.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  o.max_attempts = 2;
  Result<ChatResponse> r = Client(o)->Complete(Hello());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kIOError);
  EXPECT_NE(r.status().message().find("is the server running?"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("after 2 attempts"), std::string::npos);
}

TEST_F(LlmClientTest, CreateRejectsUnsetKeyVariableAndBadUrl) {
  OpenAiClientOptions o = Options();
  o.api_key_env = "KS_TEST_LLM_KEY_THAT_IS_NOT_SET";
  unsetenv(o.api_key_env.c_str());
  auto c = OpenAiClient::Create(o);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("$KS_TEST_LLM_KEY_THAT_IS_NOT_SET is unset"),
            std::string::npos);
  o = Options();
  o.base_url = "localhost:8000/v1";
  EXPECT_FALSE(OpenAiClient::Create(o).ok());
}

}  // namespace
}  // namespace ks
