#include "usage/llm_usage.h"

#include <gtest/gtest.h>

#include "store/sqlite_store.h"
#include "store/test_util.h"

namespace ks {
namespace {

LlmCallRecord Call(std::optional<int64_t> prompt, std::optional<int64_t> completion,
                   std::string text, double latency, std::string error = "") {
  LlmCallRecord c;
  c.run_id = "r";
  c.request = {{"messages", {{{"role", "user"}, {"content", std::string(400, 'p')}}}}};
  c.completion = std::move(text);
  c.prompt_tokens = prompt;
  c.completion_tokens = completion;
  c.latency_s = latency;
  c.error = std::move(error);
  return c;
}

TEST(LlmUsageTest, ReportedCountsAreTakenAndMissingOnesEstimatedApart) {
  LlmUsage u;
  u.Add(Call(1000, 200, "x", 2.0));
  u.Add(Call(std::nullopt, std::nullopt, std::string(80, 'c'), 1.0));  // files/command
  u.Add(Call(std::nullopt, std::nullopt, "", 0.5, "HTTP 500"));        // failed: no tokens
  EXPECT_EQ(u.calls, 3);
  EXPECT_EQ(u.errors, 1);
  EXPECT_EQ(u.estimated_calls, 1);
  EXPECT_EQ(u.estimated_prompt_tokens, 100);  // 400 bytes at 4 a token
  EXPECT_EQ(u.estimated_completion_tokens, 20);
  EXPECT_EQ(u.prompt_tokens, 1100);
  EXPECT_EQ(u.completion_tokens, 220);
  EXPECT_EQ(u.TokenSource(), "mixed");
  EXPECT_DOUBLE_EQ(u.latency_s_total, 3.5);
}

TEST(LlmUsageTest, CostOnlyWithPrices) {
  LlmUsage u;
  u.Add(Call(2'000'000, 500'000, "x", 1));
  EXPECT_FALSE(u.CostUsd({}).has_value());
  nlohmann::json none = u.ToJson({});
  EXPECT_TRUE(none["cost_usd"].is_null());
  EXPECT_TRUE(none["prices_usd_per_mtok"].is_null());
  nlohmann::json j = u.ToJson({0.5, 2.0});
  EXPECT_DOUBLE_EQ(j["cost_usd"].get<double>(), 2.0);  // 2 * 0.5 + 0.5 * 2
  EXPECT_EQ(j["tokens"], "reported");
  EXPECT_EQ(j["prices_usd_per_mtok"]["completion"], 2.0);
}

TEST(LlmUsageTest, JsonRoundTripAndSum) {
  LlmUsage a;
  a.Add(Call(10, 5, "x", 1));
  a.Add(Call(std::nullopt, std::nullopt, "abcdefgh", 2));
  LlmUsage back = LlmUsage::FromJson(a.ToJson({}));
  EXPECT_EQ(back.ToJson({}), a.ToJson({}));
  back.Add(a);
  EXPECT_EQ(back.calls, 4);
  EXPECT_EQ(back.estimated_completion_tokens, 4);
  EXPECT_EQ(LlmUsage{}.TokenSource(), "none");
  EXPECT_EQ(LlmUsage::FromJson(nlohmann::json()).calls, 0);
}

TEST(LlmUsageTest, FormatSaysWhatIsEstimatedAndTheCost) {
  LlmUsage u;
  u.Add(Call(std::nullopt, std::nullopt, std::string(40, 'c'), 1.0));
  std::string line = FormatUsage(u, {1.0, 1.0});
  EXPECT_NE(line.find("1 call(s)"), std::string::npos) << line;
  EXPECT_NE(line.find("estimated"), std::string::npos) << line;
  EXPECT_NE(line.find("cost $"), std::string::npos) << line;
  EXPECT_EQ(FormatUsage(u, {}).find("cost"), std::string::npos);
}

TEST(LlmUsageTest, UsageOfRunReadsTheStoredCalls) {
  store_testing::ScratchDir dir;
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(dir.File("run.db"));
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->CreateRun(store_testing::MakeRun("r")).ok());
  ASSERT_TRUE((*store)->RecordLlmCall(Call(7, 3, "x", 1)).ok());
  ASSERT_TRUE((*store)->RecordLlmCall(Call(std::nullopt, std::nullopt, "abcd", 1)).ok());
  Result<LlmUsage> u = UsageOfRun(store->get(), "r");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->calls, 2);
  EXPECT_EQ(u->prompt_tokens, 107);
  EXPECT_EQ(u->estimated_calls, 1);
}

}  // namespace
}  // namespace ks
