#include "llm/context_budget.h"

#include <gtest/gtest.h>

#include <string>

#include "llm/token_estimate.h"

namespace ks {
namespace {

TEST(ContextBudgetTest, EstimatesTokensConservatively) {
  std::vector<ChatMessage> m = {{"system", std::string(300, 'x')}, {"user", "ab"}};
  EXPECT_EQ(EstimatePromptTokens(m), 100 + 8 + 1 + 8);
  EXPECT_EQ(EstimatePromptTokens({}), 0);
}

TEST(ContextBudgetTest, OneTypicalAndOneUpperTokenEstimate) {
  EXPECT_EQ(EstimateTokens(""), 0);
  EXPECT_EQ(EstimateTokens("abcde"), 2);      // 4 bytes a token, rounded up
  EXPECT_EQ(EstimateTokensUpper("abcd"), 2);  // 3 bytes a token, rounded up
  EXPECT_GE(EstimateTokensUpper(std::string(1000, 'x')), EstimateTokens(std::string(1000, 'x')));
}

TEST(ContextBudgetTest, ReadsTheContextAServerReports) {
  std::string vllm =
      R"({"object":"list","data":[{"id":"a","max_model_len":8192},{"id":"b","max_model_len":32768}]})";
  EXPECT_EQ(ContextFromModels(vllm, "b"), 32768);
  EXPECT_EQ(ContextFromModels(vllm, "c"), std::nullopt);  // several listed, none of that name
  EXPECT_EQ(ContextFromModels(R"({"data":[{"id":"x","context_length":4096}]})", "served-as-y"),
            4096);  // the only model listed
  EXPECT_EQ(ContextFromModels(R"({"data":[{"id":"gpt"}]})", "gpt"), std::nullopt);  // OpenAI
  EXPECT_EQ(ContextFromModels("not json", "a"), std::nullopt);
}

TEST(ContextBudgetTest, RecognisesContextRejections) {
  auto vllm = ParseContextExceeded(
      R"({"message":"This model's maximum context length is 32768 tokens. However, you requested 40000 tokens (7232 in the messages, 32768 in the completion)."})");
  ASSERT_TRUE(vllm);
  EXPECT_EQ(vllm->context, 32768);
  EXPECT_EQ(vllm->prompt_tokens, 7232);
  auto openai = ParseContextExceeded(
      R"({"error":{"code":"context_length_exceeded","message":"Input too long"}})");
  ASSERT_TRUE(openai);
  EXPECT_EQ(openai->context, 0);
  EXPECT_FALSE(openai->prompt_tokens);
  EXPECT_FALSE(ParseContextExceeded(R"({"message":"temperature must be <= 2"})"));
}

TEST(ContextBudgetTest, FitsMaxTokensIntoWhatThePromptLeaves) {
  EXPECT_EQ(*FitMaxTokens(32768, 32768, 8000), 24768);
  EXPECT_EQ(*FitMaxTokens(4096, 131072, 8000), 4096);
  Result<int> none = FitMaxTokens(32768, 8192, 7800);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("--max-model-len"), std::string::npos);
}

}  // namespace
}  // namespace ks
