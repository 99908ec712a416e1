#include "engine/proposer_factory.h"

#include <gtest/gtest.h>

#include "testing/llm_test_server.h"
#include "store/sqlite_store.h"
#include "store/test_util.h"

namespace ks {
namespace {

const char* kParent =
    "import torch\n"
    "# EVOLVE-BLOCK-START\n"
    "BLOCK = 1  # ks:tune BLOCK=[1, 2, 4, 8, 16, 32, 64]\n"
    "class ModelNew(torch.nn.Module):\n"
    "    pass\n"
    "# EVOLVE-BLOCK-END\n";

struct FactoryFixture {
  store_testing::ScratchDir dir;
  std::unique_ptr<Store> store;
  ProposalContext context;
  FactoryFixture() {
    store = std::move(*OpenSqliteStore(dir.File("run.db")));
    RunRecord run;
    run.id = "r";
    EXPECT_TRUE(store->CreateRun(run).ok());
    Program parent;
    parent.id = "p1";
    parent.code = kParent;
    context.parent = parent;
    context.reference_source = "class Model: pass\n";
    context.backend = "cpu";
    context.run_id = "r";
  }
};

TEST(ProposerFactoryTest, ParsesLlmEndpointSpecs) {
  Result<LlmEndpointSpec> full = ParseLlmEndpointSpec("http://h:8000/v1,Qwen/Coder,2.5,MY_KEY");
  ASSERT_TRUE(full.ok()) << full.status().message();
  EXPECT_EQ(full->url, "http://h:8000/v1");
  EXPECT_EQ(full->model, "Qwen/Coder");
  EXPECT_DOUBLE_EQ(full->weight, 2.5);
  EXPECT_EQ(full->api_key_env, "MY_KEY");
  EXPECT_DOUBLE_EQ(ParseLlmEndpointSpec("http://h/v1,m")->weight, 1.0);
  EXPECT_FALSE(ParseLlmEndpointSpec("http://h/v1").ok());
  EXPECT_FALSE(ParseLlmEndpointSpec("http://h/v1,m,heavy").ok());
  EXPECT_FALSE(ParseLlmEndpointSpec("http://h/v1,m,0").ok());
  EXPECT_FALSE(ParseLlmEndpointSpec("http://h/v1,m,1,K,extra").ok());
}

TEST(ProposerFactoryTest, EnsembleSpreadsCallsByWeight) {
  FactoryFixture f;
  std::unique_ptr<TestLlmServer> a = std::move(*TestLlmServer::Start(2));
  std::unique_ptr<TestLlmServer> b = std::move(*TestLlmServer::Start(2));
  const char* diff =
      "<<<<<<< SEARCH\nBLOCK = 1  # ks:tune BLOCK=[1, 2, 4, 8, 16, 32, 64]\n"
      "=======\nBLOCK = 8\n>>>>>>> REPLACE\n";
  a->SetFallback(ScriptedReply::Completion(diff));
  b->SetFallback(ScriptedReply::Completion(diff));
  ProposerSpec spec;
  spec.kind = "llm";
  spec.run_id = "r";
  spec.llms = {{a->base_url(), "model-a", 3, ""}, {b->base_url(), "model-b", 1, ""}};
  Result<std::unique_ptr<Proposer>> proposer = MakeProposer(spec, f.store.get());
  ASSERT_TRUE(proposer.ok()) << proposer.status().message();
  for (int i = 0; i < 40; ++i) ASSERT_TRUE((*proposer)->Propose(f.context).ok());
  size_t to_a = a->requests().size(), to_b = b->requests().size();
  EXPECT_EQ(to_a + to_b, 40u);
  EXPECT_GT(to_b, 0u);
  EXPECT_GT(to_a, to_b);  // weight 3 against 1
  EXPECT_NE(a->requests()[0].body.find("model-a"), std::string::npos);
  EXPECT_EQ(f.store->LlmCallsOfRun("r")->size(), 40u);
}

TEST(ProposerFactoryTest, TunerRatioHandsProposalsToTheTuner) {
  FactoryFixture f;
  ProposerSpec spec;
  spec.kind = "command";
  spec.command = "exit 1";  // every command call fails
  spec.run_id = "r";
  spec.tuner_ratio = 0.5;
  Result<std::unique_ptr<Proposer>> proposer = MakeProposer(spec, f.store.get());
  ASSERT_TRUE(proposer.ok()) << proposer.status().message();
  int by_tuner = 0, failed = 0;
  for (int slot = 0; slot < 20; ++slot) {
    f.context.slot = slot;
    Result<Proposal> p = (*proposer)->Propose(f.context);
    if (p.ok()) {
      EXPECT_EQ(p->proposer, ProposerKind::kTuner);
      ++by_tuner;
    } else {
      ++failed;
    }
  }
  EXPECT_GT(by_tuner, 3);
  EXPECT_GT(failed, 3);
  EXPECT_EQ(static_cast<int>(f.store->LlmCallsOfRun("r")->size()), failed);
}

TEST(ProposerFactoryTest, IncompleteSpecsSayWhichFlagIsMissing) {
  FactoryFixture f;
  ProposerSpec spec;
  spec.kind = "llm";
  EXPECT_NE(MakeProposer(spec, f.store.get()).status().message().find("--llm"), std::string::npos);
  spec.kind = "files";
  EXPECT_NE(MakeProposer(spec, f.store.get()).status().message().find("--exchange-dir"),
            std::string::npos);
}

}  // namespace
}  // namespace ks
