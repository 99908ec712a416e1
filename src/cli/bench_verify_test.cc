#include "cli/bench_verify.h"

#include <gtest/gtest.h>

namespace ks {
namespace {

BenchProblemRow Row(const std::string& name, const std::string& status) {
  BenchProblemRow r;
  r.outcome.name = name;
  r.status = status;
  r.run_dir = "/nonexistent/ks-bench-verify-test/" + name;
  return r;
}

TEST(BenchVerifyTest, OnlyFinishedProblemsAreLookedAtAndEachRowSaysWhy) {
  EXPECT_EQ(*RowNotVerified(Row("a", "skipped")), "the problem was skipped");
  EXPECT_EQ(*RowNotVerified(Row("a", "failed")), "the run failed");
  EXPECT_NE(RowNotVerified(Row("a", "waiting"))->find("waits for answers"),
            std::string::npos);
  EXPECT_FALSE(RowNotVerified(Row("a", "finished")));
}

TEST(BenchVerifyTest, AFailingReMeasurementStaysWithItsRowAndTheOthersGoOn) {
  std::vector<BenchProblemRow> rows = {Row("level1/1_A", "finished"), Row("level1/2_B", "skipped"),
                                       Row("level1/3_C", "finished")};
  rows[0].outcome.best_speedup = 1.25;
  std::vector<size_t> after;
  BenchVerifyOptions options;
  options.backend = "cpu";
  int started = 0;
  options.start_runner = [&](const std::string&) -> Result<std::unique_ptr<Runner>> {
    ++started;
    return Status::Internal("not reached: the run directories do not exist");
  };
  VerifyBenchRows(rows, options, [&](size_t i) { after.push_back(i); });
  EXPECT_EQ(after, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(started, 0);
  EXPECT_EQ(rows[0].verify["state"], "failed");
  EXPECT_NE(rows[0].verify["reason"].get<std::string>().find("cannot read the run"),
            std::string::npos);
  EXPECT_EQ(rows[1].verify["state"], "not_verified");
  EXPECT_EQ(rows[2].verify["state"], "failed");
  EXPECT_EQ(rows[0].ToJson()["verify"], rows[0].verify);
  std::string table = FormatVerifyTable(rows);
  EXPECT_NE(table.find("! level1/1_A"), std::string::npos) << table;
  EXPECT_NE(table.find("1.250x"), std::string::npos) << table;
  EXPECT_NE(table.find("  level1/2_B"), std::string::npos) << table;
  EXPECT_NE(table.find("not verified: the problem was skipped"), std::string::npos) << table;
  EXPECT_NE(table.find("verified 0 of 3 problem(s); 2 not confirming"), std::string::npos) << table;
}


TEST(BenchVerifyTest, TheTableShowsBothFiguresAndMarksADisagreement) {
  std::vector<BenchProblemRow> rows = {Row("level1/1_A", "finished"),
                                       Row("level1/2_B", "finished")};
  rows[0].outcome.best_speedup = 2.0;
  rows[0].verify = {{"state", "verified"},
                    {"status", "ok"},
                    {"speedup", 2.01},
                    {"speedup_ci95", {1.95, 2.05}},
                    {"independent_speedup", 2.0},
                    {"independent_range", {1.98, 2.02}},
                    {"agree", true},
                    {"recorded_within", true}};
  rows[1].outcome.best_speedup = 3.0;
  rows[1].verify = rows[0].verify;
  rows[1].verify["agree"] = false;
  rows[1].verify["difference"] = -0.2;
  std::string table = FormatVerifyTable(rows);
  EXPECT_NE(table.find("  level1/1_A"), std::string::npos) << table;
  EXPECT_NE(table.find("2.010x [1.950, 2.050]"), std::string::npos) << table;
  EXPECT_NE(table.find("! level1/2_B"), std::string::npos) << table;
  EXPECT_NE(table.find("DIFFER"), std::string::npos) << table;
  EXPECT_NE(table.find("verified 2 of 2 problem(s); 1 not confirming"), std::string::npos) << table;
}

}  // namespace
}  // namespace ks
