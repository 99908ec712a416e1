// The engine against a faulty OpenAI-compatible endpoint over real HTTP on loopback: a
// TestLlmServer scripted with every kind of fault, the OpenAiClient behind a DeadEndpointGuard,
// the LlmProposer and a SQLite store. The runner is a fake (the seam): the subject here is the
// LLM side, and the worker pool is covered by engine_http_test.cc.
#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <string>
#include <thread>

#include "engine/engine.h"
#include "engine/llm_proposer.h"
#include "llm/ensemble.h"
#include "llm/llm_client.h"
#include "testing/llm_test_server.h"
#include "store/sqlite_store.h"
#include "store/test_util.h"

namespace ks {
namespace {

const char* kSeed =
    "import torch\n"
    "# EVOLVE-BLOCK-START\n"
    "BLOCK = 1\n"
    "class ModelNew(torch.nn.Module):\n"
    "    pass\n"
    "# EVOLVE-BLOCK-END\n";

// A reply rewriting the whole EVOLVE-BLOCK with BLOCK = `block` (applies to any parent).
std::string Rewrite(int block) {
  return "Wider blocks.\n```python\n# EVOLVE-BLOCK-START\nBLOCK = " + std::to_string(block) +
         "\nclass ModelNew(torch.nn.Module):\n    pass\n# EVOLVE-BLOCK-END\n```\n";
}

// Every candidate is correct with speedup BLOCK / 10.
class BlockRunner : public Runner {
 public:
  void Submit(EvalRequest request, Callback done) override {
    std::smatch m;
    EvalResult r;
    r.status = EvalStatus::kOk;
    r.speedup = std::regex_search(request.candidate_source, m, std::regex("BLOCK = (\\d+)"))
                    ? std::stoi(m[1]) / 10.0
                    : 0.0;
    std::thread([done, r] { done(r); }).detach();
  }
  void Shutdown() override {}
};

struct FaultFixture {
  store_testing::ScratchDir dir;
  std::unique_ptr<Store> store;
  std::unique_ptr<TestLlmServer> server;
  std::shared_ptr<DeadEndpointGuard> guard;
  std::unique_ptr<LlmProposer> proposer;
  EngineOptions options;

  explicit FaultFixture(bool server_alive = true) {
    store = std::move(*OpenSqliteStore(dir.File("run.db")));
    RunRecord run;
    run.id = "faults";
    run.backend = "cpu";
    EXPECT_TRUE(store->CreateRun(run).ok());
    server = std::move(*TestLlmServer::Start(4));
    std::string url = server->base_url();
    if (!server_alive) server->Stop();  // nothing listens on the port: connection refused
    OpenAiClientOptions co;
    co.base_url = url;
    co.model = "m";
    co.connect_timeout_s = 1;
    co.request_timeout_s = 0.5;
    co.max_attempts = 2;
    co.backoff_initial_s = 0.05;
    co.backoff_max_s = 0.1;
    guard = std::make_shared<DeadEndpointGuard>(
        std::shared_ptr<LlmClient>(std::move(*OpenAiClient::Create(co))), 3);
    LlmProposerOptions lo;
    lo.run_id = "faults";
    lo.model = "m";
    proposer = std::move(*LlmProposer::Create(guard, store.get(), lo));
    options.run_id = "faults";
    options.problem_path = "problem.py";
    options.problem_source = "class Model: pass\n";
    options.seed_path = "seed.py";
    options.seed_source = kSeed;
    options.parallel_proposals = 1;
    options.archive.num_islands = 1;
    options.run_dir = dir.path();
  }
};

TEST(EngineLlmFaultsTest, EveryFaultIsRecordedWithItsCallAndTheRunGoesOn) {
  FaultFixture f;
  TestLlmServer& s = *f.server;
  // Round by round (one proposal each); never 3 failed calls in a row, so the guard holds.
  s.Push(ScriptedReply::HttpError(500));  // 1: 500 twice: the call fails
  s.Push(ScriptedReply::HttpError(500));
  s.Push(ScriptedReply::HttpError(429, "1"));  // 2: 429 with Retry-After 1, then a rewrite
  s.Push(ScriptedReply::Completion(Rewrite(2)));
  s.Push(ScriptedReply::Completion(Rewrite(64), 2.0));  // 3: slower than the 0.5 s timeout, twice
  s.Push(ScriptedReply::Completion(Rewrite(64), 2.0));
  s.Push(ScriptedReply::TruncatedJson());                        // 4: not retried
  s.Push(ScriptedReply::Completion(std::string(5 << 20, 'x')));  // 5: 5 MB of no code, then
  s.Push(ScriptedReply::Completion(Rewrite(4)));                 //    a rewrite
  s.Push(ScriptedReply::RawBody("<html>Bad Gateway</html>"));    // 6: malformed JSON
  s.Push(ScriptedReply::Completion(""));                         // 7: empty completion
  s.Push(ScriptedReply::Completion("Use larger blocks."));       // 8: no code, twice
  s.Push(ScriptedReply::Completion("Really, use larger blocks."));
  s.Push(ScriptedReply::DropConnection());  // 9: dropped mid-body, twice
  s.Push(ScriptedReply::DropConnection());
  s.Push(ScriptedReply::Completion(Rewrite(8)));  // 10
  f.options.rounds = 10;
  BlockRunner runner;
  auto t0 = std::chrono::steady_clock::now();
  Engine engine(f.options, f.store.get(), &runner, f.proposer.get(), nullptr);
  Result<nlohmann::json> summary = engine.Run();
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  const nlohmann::json& sum = *summary;
  EXPECT_EQ(sum["rounds_done"], 10);
  EXPECT_DOUBLE_EQ(sum["best_speedup"].get<double>(), 0.8) << sum.dump(2);
  EXPECT_EQ(sum["proposal_failures"].value("proposer_error", 0), 6) << sum.dump(2);
  EXPECT_EQ(sum["proposal_failures"].value("unusable_reply", 0), 1) << sum.dump(2);
  EXPECT_EQ(f.store->ProgramsOfRun("faults")->size(), 4u);  // the seed and BLOCK 2, 4, 8
  EXPECT_FALSE(f.guard->dead());
  EXPECT_LT(wall, 15.0);  // 1 s Retry-After + 2 x 0.5 s timeouts + backoffs, with slack

  std::vector<LlmCallRecord> calls = *f.store->LlmCallsOfRun("faults");
  ASSERT_EQ(calls.size(), 12u);
  const char* expected[] = {"HTTP 500",
                            "",
                            "within 0.5 s",
                            "not valid JSON",
                            "reply not usable",
                            "",
                            "not valid JSON",
                            "empty completion",
                            "reply not usable",
                            "reply not usable",
                            "is the server running?",
                            ""};
  for (size_t i = 0; i < calls.size(); ++i) {
    SCOPED_TRACE("call " + std::to_string(i + 1) + ": " + calls[i].error);
    if (*expected[i] == '\0') {
      EXPECT_TRUE(calls[i].error.empty());
    } else {
      EXPECT_NE(calls[i].error.find(expected[i]), std::string::npos);
    }
  }
  EXPECT_EQ(calls[1].attempt, 2);  // the 429, then the answer
  // The enormous reply: stored capped, echoed bounded in the follow-up.
  EXPECT_LE(calls[4].completion.size(), OpenAiClientOptions{}.max_completion_chars);
  std::vector<RecordedRequest> requests = s.requests();
  size_t largest = 0;
  for (const RecordedRequest& r : requests) largest = std::max(largest, r.body.size());
  EXPECT_LT(largest, 64u << 10) << "a follow-up request carried the enormous reply back";
  EXPECT_EQ(sum["llm"]["errors"], 9);  // the 12 calls less the 3 that gave code
}

TEST(EngineLlmFaultsTest, DeadEndpointStopsTheRunAfterBoundedAttempts) {
  FaultFixture f(/*server_alive=*/false);
  f.options.rounds = 40;
  f.options.parallel_proposals = 2;
  BlockRunner runner;
  auto t0 = std::chrono::steady_clock::now();
  Engine engine(f.options, f.store.get(), &runner, f.proposer.get(), nullptr);
  Result<nlohmann::json> summary = engine.Run();
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(summary.ok()) << "the run should stop, not spin through 40 rounds";
  const std::string& m = summary.status().message();
  EXPECT_NE(m.find("the run cannot go on: LLM endpoint http://127.0.0.1:"), std::string::npos) << m;
  EXPECT_NE(m.find("unreachable after 3 attempts"), std::string::npos) << m;
  EXPECT_NE(m.find("check --llm-url"), std::string::npos) << m;
  EXPECT_NE(m.find("continue with --resume"), std::string::npos) << m;
  EXPECT_LT(wall, 5.0);
  // 3 or 4 failed calls (the two slots of round 1, then one more), each stored with its error;
  // the seed's evaluation is stored too.
  std::vector<LlmCallRecord> calls = *f.store->LlmCallsOfRun("faults");
  EXPECT_GE(calls.size(), 3u);
  EXPECT_LE(calls.size(), 4u);
  for (const LlmCallRecord& c : calls) EXPECT_FALSE(c.error.empty());
  std::vector<ProgramRecord> programs = *f.store->ProgramsOfRun("faults");
  ASSERT_EQ(programs.size(), 1u);
  EXPECT_TRUE(f.store->GetEvaluation(programs[0].id).ok());
}

}  // namespace
}  // namespace ks
