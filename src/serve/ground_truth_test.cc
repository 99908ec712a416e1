#include "serve/ground_truth.h"

#include <gtest/gtest.h>

namespace ks {
namespace {

using nlohmann::json;

TEST(GroundTruthTest, ParsesTheExportedJsonString) {
  json gt = {{"problem_id", "level1/23_Softmax"},
             {"reference_code", "class Model: ..."},
             {"parent_code", "# EVOLVE-BLOCK-START\nx = 1\n# EVOLVE-BLOCK-END\n"},
             {"parent_speedup", 1.5},
             {"parent_runtime_us", 12.5},
             {"backend", "triton"}};
  Result<GroundTruth> t = ParseGroundTruth(json(gt.dump()));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->problem_id, "level1/23_Softmax");
  EXPECT_EQ(t->problem_path, "level1/23_Softmax");
  EXPECT_EQ(t->backend, "triton");
  EXPECT_EQ(*t->parent_speedup, 1.5);
  EXPECT_EQ(*t->parent_runtime_us, 12.5);
  EXPECT_EQ(t->reference_code, "class Model: ...");
}

TEST(GroundTruthTest, AcceptsAnObjectAndAliases) {
  json gt = {{"task_id", 7}, {"reference", "R"}, {"parent_code", "P"}, {"parent_us", 3}};
  Result<GroundTruth> t = ParseGroundTruth(gt);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->problem_id, "7");
  EXPECT_EQ(*t->parent_runtime_us, 3.0);
  EXPECT_FALSE(t->parent_speedup.has_value());
  EXPECT_TRUE(t->backend.empty());
}

TEST(GroundTruthTest, ErrorsNameTheKey) {
  Result<GroundTruth> missing = ParseGroundTruth(json{{"reference_code", "R"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("\"parent_code\""), std::string::npos);
  Result<GroundTruth> typed =
      ParseGroundTruth(json{{"reference_code", "R"}, {"parent_code", "P"}, {"parent_speedup", "x"}});
  ASSERT_FALSE(typed.ok());
  EXPECT_NE(typed.status().message().find("parent_speedup"), std::string::npos);
  Result<GroundTruth> translation =
      ParseGroundTruth(json{{"reference_code", "R"}, {"parent_code", ""}});
  ASSERT_TRUE(translation.ok()) << translation.status().message();
  EXPECT_TRUE(translation->parent_code.empty());
  EXPECT_FALSE(ParseGroundTruth(json("{not json")).ok());
  EXPECT_FALSE(ParseGroundTruth(json::array()).ok());
  Result<GroundTruth> backend =
      ParseGroundTruth(json{{"reference_code", "R"}, {"parent_code", "P"}, {"backend", "rocm"}});
  ASSERT_FALSE(backend.ok());
  EXPECT_NE(backend.status().message().find("rocm"), std::string::npos);
}

}  // namespace
}  // namespace ks
