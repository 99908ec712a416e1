#include "engine/llm_proposer.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/file.h"
#include "engine/engine.h"
#include "llm/llm_client.h"
#include "testing/llm_test_server.h"
#include "store/sqlite_store.h"
#include "store/test_util.h"

namespace ks {
namespace {

const char* kParent =
    "import torch\n"
    "# EVOLVE-BLOCK-START\n"
    "BLOCK = 1\n"
    "class ModelNew(torch.nn.Module):\n"
    "    pass\n"
    "# EVOLVE-BLOCK-END\n";

struct LlmFixture {
  store_testing::ScratchDir dir;
  std::unique_ptr<Store> store;
  std::unique_ptr<TestLlmServer> server;
  std::shared_ptr<LlmClient> client;
  std::unique_ptr<LlmProposer> proposer;
  ProposalContext context;
  LlmFixture() {
    store = std::move(*OpenSqliteStore(dir.File("run.db")));
    RunRecord run;
    run.id = "r";
    EXPECT_TRUE(store->CreateRun(run).ok());
    server = std::move(*TestLlmServer::Start(4));
    OpenAiClientOptions co;
    co.base_url = server->base_url();
    co.model = "m";
    co.max_attempts = 1;
    client = std::move(*OpenAiClient::Create(co));
    LlmProposerOptions lo;
    lo.run_id = "r";
    lo.model = "m";
    Result<std::unique_ptr<LlmProposer>> created = LlmProposer::Create(client, store.get(), lo);
    EXPECT_TRUE(created.ok()) << created.status().message();
    proposer = std::move(*created);
    Program parent;
    parent.id = "p1";
    parent.code = kParent;
    context.parent = parent;
    context.parent_status = "ok";
    context.parent_feedback = "status ok, speedup 0.1x";
    context.reference_source = "class Model: pass\n";
    context.backend = "cpu";
  }
};

TEST(LlmProposerTest, AppliesADiffAndStoresTheCall) {
  LlmFixture f;
  f.server->Push(ScriptedReply::Completion(
      "<<<<<<< SEARCH\nBLOCK = 1\n=======\nBLOCK = 64\n>>>>>>> REPLACE\n"));
  Result<Proposal> p = f.proposer->Propose(f.context);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_NE(p->code.find("BLOCK = 64"), std::string::npos);
  ASSERT_TRUE(p->llm_call_id.has_value());
  std::vector<LlmCallRecord> calls = *f.store->LlmCallsOfRun("r");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_TRUE(calls[0].error.empty());
  EXPECT_NE(calls[0].request.dump().find("speedup 0.1x"), std::string::npos);
}

TEST(LlmProposerTest, AnswersAnUnusableReplyOnceWithTheReason) {
  LlmFixture f;
  f.server->Push(ScriptedReply::Completion(
      "<<<<<<< SEARCH\nBLOCK = 999\n=======\nBLOCK = 64\n>>>>>>> REPLACE\n"));
  f.server->Push(ScriptedReply::Completion("Sorry, I cannot help with that."));
  Result<Proposal> p = f.proposer->Propose(f.context);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Status::Code::kInvalidArgument);
  std::vector<RecordedRequest> requests = f.server->requests();
  ASSERT_EQ(requests.size(), 2u);  // answered once, not more
  EXPECT_NE(requests[1].body.find("could not be applied"), std::string::npos);
  EXPECT_NE(requests[1].body.find("BLOCK = 999"), std::string::npos);  // the exact SEARCH text
  std::vector<LlmCallRecord> calls = *f.store->LlmCallsOfRun("r");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_NE(calls[0].error.find("reply not usable"), std::string::npos);
}

TEST(LlmProposerTest, HttpErrorsAreStoredAndReported) {
  LlmFixture f;
  f.server->Push(ScriptedReply::HttpError(500));
  Result<Proposal> p = f.proposer->Propose(f.context);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().code(), Status::Code::kInvalidArgument);
  std::vector<LlmCallRecord> calls = *f.store->LlmCallsOfRun("r");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_FALSE(calls[0].error.empty());
}

TEST(LlmProposerTest, TranslatesWhenThereIsNoParent) {
  LlmFixture f;
  f.context.parent.reset();
  f.server->Push(ScriptedReply::Completion(std::string("```python\n") + kParent + "```\n"));
  Result<Proposal> p = f.proposer->Propose(f.context);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->kind, ProgramKind::kTranslation);
  // translate.md of the cpu backend, filled with the reference.
  nlohmann::json body = nlohmann::json::parse(f.server->requests()[0].body);
  std::string user = body["messages"][1]["content"];
  EXPECT_NE(user.find("# Reference module (PyTorch)"), std::string::npos);
  EXPECT_NE(user.find("class Model: pass"), std::string::npos);
  EXPECT_EQ(user.find("{{"), std::string::npos);
}

TEST(LlmProposerTest, PromptFillsTheTemplatesWithHistoryTopProgramsAndHardware) {
  LlmFixture f;
  f.context.hardware = "Test CPU (4 cores)";
  f.context.history = {{"p0 (seed)", "ok, speedup 0.030x"}};
  Program top;
  top.id = "p7@i1";
  top.code = "BLOCK = 128  # top program\n";
  top.correct = true;
  top.speedup = 2.5;
  f.context.inspirations = {top};
  f.server->Push(ScriptedReply::Completion(
      "<<<<<<< SEARCH\nBLOCK = 1\n=======\nBLOCK = 64\n>>>>>>> REPLACE\n"));
  ASSERT_TRUE(f.proposer->Propose(f.context).ok());
  nlohmann::json body = nlohmann::json::parse(f.server->requests()[0].body);
  std::string system = body["messages"][0]["content"];
  std::string user = body["messages"][1]["content"];
  EXPECT_NE(system.find("on the CPU by writing"), std::string::npos);  // prompts/cpu/system.md
  EXPECT_NE(system.find("Test CPU (4 cores)"), std::string::npos);
  EXPECT_NE(system.find("SEARCH"), std::string::npos);  // the output format
  EXPECT_NE(user.find("ok, speedup 0.030x"), std::string::npos);
  EXPECT_NE(user.find("BLOCK = 128  # top program"), std::string::npos);
  EXPECT_NE(user.find("p7: correct, speedup 2.500x"), std::string::npos);
  EXPECT_NE(user.find("status ok, speedup 0.1x"), std::string::npos);  // feedback
  EXPECT_EQ(user.find("{{"), std::string::npos);
}

TEST(LlmProposerTest, UserTemplatesOverrideTheBuiltInOnes) {
  store_testing::ScratchDir prompts;
  std::filesystem::create_directories(prompts.File("cpu"));
  ASSERT_TRUE(
      WriteFileAtomic(prompts.File("cpu/system.md"), "CUSTOM SYSTEM for {{hardware}}\n").ok());
  LlmFixture f;
  LlmProposerOptions lo;
  lo.run_id = "r";
  lo.prompts_dir = prompts.path();
  std::unique_ptr<LlmProposer> proposer =
      std::move(*LlmProposer::Create(f.client, f.store.get(), lo));
  f.server->Push(ScriptedReply::Completion(
      "<<<<<<< SEARCH\nBLOCK = 1\n=======\nBLOCK = 64\n>>>>>>> REPLACE\n"));
  ASSERT_TRUE(proposer->Propose(f.context).ok());
  nlohmann::json body = nlohmann::json::parse(f.server->requests()[0].body);
  EXPECT_EQ(body["messages"][0]["content"], "CUSTOM SYSTEM for the target device\n");
}

}  // namespace
}  // namespace ks
