#include "llm/openai_wire.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace ks {
namespace {

TEST(LlmWireTest, ParsesRetryAfterSecondsOnly) {
  EXPECT_EQ(ParseRetryAfter(" 3\r\n"), 3.0);
  EXPECT_EQ(ParseRetryAfter("0.5"), 0.5);
  EXPECT_FALSE(ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT").has_value());
  EXPECT_FALSE(ParseRetryAfter("-1").has_value());
  EXPECT_FALSE(ParseRetryAfter("").has_value());
}

TEST(LlmWireTest, ErrorBodiesGiveTheServersWords) {
  EXPECT_EQ(ErrorBodyMessage(R"({"error":{"message":"model not loaded"}})"), "model not loaded");
  EXPECT_EQ(ErrorBodyMessage(R"({"detail":"Not Found"})"), "Not Found");
  EXPECT_EQ(ErrorBodyMessage("<html>bad gateway</html>"), "body \"<html>bad gateway</html>\"");
  EXPECT_EQ(ErrorBodyMessage(std::string(300, 'x')).size(),
            std::string("body \"\"...").size() + 200);
}

TEST(LlmWireTest, ReadsReasoningFieldAndRejectsNullContent) {
  Result<ChatResponse> r = ParseChatResponse(
      R"({"model":"m","choices":[{"message":{"content":"hi","reasoning":"hmm"},
          "finish_reason":"stop"}]})",
      100, "u");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->reasoning_content, "hmm");
  EXPECT_EQ(r->prompt_tokens, 0) << "no usage reported";
  EXPECT_FALSE(r->usage_reported);
  Result<ChatResponse> with_usage = ParseChatResponse(
      R"({"choices":[{"message":{"content":"hi"}}],
          "usage":{"prompt_tokens":12,"completion_tokens":3}})",
      100, "u");
  ASSERT_TRUE(with_usage.ok());
  EXPECT_TRUE(with_usage->usage_reported);
  EXPECT_EQ(with_usage->prompt_tokens, 12);
  EXPECT_EQ(with_usage->completion_tokens, 3);
  Result<ChatResponse> null_content = ParseChatResponse(
      R"({"choices":[{"message":{"content":null},"finish_reason":"length"}]})", 100, "u");
  ASSERT_FALSE(null_content.ok());
  EXPECT_NE(null_content.status().message().find("empty completion"), std::string::npos);
  Result<ChatResponse> not_chat = ParseChatResponse(R"({"object":"list","data":[]})", 100, "u");
  ASSERT_FALSE(not_chat.ok());
  EXPECT_EQ(not_chat.status().code(), Status::Code::kProtocol);
}

TEST(LlmWireTest, ReasoningModelParameterForms) {
  EXPECT_EQ(
      ParseParamRejection(R"({"error":{"message":"Unsupported parameter: 'max_tokens' is not )"
                          R"(supported with this model. Use 'max_completion_tokens' instead."}})"),
      ParamRejection::kMaxTokens);
  EXPECT_EQ(ParseParamRejection(R"({"error":{"message":"Unsupported value: 'temperature' does not )"
                                R"(support 0.6 with this model."}})"),
            ParamRejection::kSampling);
  EXPECT_EQ(ParseParamRejection(R"({"error":{"message":"bad request"}})"), ParamRejection::kNone);
  ChatRequest r;
  r.messages = {{"user", "hi"}};
  r.max_tokens = 100;
  r.max_completion_tokens = true;
  r.default_sampling = true;
  nlohmann::json body = nlohmann::json::parse(BuildChatRequestBody(r, "o3"));
  EXPECT_EQ(body["max_completion_tokens"], 100);
  EXPECT_FALSE(body.contains("max_tokens") || body.contains("temperature") ||
               body.contains("top_p"));
}

}  // namespace
}  // namespace ks
