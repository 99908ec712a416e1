#include "engine/llm_proposer.h"

#include <gtest/gtest.h>

#include "engine/engine.h"
#include "llm/llm_client.h"
#include "llm/test_server.h"
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
    proposer = std::make_unique<LlmProposer>(client, store.get(), lo);
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
  EXPECT_NE(f.server->requests()[0].body.find("Translate"), std::string::npos);
}

}  // namespace
}  // namespace ks
