#include "store/store.h"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/sha256.h"
#include "store/sqlite_store.h"
#include "store/test_util.h"

namespace ks {
namespace {

using nlohmann::json;
using store_testing::MakeLlmCall;
using store_testing::MakeProgram;
using store_testing::MakeResult;
using store_testing::MakeRun;
using store_testing::ScratchDir;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    path_ = dir_.File("run.db");
    Reopen();
    ASSERT_TRUE(store_->CreateRun(MakeRun("r1")).ok());
  }
  void Reopen() {
    store_.reset();
    Result<std::unique_ptr<Store>> s = OpenSqliteStore(path_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
  }

  ScratchDir dir_;
  std::string path_;
  std::unique_ptr<Store> store_;
};

TEST_F(StoreTest, RunRoundTripAndUpdates) {
  Result<RunRecord> run = store_->GetRun("r1");
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->config, MakeRun("r1").config);
  EXPECT_EQ(run->problem_path, "suites/level1/1_Softmax.py");
  EXPECT_EQ(run->backend, "cpu");
  EXPECT_EQ(run->status, RunStatus::kRunning);
  EXPECT_FALSE(run->created_at.empty());

  ASSERT_TRUE(store_->UpdateRunStatus("r1", RunStatus::kWaiting).ok());
  ASSERT_TRUE(store_->UpdateRunSummary("r1", {{"best_speedup", 1.7}}).ok());
  run = store_->GetRun("r1");
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->status, RunStatus::kWaiting);
  EXPECT_EQ(run->summary["best_speedup"], 1.7);

  EXPECT_EQ(store_->GetRun("nope").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(store_->UpdateRunStatus("nope", RunStatus::kFailed).code(), Status::Code::kNotFound);
  Status dup = store_->CreateRun(MakeRun("r1"));
  EXPECT_EQ(dup.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Contains(dup.message(), "already exists")) << dup.message();
}

TEST_F(StoreTest, AProblemSourceIsStoredWithItsRun) {
  RunRecord with = MakeRun("r2");
  with.problem_source = "class Model:\n    pass\n";
  with.problem_sha256 = Sha256Hex(with.problem_source);
  ASSERT_TRUE(store_->CreateRun(with).ok());
  Reopen();
  Result<RunRecord> run = store_->GetRun("r2");
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->problem_source, with.problem_source);
  run = store_->GetRun("r1");  // created without one, as runs of older versions were
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->problem_source, "");
}

TEST_F(StoreTest, ReopenKeepsEverything) {
  ASSERT_TRUE(store_->AddProgram(MakeProgram("r1", "p1", "x = 1\n")).ok());
  ASSERT_TRUE(store_->RecordEvaluation("p1", MakeResult(EvalStatus::kOk, 2.0)).ok());
  ASSERT_TRUE(store_->AddProgram(MakeProgram("r1", "p2", "x = 2\n", "p1")).ok());
  ASSERT_TRUE(store_->PutState("r1", "round", 3).ok());
  Reopen();
  Result<std::vector<ProgramRecord>> programs = store_->ProgramsOfRun("r1");
  ASSERT_TRUE(programs.ok());
  ASSERT_EQ(programs->size(), 2u);
  EXPECT_EQ((*programs)[1].parent_id, "p1");
  Result<EvaluationRecord> e = store_->GetEvaluation("p1");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->result.speedup, 2.0);
  Result<json> round = store_->GetState("r1", "round");
  ASSERT_TRUE(round.ok());
  EXPECT_EQ(*round, 3);
  EXPECT_TRUE(store_->IntegrityCheck().ok());
}

TEST_F(StoreTest, ProgramFieldsRoundTripInInsertionOrder) {
  ProgramRecord seed = MakeProgram("r1", "zz-seed", "def f():\n  return 1\n");
  ASSERT_TRUE(store_->AddProgram(seed).ok());
  Result<int64_t> call = store_->RecordLlmCall(MakeLlmCall("r1"));
  ASSERT_TRUE(call.ok()) << call.status().ToString();
  ProgramRecord child = MakeProgram("r1", "aa-child", "def f():\n  return 2\n", "zz-seed");
  child.island = 3;
  child.generation = 7;
  child.proposer = ProposerKind::kLlm;
  child.kind = ProgramKind::kEvolution;
  child.llm_call_id = *call;
  child.metrics = {{"complexity", 3.0}, {"score", 0.5}};
  ASSERT_TRUE(store_->AddProgram(child).ok());

  Result<std::vector<ProgramRecord>> all = store_->ProgramsOfRun("r1");
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].id, "zz-seed");  // insertion order, not id order
  const ProgramRecord& got = (*all)[1];
  EXPECT_EQ(got.id, child.id);
  EXPECT_EQ(got.parent_id, "zz-seed");
  EXPECT_EQ(got.code, child.code);
  EXPECT_EQ(got.code_hash, child.code_hash);
  EXPECT_EQ(got.island, 3);
  EXPECT_EQ(got.generation, 7);
  EXPECT_EQ(got.proposer, ProposerKind::kLlm);
  EXPECT_EQ(got.kind, ProgramKind::kEvolution);
  EXPECT_EQ(got.llm_call_id, *call);
  EXPECT_EQ(got.metrics, child.metrics);
  EXPECT_FALSE(got.created_at.empty());
  EXPECT_FALSE(store_->GetProgram("zz-seed")->llm_call_id.has_value());
  EXPECT_TRUE(store_->ProgramsOfRun("other")->empty());
}

TEST_F(StoreTest, AddProgramRejectsDuplicatesAndDanglingReferences) {
  ASSERT_TRUE(store_->AddProgram(MakeProgram("r1", "p1", "a\n")).ok());
  Status dup = store_->AddProgram(MakeProgram("r1", "p1", "b\n"));
  EXPECT_EQ(dup.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Contains(dup.message(), "'p1'") && Contains(dup.message(), path_)) << dup.message();
  EXPECT_EQ(store_->GetProgram("p1")->code, "a\n");  // the first one is kept

  Status no_parent = store_->AddProgram(MakeProgram("r1", "p2", "c\n", "ghost"));
  EXPECT_EQ(no_parent.code(), Status::Code::kNotFound);
  EXPECT_TRUE(Contains(no_parent.message(), "ghost")) << no_parent.message();
  EXPECT_EQ(store_->AddProgram(MakeProgram("r9", "p3", "c\n")).code(), Status::Code::kNotFound);
  ProgramRecord bad_call = MakeProgram("r1", "p4", "d\n");
  bad_call.llm_call_id = 42;
  EXPECT_EQ(store_->AddProgram(bad_call).code(), Status::Code::kNotFound);
  EXPECT_EQ(store_->AddProgram(MakeProgram("r1", "", "e\n")).code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(store_->ProgramsOfRun("r1")->size(), 1u);
}

TEST_F(StoreTest, SecondEvaluationIsRejectedAndFirstKept) {
  ASSERT_TRUE(store_->AddProgram(MakeProgram("r1", "p1", "a\n")).ok());
  ASSERT_TRUE(store_->RecordEvaluation("p1", MakeResult(EvalStatus::kOk, 1.5)).ok());
  Status again = store_->RecordEvaluation("p1", MakeResult(EvalStatus::kCrash, 0));
  EXPECT_EQ(again.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Contains(again.message(), "never overwritten")) << again.message();
  EXPECT_EQ(store_->GetEvaluation("p1")->result.status, EvalStatus::kOk);

  Status orphan = store_->RecordEvaluation("ghost", MakeResult(EvalStatus::kOk, 1.0));
  EXPECT_EQ(orphan.code(), Status::Code::kNotFound);
  EXPECT_EQ(store_->GetEvaluation("ghost").status().code(), Status::Code::kNotFound);
}

TEST_F(StoreTest, AddProgramWithEvaluationIsAllOrNothing) {
  ASSERT_TRUE(
      store_
          ->AddProgramWithEvaluation(MakeProgram("r1", "p1", "a\n"), MakeResult(EvalStatus::kOk, 2))
          .ok());
  EXPECT_TRUE(store_->GetEvaluation("p1").ok());
  // The program part fails (duplicate id): no evaluation is written for anything.
  EXPECT_FALSE(store_
                   ->AddProgramWithEvaluation(MakeProgram("r1", "p1", "b\n"),
                                              MakeResult(EvalStatus::kCrash, 0))
                   .ok());
  EXPECT_EQ(store_->GetEvaluation("p1")->result.status, EvalStatus::kOk);
  // The program part succeeds, then the parent check of a later row fails: nothing stays.
  EXPECT_FALSE(store_
                   ->AddProgramWithEvaluation(MakeProgram("r1", "p2", "c\n", "ghost"),
                                              MakeResult(EvalStatus::kOk, 1))
                   .ok());
  EXPECT_EQ(store_->GetProgram("p2").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(store_->ProgramsOfRun("r1")->size(), 1u);
}

TEST_F(StoreTest, FindEvaluatedByCodeHashDedupsNormalizedCode) {
  ASSERT_TRUE(store_->AddProgram(MakeProgram("r1", "p1", "x = 1  # first\n")).ok());
  ProgramRecord same = MakeProgram("r1", "p2", "x = 1\n\n");  // same normalized code
  ASSERT_EQ(same.code_hash, MakeProgram("r1", "p1", "x = 1  # first\n").code_hash);
  // Not evaluated yet: no hit.
  Result<std::optional<EvaluatedProgram>> hit =
      store_->FindEvaluatedByCodeHash("r1", same.code_hash);
  ASSERT_TRUE(hit.ok());
  EXPECT_FALSE(hit->has_value());

  ASSERT_TRUE(store_->RecordEvaluation("p1", MakeResult(EvalStatus::kOk, 3.0)).ok());
  hit = store_->FindEvaluatedByCodeHash("r1", same.code_hash);
  ASSERT_TRUE(hit.ok());
  ASSERT_TRUE(hit->has_value());
  EXPECT_EQ((*hit)->program.id, "p1");
  EXPECT_EQ((*hit)->evaluation.program_id, "p1");
  EXPECT_EQ((*hit)->evaluation.result.speedup, 3.0);
  // Other runs and other code do not match.
  ASSERT_TRUE(store_->CreateRun(MakeRun("r2")).ok());
  EXPECT_FALSE(store_->FindEvaluatedByCodeHash("r2", same.code_hash)->has_value());
  EXPECT_FALSE(store_->FindEvaluatedByCodeHash("r1", "0000")->has_value());
}

TEST_F(StoreTest, PendingProgramsAreTheUnevaluatedOnesInOrder) {
  for (const char* id : {"a", "b", "c", "d"}) {
    ASSERT_TRUE(store_->AddProgram(MakeProgram("r1", id, std::string(id) + " = 1\n")).ok());
  }
  ASSERT_TRUE(store_->RecordEvaluation("b", MakeResult(EvalStatus::kOk, 1.1)).ok());
  ASSERT_TRUE(store_->RecordEvaluation("d", MakeResult(EvalStatus::kTimeout, 0)).ok());
  Result<std::vector<ProgramRecord>> pending = store_->PendingPrograms("r1");
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 2u);
  EXPECT_EQ((*pending)[0].id, "a");
  EXPECT_EQ((*pending)[1].id, "c");

  Result<std::map<EvalStatus, int64_t>> counts = store_->CountEvaluationsByStatus("r1");
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(*counts,
            (std::map<EvalStatus, int64_t>{{EvalStatus::kOk, 1}, {EvalStatus::kTimeout, 1}}));
}

TEST_F(StoreTest, LlmCallRoundTrip) {
  LlmCallRecord ok;
  ok.run_id = "r1";
  ok.model = "qwen-coder";
  ok.endpoint = "http://127.0.0.1:8000/v1";
  ok.request = {{"messages",
                 {{{"role", "system"}, {"content", "be fast"}},
                  {{"role", "user"}, {"content", "kernel ü\n```py\nx\n```"}}}},
                {"params", {{"temperature", 0.6}, {"top_p", 0.95}}}};
  ok.completion = "```python\nimport triton\n```\n";
  ok.prompt_tokens = 1200;
  ok.completion_tokens = 340;
  ok.latency_s = 2.25;
  LlmCallRecord failed = ok;
  failed.completion = "";
  failed.prompt_tokens.reset();
  failed.completion_tokens.reset();
  failed.error = "HTTP 429: rate limited";
  failed.attempt = 2;
  Result<int64_t> id1 = store_->RecordLlmCall(ok);
  Result<int64_t> id2 = store_->RecordLlmCall(failed);
  ASSERT_TRUE(id1.ok() && id2.ok());
  EXPECT_LT(*id1, *id2);
  EXPECT_EQ(store_->RecordLlmCall(MakeLlmCall("ghost")).status().code(), Status::Code::kNotFound);

  Result<std::vector<LlmCallRecord>> calls = store_->LlmCallsOfRun("r1");
  ASSERT_TRUE(calls.ok());
  ASSERT_EQ(calls->size(), 2u);
  const LlmCallRecord& a = (*calls)[0];
  EXPECT_EQ(a.id, *id1);
  EXPECT_EQ(a.model, ok.model);
  EXPECT_EQ(a.endpoint, ok.endpoint);
  EXPECT_EQ(a.request, ok.request);
  EXPECT_EQ(a.completion, ok.completion);
  EXPECT_EQ(a.prompt_tokens, 1200);
  EXPECT_EQ(a.completion_tokens, 340);
  EXPECT_DOUBLE_EQ(a.latency_s, 2.25);
  EXPECT_EQ(a.error, "");
  EXPECT_EQ(a.attempt, 1);
  const LlmCallRecord& b = (*calls)[1];
  EXPECT_EQ(b.error, failed.error);
  EXPECT_FALSE(b.prompt_tokens.has_value());
  EXPECT_EQ(b.attempt, 2);
}

TEST_F(StoreTest, EvalResultJsonRoundTripsExactly) {
  EvalResult r = MakeResult(EvalStatus::kHacked, 0);
  r.speedup = 4.5;
  r.speedup_ci_lo = 4.4;
  r.speedup_ci_hi = 4.6;
  r.cv = 0.01;
  r.problem = {"p.py", "aa"};
  r.candidate = {"c.py", "bb"};
  r.findings.push_back({"side_stream", "work on stream 7", "reject"});
  r.stages = {{"load", {{"ok", true}, {"seconds", 0.25}}}, {"audit", {{"ok", false}}}};
  r.device = {{"name", "H100"}, {"cc", "9.0"}};
  r.duration_s = 12.5;
  r.stdout_tail = "line1\nline2";
  r.stderr_tail = "Traceback ...";
  ASSERT_TRUE(store_->AddProgramWithEvaluation(MakeProgram("r1", "p1", "a\n"), r).ok());
  Reopen();
  Result<EvaluationRecord> back = store_->GetEvaluation("p1");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->result.ToJson(), r.ToJson());
  EXPECT_FALSE(back->created_at.empty());
}

TEST_F(StoreTest, InvalidUtf8InOutputTailsIsStoredNotThrown) {
  EvalResult r = MakeResult(EvalStatus::kCrash, 0);
  r.stderr_tail = std::string("bad \xff\xfe bytes");
  ASSERT_TRUE(store_->AddProgramWithEvaluation(MakeProgram("r1", "p1", "a\n"), r).ok());
  Result<EvaluationRecord> back = store_->GetEvaluation("p1");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(Contains(back->result.stderr_tail, "bytes"));
  EXPECT_EQ(back->result.status, EvalStatus::kCrash);
}

TEST_F(StoreTest, StateIsOverwrittenAndMissingKeysAreNotFound) {
  ASSERT_TRUE(store_->PutState("r1", "archive", {{"islands", json::array({1, 2})}}).ok());
  ASSERT_TRUE(store_->PutState("r1", "archive", {{"islands", json::array({3})}}).ok());
  Result<json> v = store_->GetState("r1", "archive");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ((*v)["islands"], json::array({3}));
  EXPECT_EQ(store_->GetState("r1", "round").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(store_->PutState("ghost", "k", 1).code(), Status::Code::kNotFound);
}

TEST_F(StoreTest, ConcurrentWritersFromManyThreadsAllLand) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t] {
      for (int i = 0; i < kPerThread; ++i) {
        std::string id = "t" + std::to_string(t) + "-" + std::to_string(i);
        Status s = store_->AddProgramWithEvaluation(MakeProgram("r1", id, id + " = 0\n"),
                                                    MakeResult(EvalStatus::kOk, 1.0 + i));
        EXPECT_TRUE(s.ok()) << s.ToString();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(store_->ProgramsOfRun("r1")->size(), size_t{kThreads * kPerThread});
  EXPECT_EQ((*store_->CountEvaluationsByStatus("r1"))[EvalStatus::kOk], kThreads * kPerThread);
  EXPECT_TRUE(store_->IntegrityCheck().ok());
}

TEST(StoreOpenTest, MissingDirectoryIsNotFoundNamingIt) {
  Result<std::unique_ptr<Store>> s = OpenSqliteStore("/nonexistent-ks-dir/sub/run.db");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Status::Code::kNotFound);
  EXPECT_TRUE(Contains(s.status().message(), "/nonexistent-ks-dir/sub"));
  EXPECT_TRUE(Contains(s.status().message(), "does not exist")) << s.status().message();
}

TEST(StoreOpenTest, AFileThatIsNotADatabaseIsRefusedNamingIt) {
  ScratchDir dir;
  std::string path = dir.File("notes.db");
  std::ofstream(path) << std::string(4096, 'x');
  Result<std::unique_ptr<Store>> s = OpenSqliteStore(path);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.status().message(), path)) << s.status().message();
}

}  // namespace
}  // namespace ks
