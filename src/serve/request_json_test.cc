#include "serve/request_json.h"

#include <gtest/gtest.h>

namespace ks {
namespace {

using nlohmann::json;

json Truth() {
  return {{"problem_id", "p1"}, {"reference_code", "R"}, {"parent_code", "P"}, {"backend", "cpu"}};
}

bool Mentions(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

TEST(RequestJsonTest, MalformedJsonSaysWhere) {
  Result<json> bad = ParseJsonObject("{\"items\": [1, 2,,]}");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Mentions(bad.status(), "malformed JSON at byte")) << bad.status().message();
  Result<json> array = ParseJsonObject("[1]");
  ASSERT_FALSE(array.ok());
  EXPECT_TRUE(Mentions(array.status(), "JSON object, got array"));
  EXPECT_TRUE(ParseJsonObject("{}").ok());
}

TEST(RequestJsonTest, EvaluateTakesDefaultsAndChecksFields) {
  EvalRequest defaults;
  defaults.backend = "cpu";
  defaults.trials = 3;
  Result<EvaluateCall> ok = ParseEvaluateCall(
      {{"problem_source", "R"}, {"candidate_source", "C"}, {"seed", 7}, {"timeout_s", 2.5}},
      defaults);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->request.trials, 3);
  EXPECT_EQ(ok->request.seed, 7u);
  EXPECT_EQ(ok->request.backend, "cpu");
  EXPECT_EQ(*ok->timeout_s, 2.5);
  EXPECT_TRUE(Mentions(ParseEvaluateCall({{"problem_source", "R"}}, defaults).status(),
                       "\"candidate_source\""));
  EXPECT_TRUE(Mentions(ParseEvaluateCall({{"problem_source", "R"}, {"candidate_source", "C"},
                                          {"trials", 0}},
                                         defaults)
                           .status(),
                       "\"trials\""));
  EXPECT_TRUE(Mentions(ParseEvaluateCall({{"problem_source", 3}, {"candidate_source", "C"}},
                                         defaults)
                           .status(),
                       "\"problem_source\" must be a string, got number"));
  EXPECT_TRUE(Mentions(ParseEvaluateCall({{"problem_source", "R"}, {"candidate_source", "C"},
                                          {"backend", "rocm"}},
                                         defaults)
                           .status(),
                       "\"backend\""));
}

TEST(RequestJsonTest, RewardItemsNameTheBadIndex) {
  Result<RewardCall> ok = ParseRewardCall(
      {{"items", {{{"completion", "x"}, {"ground_truth", Truth().dump()}}}}, {"include_eval", true}});
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  ASSERT_EQ(ok->items.size(), 1u);
  EXPECT_EQ(ok->items[0].truth.parent_code, "P");
  EXPECT_TRUE(ok->include_eval);
  json bad = {{"items", {{{"completion", "x"}, {"ground_truth", Truth()}},
                         {{"completion", "y"}, {"ground_truth", {{"parent_code", "P"}}}}}}};
  Status s = ParseRewardCall(bad).status();
  EXPECT_TRUE(Mentions(s, "items[1]: ground truth: missing \"reference_code\"")) << s.message();
  EXPECT_TRUE(Mentions(ParseRewardCall({{"item", 1}}).status(), "missing \"items\""));
  EXPECT_TRUE(Mentions(ParseRewardCall({{"items", {{{"ground_truth", Truth()}}}}}).status(),
                       "items[0].completion"));
}

TEST(RequestJsonTest, OpenRlhfScoresTheResponsePartOfEachQuery) {
  json body = {{"query", {"PROMPT-A response a", "PROMPT-B response b"}},
               {"prompts", {"PROMPT-A", "PROMPT-B"}},
               {"labels", {Truth().dump(), Truth().dump()}}};
  Result<RewardCall> call = ParseOpenRlhfCall(body);
  ASSERT_TRUE(call.ok()) << call.status().message();
  ASSERT_EQ(call->items.size(), 2u);
  EXPECT_EQ(call->items[0].completion, " response a");
  EXPECT_EQ(call->items[1].completion, " response b");
  json no_labels = {{"query", {"q"}}};
  EXPECT_TRUE(Mentions(ParseOpenRlhfCall(no_labels).status(), "--label_key"));
  json mismatch = {{"query", {"q", "r"}}, {"labels", {Truth().dump()}}};
  EXPECT_TRUE(Mentions(ParseOpenRlhfCall(mismatch).status(), "\"labels\" has 1 entries"));
  json bad_label = {{"query", {"q"}}, {"labels", {"{}"}}};
  EXPECT_TRUE(Mentions(ParseOpenRlhfCall(bad_label).status(), "labels[0]: ground truth"));
}

}  // namespace
}  // namespace ks
