#include "archive/program.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ks {
namespace {

TEST(ArchiveProgramTest, JsonRoundTripKeepsEveryFieldIncludingNonFinite) {
  Program p;
  p.id = "c17";
  p.parent_id = "c3";
  p.code = "class ModelNew:\n    pass\n";
  p.island = 2;
  p.generation = 5;
  p.fitness = 1.0 / 3.0;
  p.correct = true;
  p.speedup = std::numeric_limits<double>::infinity();
  p.metrics = {{"complexity", 12}, {"cv", std::nan("")}, {"neg", -0.1}};
  p.proposer = "llm:qwen";

  Result<Program> q = ProgramFromJson(nlohmann::json::parse(ProgramToJson(p).dump()));
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->id, p.id);
  EXPECT_EQ(q->parent_id, p.parent_id);
  EXPECT_EQ(q->code, p.code);
  EXPECT_EQ(q->island, 2);
  EXPECT_EQ(q->generation, 5);
  EXPECT_EQ(q->fitness, p.fitness);  // exact, not approximately
  EXPECT_TRUE(q->correct);
  ASSERT_TRUE(q->speedup.has_value());
  EXPECT_TRUE(std::isinf(*q->speedup));
  EXPECT_EQ(q->metrics.at("complexity"), 12);
  EXPECT_TRUE(std::isnan(q->metrics.at("cv")));
  EXPECT_EQ(q->metrics.at("neg"), -0.1);
  EXPECT_EQ(q->proposer, "llm:qwen");
}

TEST(ArchiveProgramTest, MissingOrMistypedFieldsAreNamed) {
  Result<Program> no_code = ProgramFromJson({{"id", "a"}});
  ASSERT_FALSE(no_code.ok());
  EXPECT_NE(no_code.status().message().find("'code'"), std::string::npos);
  Result<Program> bad_fitness = ProgramFromJson({{"id", "a"}, {"code", ""}, {"fitness", "x"}});
  ASSERT_FALSE(bad_fitness.ok());
  EXPECT_NE(bad_fitness.status().message().find("fitness"), std::string::npos);
  Result<Program> no_speedup = ProgramFromJson({{"id", "a"}, {"code", ""}, {"speedup", nullptr}});
  ASSERT_TRUE(no_speedup.ok());
  EXPECT_FALSE(no_speedup->speedup.has_value());
}

}  // namespace
}  // namespace ks
