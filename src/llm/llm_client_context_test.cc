// OpenAiClient fitting max_tokens into the model's context, against TestLlmServer.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "llm/context_budget.h"
#include "llm/llm_client.h"
#include "testing/llm_test_server.h"

namespace ks {
namespace {

class LlmContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = TestLlmServer::Start();
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
  }

  std::unique_ptr<OpenAiClient> Client(int64_t context_tokens = 0) {
    OpenAiClientOptions o;
    o.base_url = server_->base_url();
    o.model = "qwen-test";
    o.request_timeout_s = 5;
    o.backoff_initial_s = 0.01;
    o.context_tokens = context_tokens;
    auto c = OpenAiClient::Create(o);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(*c) : nullptr;
  }

  static ChatRequest Prompt(size_t bytes) {
    ChatRequest r;
    r.messages = {{"system", "You write kernels."}, {"user", std::string(bytes, 'k')}};
    return r;  // max_tokens: the default 32768
  }

  int SentMaxTokens(size_t i) const {
    return nlohmann::json::parse(server_->requests().at(i).body)["max_tokens"].get<int>();
  }

  std::unique_ptr<TestLlmServer> server_;
};

TEST_F(LlmContextTest, AnAdvertisedContextCapsMaxTokensBeforeSending) {
  server_->SetContextLimit(8192, /*advertise=*/true);
  auto client = Client();
  ChatRequest r = Prompt(6000);
  Result<ChatResponse> a = client->Complete(r);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  int64_t expected = 8192 - EstimatePromptTokens(r.messages);
  EXPECT_EQ(a->max_tokens, expected);
  ASSERT_TRUE(client->Complete(r).ok());
  EXPECT_EQ(server_->requests().size(), 2u);  // nothing rejected
  EXPECT_EQ(SentMaxTokens(0), expected);
  EXPECT_EQ(server_->models_requests(), 1);  // asked once per model
}

TEST_F(LlmContextTest, AnUnadvertisedContextIsFittedFromTheRejectionOnce) {
  server_->SetContextLimit(8192, /*advertise=*/false);
  auto client = Client();
  Result<ChatResponse> a = client->Complete(Prompt(6000));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(server_->requests().size(), 2u);
  EXPECT_EQ(SentMaxTokens(0), 32768);
  // the server counts (6000 + 18) / 4 prompt tokens; 16 are kept free
  EXPECT_EQ(SentMaxTokens(1), 8192 - 1504 - 16);
  EXPECT_EQ(a->max_tokens, SentMaxTokens(1));
  // the context the rejection named is remembered: the next call fits before it is sent
  ChatRequest next = Prompt(6000);
  ASSERT_TRUE(client->Complete(next).ok());
  ASSERT_EQ(server_->requests().size(), 3u);
  EXPECT_EQ(SentMaxTokens(2), 8192 - EstimatePromptTokens(next.messages));
}

TEST_F(LlmContextTest, APromptThatLeavesNoRoomIsRefusedWithWhatToDo) {
  server_->SetContextLimit(4096, /*advertise=*/true);
  Result<ChatResponse> a = Client()->Complete(Prompt(12000));
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(a.status().message().find("--max-model-len"), std::string::npos);
  EXPECT_TRUE(server_->requests().empty());  // not sent
}

TEST_F(LlmContextTest, AGivenContextIsUsedWithoutAskingTheServer) {
  auto client = Client(/*context_tokens=*/16384);
  ChatRequest r = Prompt(300);
  Result<ChatResponse> a = client->Complete(r);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->max_tokens, 16384 - EstimatePromptTokens(r.messages));
  EXPECT_EQ(server_->models_requests(), 0);
}

TEST_F(LlmContextTest, ARejectionThatStillDoesNotFitSaysWhichFlagsToUse) {
  // the server's context is smaller than the one the client was told
  server_->SetContextLimit(2048, /*advertise=*/false);
  Result<ChatResponse> a = Client(/*context_tokens=*/65536)->Complete(Prompt(6000));
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("--context-tokens"), std::string::npos)
      << a.status().message();
  EXPECT_EQ(server_->requests().size(), 1u);  // 2048 - 1504 leaves too little to retry
}

TEST_F(LlmContextTest, ReasoningModelGetsMaxCompletionTokensAndItsDefaultSampling) {
  server_->SetReasoningModelParams(true);
  ScriptedReply reply = ScriptedReply::Completion("<think>plan</think>\nthe answer");
  reply.reasoning_content = "a long chain of thought";
  server_->Push(reply);
  server_->Push(ScriptedReply::Completion("second"));
  std::unique_ptr<OpenAiClient> client = Client();
  ChatRequest request = Prompt(100);
  request.max_tokens = 4096;
  Result<ChatResponse> r = client->Complete(request);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->reasoning_content, "a long chain of thought");
  EXPECT_EQ(r->attempts, 1) << "rejected forms are not transient faults";
  std::vector<RecordedRequest> sent = server_->requests();
  ASSERT_EQ(sent.size(), 3u);  // max_tokens rejected, then temperature rejected, then answered
  nlohmann::json last = nlohmann::json::parse(sent[2].body);
  EXPECT_EQ(last["max_completion_tokens"], 4096);
  EXPECT_FALSE(last.contains("max_tokens"));
  EXPECT_FALSE(last.contains("temperature"));
  // the model's form is remembered: the next call goes through at once
  ASSERT_TRUE(client->Complete(request).ok());
  EXPECT_EQ(server_->requests().size(), 4u);
}

}  // namespace
}  // namespace ks
