// The engine end to end over real HTTP: a scripted OpenAI-compatible server on loopback, the
// OpenAiClient, the LlmProposer with the prompts/ templates, the real worker pool on the cpu
// backend and a SQLite store, on examples/colsum.
#include <gtest/gtest.h>

#include <string>

#include "core/file.h"
#include "engine/engine.h"
#include "engine/llm_proposer.h"
#include "eval/worker_pool.h"
#include "llm/llm_client.h"
#include "testing/llm_test_server.h"
#include "store/sqlite_store.h"
#include "store/test_util.h"

namespace ks {
namespace {

constexpr char kProblem[] = KS_SOURCE_DIR "/examples/colsum/problem.py";
constexpr char kSeed[] = KS_SOURCE_DIR "/examples/colsum/cpu_seed.py";
constexpr char kSeedBlockLine[] =
    "BLOCK = 1  # ks:tune BLOCK=[1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]";

std::string Diff(const std::string& search, const std::string& replace) {
  return "Larger column blocks make the row walk contiguous.\n<<<<<<< SEARCH\n" + search +
         "\n=======\n" + replace + "\n>>>>>>> REPLACE\n";
}

// The seed's EVOLVE-BLOCK with BLOCK = `block`, as a rewrite reply.
std::string Rewrite(const std::string& seed, int block) {
  size_t start = seed.find("# EVOLVE-BLOCK-START");
  size_t end = seed.find("# EVOLVE-BLOCK-END");
  std::string evolve = seed.substr(start, end - start) + "# EVOLVE-BLOCK-END\n";
  evolve.replace(evolve.find(kSeedBlockLine), std::string(kSeedBlockLine).size(),
                 "BLOCK = " + std::to_string(block));
  return "A rewrite with wider blocks.\n```python\n" + evolve + "```\n";
}

std::string MessageOf(const RecordedRequest& request, size_t i) {
  nlohmann::json body = nlohmann::json::parse(request.body);
  return body["messages"][i]["content"].get<std::string>();
}

TEST(EngineHttpTest, EvolvesColsumThroughAScriptedOpenAiServer) {
  store_testing::ScratchDir dir;
  std::unique_ptr<Store> store = std::move(*OpenSqliteStore(dir.File("run.db")));
  RunRecord run;
  run.id = "http";
  run.backend = "cpu";
  ASSERT_TRUE(store->CreateRun(run).ok());
  std::string seed = *ReadFile(kSeed);

  std::unique_ptr<TestLlmServer> server = std::move(*TestLlmServer::Start(4));
  // Round 1: a diff that widens BLOCK.
  server->Push(ScriptedReply::Completion(Diff(kSeedBlockLine, "BLOCK = 256")));
  // Round 2: a diff whose SEARCH text is nowhere, answered with the reason; then a rewrite.
  server->Push(ScriptedReply::Completion(Diff("BLOCK = 4096  # nowhere", "BLOCK = 8192")));
  server->Push(ScriptedReply::Completion(Rewrite(seed, 512)));
  // Round 3: HTTP 500 (retried), prose without code (answered), 429 with Retry-After, rewrite.
  server->Push(ScriptedReply::HttpError(500));
  server->Push(ScriptedReply::Completion("I would make the blocks larger; that should help."));
  server->Push(ScriptedReply::HttpError(429, "1"));
  server->Push(ScriptedReply::Completion(Rewrite(seed, 128)));

  OpenAiClientOptions co;
  co.base_url = server->base_url();
  co.model = "scripted";
  co.max_attempts = 3;
  co.backoff_initial_s = 0.05;
  std::shared_ptr<LlmClient> client = std::move(*OpenAiClient::Create(co));
  LlmProposerOptions lo;
  lo.run_id = "http";
  lo.model = "scripted";
  Result<std::unique_ptr<LlmProposer>> proposer = LlmProposer::Create(client, store.get(), lo);
  ASSERT_TRUE(proposer.ok()) << proposer.status().message();

  Result<std::unique_ptr<WorkerPool>> pool = WorkerPool::Create(WorkerPoolOptions{});
  ASSERT_TRUE(pool.ok()) << pool.status().message();
  EngineOptions eo;
  eo.run_id = "http";
  eo.problem_path = kProblem;
  eo.problem_source = *ReadFile(kProblem);
  eo.seed_path = kSeed;
  eo.seed_source = seed;
  eo.backend = "cpu";
  eo.hardware = "Scripted CPU (2 cores)";
  eo.rounds = 3;
  eo.parallel_proposals = 1;
  eo.trials = 2;
  eo.archive.num_islands = 1;
  eo.run_dir = dir.path();
  Engine engine(eo, store.get(), pool->get(), proposer->get(), nullptr);
  Result<nlohmann::json> summary = engine.Run();
  (*pool)->Shutdown();
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  const nlohmann::json& s = *summary;

  // It improves over its seed, and best.py is one of the LLM's candidates.
  ASSERT_TRUE(s["seed_speedup"].is_number()) << s.dump(2);
  ASSERT_TRUE(s["best_speedup"].is_number()) << s.dump(2);
  EXPECT_GT(s["best_speedup"].get<double>(), s["seed_speedup"].get<double>()) << s.dump(2);
  EXPECT_EQ(ReadFile(dir.File("best.py"))->find(kSeedBlockLine), std::string::npos);
  EXPECT_EQ(s["candidates_by_status"].value("ok", 0), 4) << s.dump(2);

  // Every HTTP exchange happened: 1 + 2 + 4 requests; the system prompt is prompts/cpu/system.md.
  std::vector<RecordedRequest> requests = server->requests();
  ASSERT_EQ(requests.size(), 7u);
  std::string system_md = *ReadFile(KS_SOURCE_DIR "/prompts/cpu/system.md");
  std::string system_head = system_md.substr(0, system_md.find("{{"));
  for (const RecordedRequest& r : requests) {
    EXPECT_EQ(MessageOf(r, 0).rfind(system_head, 0), 0u) << MessageOf(r, 0).substr(0, 200);
  }
  EXPECT_NE(MessageOf(requests[0], 0).find("Scripted CPU (2 cores)"), std::string::npos);
  EXPECT_NE(MessageOf(requests[0], 1).find("# Current program"), std::string::npos);
  // The broken diff's follow-up names the SEARCH text that matched nothing.
  std::string follow_up = MessageOf(requests[2], 3);
  EXPECT_NE(follow_up.find("could not be applied"), std::string::npos) << follow_up;
  EXPECT_NE(follow_up.find("BLOCK = 4096  # nowhere"), std::string::npos) << follow_up;
  EXPECT_NE(MessageOf(requests[5], 3).find("could not be applied"), std::string::npos);
  // Retry-After: 1 was honoured.
  EXPECT_GE(requests[6].received_s - requests[5].received_s, 0.9);

  // Every call is stored once, with its prompt, completion and error.
  std::vector<LlmCallRecord> calls = *store->LlmCallsOfRun("http");
  ASSERT_EQ(calls.size(), 5u);
  for (const LlmCallRecord& c : calls) {
    EXPECT_NE(c.request.dump().find("Reference module"), std::string::npos);
    EXPECT_FALSE(c.completion.empty());
  }
  EXPECT_TRUE(calls[0].error.empty());
  EXPECT_NE(calls[1].error.find("reply not usable"), std::string::npos);
  EXPECT_TRUE(calls[2].error.empty());
  EXPECT_NE(calls[3].error.find("reply not usable"), std::string::npos);
  EXPECT_EQ(calls[3].attempt, 2);  // the 500, then the prose
  EXPECT_TRUE(calls[4].error.empty());
  EXPECT_EQ(calls[4].attempt, 2);  // the 429, then the rewrite
  EXPECT_EQ(s["llm"]["calls"], 5);
  // Each LLM child links to the call that produced it.
  int linked = 0;
  std::vector<ProgramRecord> programs = *store->ProgramsOfRun("http");
  for (const ProgramRecord& p : programs) linked += p.llm_call_id ? 1 : 0;
  EXPECT_EQ(linked, 3);
}

}  // namespace
}  // namespace ks
