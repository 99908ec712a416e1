#include "export/rl.h"

#include <gtest/gtest.h>

#include "export/run_inputs.h"
#include "export/test_trajectories.h"

namespace ks {
namespace {

using export_testing::kReference;
using export_testing::ScratchDir;
using export_testing::TrajectoryWriter;
using export_testing::WriteCraftedRun;

ExportRows Export(const std::string& dir, RlSelection selection) {
  Result<std::vector<Trajectory>> t = LoadTrajectories({dir});
  EXPECT_TRUE(t.ok()) << t.status().message();
  RlOptions o;
  o.selection = selection;
  return BuildRlRows(t.ok() ? *t : std::vector<Trajectory>{}, o);
}

std::vector<std::string> ProgramIds(const ExportRows& rows) {
  std::vector<std::string> ids;
  for (const nlohmann::json& r : rows.rows) ids.push_back(r["extra_info"]["program_id"]);
  return ids;
}

TEST(RlExportTest, BestSelectsTheLlmStepsThatMadeANewBest) {
  ScratchDir dir;
  WriteCraftedRun(dir.File("run"));
  ExportRows out = Export(dir.File("run"), RlSelection::kBest);
  // p1 (2.0 over the seed's 1.0), p7 (3.0 over p6's 2.5), p9 (4.0); p6 made a new best too
  // but has no prompt.
  EXPECT_EQ(ProgramIds(out), (std::vector<std::string>{"p1", "p7", "p9"}));
  EXPECT_EQ(out.summary.dropped.at("no_llm_call"), 1);
  EXPECT_EQ(out.summary.dropped.at("not_new_best"), 4);  // p2 p3 p4 p8
  EXPECT_EQ(out.summary.dropped.at("translation"), 1);   // p5
  EXPECT_EQ(out.summary.dropped.at("seed"), 1);
}

TEST(RlExportTest, BestKeepsRevisionsOnlyEvenWhenATranslationMadeANewBest) {
  ScratchDir dir;
  {
    TrajectoryWriter w(dir.File("run"), "r");
    w.LlmStep("t1", "", EvalStatus::kOk, 1.4);  // the translation: the first best of the run
    w.LlmStep("r1", "t1", EvalStatus::kOk, 2.1);
    w.LlmStep("r2", "r1", EvalStatus::kOk, 1.9);
  }
  ExportRows best = Export(dir.File("run"), RlSelection::kBest);
  EXPECT_EQ(ProgramIds(best), (std::vector<std::string>{"r1"}));
  EXPECT_EQ(best.summary.dropped.at("translation"), 1);
  EXPECT_EQ(ProgramIds(Export(dir.File("run"), RlSelection::kInitial)),
            (std::vector<std::string>{"t1"}));
}

TEST(RlExportTest, InitialAndAllSelections) {
  ScratchDir dir;
  WriteCraftedRun(dir.File("run"));
  EXPECT_EQ(ProgramIds(Export(dir.File("run"), RlSelection::kInitial)),
            (std::vector<std::string>{"p1", "p5"}));
  ExportRows all = Export(dir.File("run"), RlSelection::kAll);
  // Every LLM step, failed children included (the reward is computed anew); p8 repeats p1's
  // prompt.
  EXPECT_EQ(ProgramIds(all), (std::vector<std::string>{"p1", "p2", "p3", "p4", "p5", "p7", "p9"}));
  EXPECT_EQ(all.summary.dropped.at("duplicate"), 1);
}

TEST(RlExportTest, RowsFollowVerlLayoutWithGroundTruth) {
  ScratchDir dir;
  WriteCraftedRun(dir.File("run"));
  ExportRows out = Export(dir.File("run"), RlSelection::kBest);
  ASSERT_EQ(out.rows.size(), 3u);
  const nlohmann::json& row = out.rows[1];  // p7, child of the tuner's p6
  EXPECT_EQ(row["data_source"], "kernelsmith");
  EXPECT_EQ(row["ability"], "kernel_optimization");
  nlohmann::json prompt = {{{"role", "system"}, {"content", "You write fast kernels."}},
                           {{"role", "user"}, {"content", "prompt of p7"}}};
  EXPECT_EQ(row["prompt"], prompt);
  EXPECT_EQ(row["reward_model"]["style"], "rule");
  ASSERT_TRUE(row["reward_model"]["ground_truth"].is_string());
  EXPECT_EQ(row["label"], row["reward_model"]["ground_truth"]);
  nlohmann::json truth = nlohmann::json::parse(row["label"].get<std::string>());
  EXPECT_EQ(truth["format"], kGroundTruthFormat);
  EXPECT_EQ(truth["reference_code"], kReference);
  EXPECT_EQ(truth["parent_id"], "p6");
  EXPECT_EQ(truth["parent_code"], "# tuned p6\nclass ModelNew: pass\n");
  EXPECT_DOUBLE_EQ(truth["parent_speedup"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(truth["parent_runtime_us"].get<double>(), 40.0);  // 100 us / 2.5
  EXPECT_DOUBLE_EQ(truth["reference_runtime_us"].get<double>(), 100.0);
  EXPECT_EQ(truth["backend"], "cpu");
  EXPECT_EQ(truth["problem_id"], "level1/1_Softmax");
  EXPECT_EQ(truth["step_kind"], "evolution");
  const nlohmann::json& extra = row["extra_info"];
  EXPECT_EQ(extra["index"], 1);
  EXPECT_EQ(extra["task_id"], "level1/1_Softmax");
  EXPECT_EQ(extra["parent_id"], "p6");
  EXPECT_DOUBLE_EQ(extra["parent_speedup"].get<double>(), 2.5);
}

TEST(RlExportTest, TranslationIsMeasuredAgainstTheReference) {
  ScratchDir dir;
  WriteCraftedRun(dir.File("run"));
  ExportRows out = Export(dir.File("run"), RlSelection::kInitial);
  ASSERT_EQ(out.rows.size(), 2u);
  nlohmann::json truth = nlohmann::json::parse(out.rows[1]["label"].get<std::string>());
  EXPECT_EQ(truth["step_kind"], "translation");
  EXPECT_EQ(truth["parent_id"], "");
  EXPECT_EQ(truth["parent_code"], "");
  EXPECT_DOUBLE_EQ(truth["parent_speedup"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(truth["parent_runtime_us"].get<double>(), 100.0);
}

TEST(RlExportTest, RunsWithoutTheirProblemFileAreDroppedWithAReason) {
  ScratchDir dir;
  {
    TrajectoryWriter w(dir.File("run"), "r", "level1/1_Softmax.py", /*write_problem=*/false);
    w.Seed("s0", 1.0);
    w.LlmStep("p1", "s0", EvalStatus::kOk, 2.0);
  }
  ExportRows out = Export(dir.File("run"), RlSelection::kBest);
  EXPECT_TRUE(out.rows.empty());
  EXPECT_EQ(out.summary.dropped.at("reference_missing"), 1);
  EXPECT_NE(out.summary.WhyEmpty().find("problem files were not found"), std::string::npos);
}

TEST(RlExportTest, ARunWithItsStoredProblemSourceNeedsNoProblemFile) {
  ScratchDir dir;
  {
    TrajectoryWriter w(dir.File("run"), "r", "level1/1_Softmax.py", /*write_problem=*/false,
                       kReference, /*store_source=*/true);
    w.Seed("s0", 1.0);
    w.LlmStep("p1", "s0", EvalStatus::kOk, 2.0);
  }
  ExportRows out = Export(dir.File("run"), RlSelection::kBest);
  ASSERT_EQ(out.rows.size(), 1u);
  EXPECT_EQ(out.summary.dropped.count("reference_missing"), 0u);
  EXPECT_NE(out.rows[0].dump().find("class Model"), std::string::npos);
}

TEST(RlExportTest, AChildOfAFailedParentHasNoBaseline) {
  ScratchDir dir;
  {
    TrajectoryWriter w(dir.File("run"), "r");
    w.Seed("s0", 1.0);
    w.LlmStep("bad", "s0", EvalStatus::kCompileError, 0);
    w.LlmStep("fix", "bad", EvalStatus::kOk, 1.5);
  }
  ExportRows out = Export(dir.File("run"), RlSelection::kAll);
  EXPECT_EQ(ProgramIds(out), (std::vector<std::string>{"bad"}));
  EXPECT_EQ(out.summary.dropped.at("parent_not_correct"), 1);
}

TEST(RlExportTest, ParsesSelectionNames) {
  EXPECT_EQ(*ParseRlSelection("best"), RlSelection::kBest);
  EXPECT_EQ(*ParseRlSelection("initial"), RlSelection::kInitial);
  EXPECT_FALSE(ParseRlSelection("first").ok());
}

}  // namespace
}  // namespace ks
