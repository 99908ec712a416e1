#include "export/sft.h"

#include <gtest/gtest.h>

#include "export/run_inputs.h"
#include "export/test_trajectories.h"

namespace ks {
namespace {

using export_testing::ScratchDir;
using export_testing::TrajectoryWriter;
using export_testing::WriteCraftedRun;

std::vector<Trajectory> Load(const std::vector<std::string>& dirs) {
  Result<std::vector<Trajectory>> t = LoadTrajectories(dirs);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? std::move(*t) : std::vector<Trajectory>{};
}

std::vector<std::string> ProgramIds(const ExportRows& rows) {
  std::vector<std::string> ids;
  for (const nlohmann::json& r : rows.rows) ids.push_back(r["meta"]["program_id"]);
  return ids;
}

TEST(SftExportTest, DualFilteringKeepsCorrectTranslationsAndFasterRevisions) {
  ScratchDir dir;
  WriteCraftedRun(dir.File("run"));
  ExportRows out = BuildSftRows(Load({dir.File("run")}), SftOptions{});
  EXPECT_EQ(ProgramIds(out), (std::vector<std::string>{"p1", "p5", "p7"}));
  const ExportSummary& s = out.summary;
  EXPECT_EQ(s.runs, 1);
  EXPECT_EQ(s.steps_seen, 10);
  EXPECT_EQ(s.kept.at("evolution"), 2);
  EXPECT_EQ(s.kept.at("translation"), 1);
  std::map<std::string, int64_t> dropped = {
      {"seed", 1},     {"below_min_gain", 1}, {"incorrect", 1},     {"hacked", 1},
      {"no_llm_call", 1}, {"duplicate", 1},   {"over_token_cap", 1}};
  EXPECT_EQ(s.dropped, dropped);
  EXPECT_EQ(s.categories.at("level1").seen, 10);
  EXPECT_EQ(s.categories.at("level1").kept, 3);
}

TEST(SftExportTest, MinGainIsTheRatioOfChildToParentSpeedup) {
  ScratchDir dir;
  WriteCraftedRun(dir.File("run"));
  SftOptions o;
  o.min_gain = 1.3;  // p1 gains 2.0 over the seed, p7 only 3.0 / 2.5 = 1.2 over p6
  ExportRows out = BuildSftRows(Load({dir.File("run")}), o);
  EXPECT_EQ(ProgramIds(out), (std::vector<std::string>{"p1", "p5"}));
  EXPECT_EQ(out.summary.dropped.at("below_min_gain"), 3);  // p2, p7 and p8 (2.2 / 2.0)
  o.min_gain = 1.0;
  o.max_tokens = 0;  // no cap: p9 (gain 4.0 / 3.0) comes back
  out = BuildSftRows(Load({dir.File("run")}), o);
  EXPECT_EQ(ProgramIds(out), (std::vector<std::string>{"p1", "p5", "p7", "p9"}));
  const nlohmann::json& meta = out.rows[2]["meta"];
  EXPECT_DOUBLE_EQ(meta["gain"].get<double>(), 1.2);
  EXPECT_DOUBLE_EQ(meta["parent_speedup"].get<double>(), 2.5);
  EXPECT_EQ(meta["parent_id"], "p6");
  EXPECT_TRUE(out.rows[1]["meta"]["gain"].is_null());  // a translation has no parent
}

TEST(SftExportTest, RowsCarryTheExactPromptAndCompletion) {
  ScratchDir dir;
  WriteCraftedRun(dir.File("run"));
  ExportRows out = BuildSftRows(Load({dir.File("run")}), SftOptions{});
  ASSERT_FALSE(out.rows.empty());
  const nlohmann::json& row = out.rows[0];
  nlohmann::json prompt = {{{"role", "system"}, {"content", "You write fast kernels."}},
                           {{"role", "user"}, {"content", "prompt of p1"}}};
  EXPECT_EQ(row["prompt"], prompt);
  nlohmann::json completion = {{{"role", "assistant"}, {"content", "completion of p1"}}};
  EXPECT_EQ(row["completion"], completion);
  nlohmann::json messages = prompt;
  messages.push_back(completion[0]);
  EXPECT_EQ(row["messages"], messages);
  const nlohmann::json& meta = row["meta"];
  EXPECT_EQ(meta["step_kind"], "evolution");
  EXPECT_EQ(meta["level"], 1);
  EXPECT_EQ(meta["category_source"], "path");
  EXPECT_EQ(meta["problem_id"], "level1/1_Softmax");
  EXPECT_EQ(meta["backend"], "cpu");
  // No token counts stored: estimated at 4 bytes per token.
  EXPECT_TRUE(meta["tokens_estimated"].get<bool>());
  EXPECT_EQ(meta["completion_tokens"], (std::string("completion of p1").size() + 3) / 4);
}

TEST(SftExportTest, TokenStatisticsUseStoredCountsWhenPresent) {
  ScratchDir dir;
  {
    TrajectoryWriter w(dir.File("run"), "r1");
    w.Seed("s0", 1.0);
    w.LlmStep("a", "s0", EvalStatus::kOk, 2.0, "", "", 90);   // 10 + 90 tokens
    w.LlmStep("b", "a", EvalStatus::kOk, 3.0, "", "", 190);   // 10 + 190
    w.LlmStep("c", "b", EvalStatus::kOk, 4.0, "", "", 290);   // 10 + 290
  }
  ExportRows out = BuildSftRows(Load({dir.File("run")}), SftOptions{});
  nlohmann::json tokens = out.summary.ToJson()["tokens"];
  EXPECT_EQ(tokens["count"], 3);
  EXPECT_EQ(tokens["min"], 100);
  EXPECT_EQ(tokens["median"], 200.0);
  EXPECT_EQ(tokens["max"], 300);
  EXPECT_EQ(tokens["total"], 600);
  EXPECT_EQ(tokens["estimated"], 0);
  SftOptions o;
  o.max_tokens = 250;
  out = BuildSftRows(Load({dir.File("run")}), o);
  EXPECT_EQ(out.summary.dropped.at("over_token_cap"), 1);
  EXPECT_EQ(out.rows.size(), 2u);
}

TEST(SftExportTest, DuplicatesAcrossRunsAreDroppedOnce) {
  ScratchDir dir;
  WriteCraftedRun(dir.File("a/run"), "ra");
  WriteCraftedRun(dir.File("b/run"), "rb");  // the same prompts and completions
  ExportRows out = BuildSftRows(Load({dir.File("a/run"), dir.File("b/run")}), SftOptions{});
  EXPECT_EQ(out.rows.size(), 3u);
  EXPECT_EQ(out.summary.runs, 2);
  // p8 in a; p1, p5, p7, p8 and p9 in b (de-duplication comes before the token cap).
  EXPECT_EQ(out.summary.dropped.at("duplicate"), 1 + 5);
  EXPECT_EQ(out.summary.dropped.at("over_token_cap"), 1);
}

TEST(SftExportTest, BalancesAcrossDifficultyLevels) {
  ScratchDir dir;
  {
    TrajectoryWriter w(dir.File("l1/run"), "one", "level1/1_Softmax.py");
    w.Seed("s0", 1.0);
    double speed = 1.0;
    std::string parent = "s0";
    for (int i = 0; i < 6; ++i) {  // six revisions, each faster than the last
      speed += 0.5;
      std::string id = "x" + std::to_string(i);
      w.LlmStep(id, parent, EvalStatus::kOk, speed);
      parent = id;
    }
  }
  {
    TrajectoryWriter w(dir.File("l2/run"), "two", "level2/5_Gemm_Relu.py");
    w.Seed("s0", 1.0);
    w.LlmStep("y0", "s0", EvalStatus::kOk, 2.0);
  }
  std::vector<Trajectory> t = Load({dir.File("l1/run"), dir.File("l2/run")});
  ExportRows out = BuildSftRows(t, SftOptions{});  // ratio 2: level1 keeps 2 of 6
  EXPECT_EQ(out.summary.categories.at("level1").kept, 2);
  EXPECT_EQ(out.summary.categories.at("level2").kept, 1);
  EXPECT_EQ(out.summary.dropped.at("balance"), 4);
  // The best gains of level1 are kept: x0 (1.5 / 1.0) and x1 (2.0 / 1.5).
  EXPECT_EQ(ProgramIds(out), (std::vector<std::string>{"x0", "x1", "y0"}));
  SftOptions off;
  off.balance_ratio = 0;
  EXPECT_EQ(BuildSftRows(t, off).rows.size(), 7u);
}

TEST(BalanceByCategoryTest, RoundRobinOverProblemsBestFirst) {
  std::vector<BalanceItem> items = {
      {"level1", "a", 1.1}, {"level1", "a", 3.0}, {"level1", "a", 2.0}, {"level1", "b", 1.5},
      {"level1", "b", 1.2}, {"level2", "c", 1.0}};
  // cap = ceil(1.5 * 1) = 2: a's best (index 1) and b's best (index 3).
  EXPECT_EQ(BalanceByCategory(items, 1.5), (std::vector<size_t>{1, 3, 5}));
  EXPECT_EQ(BalanceByCategory(items, 3).size(), 4u);
  EXPECT_EQ(BalanceByCategory(items, 0).size(), 6u);
}

TEST(SftExportTest, EmptyExportSaysWhy) {
  ScratchDir dir;
  {
    TrajectoryWriter w(dir.File("run"), "tuned");
    w.Seed("s0", 1.0);
    w.TunerStep("t1", "s0", 1.5);
    w.TunerStep("t2", "t1", 2.0);
  }
  ExportRows out = BuildSftRows(Load({dir.File("run")}), SftOptions{});
  EXPECT_TRUE(out.rows.empty());
  std::string why = out.summary.WhyEmpty();
  EXPECT_NE(why.find("no_llm_call 2"), std::string::npos) << why;
  EXPECT_NE(why.find("--proposer llm or command"), std::string::npos) << why;
}

}  // namespace
}  // namespace ks
