// The curate pipeline end to end against a fake Python tool at the CurateTool seam (real
// subprocesses, real SQLite, real HTTP on loopback for the LLM).
#include "curate/pipeline.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/file.h"
#include "curate/llm_inputs.h"
#include "testing/llm_test_server.h"
#include "store/test_util.h"

namespace ks {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using store_testing::ScratchDir;

constexpr char kFake[] = KS_SOURCE_DIR "/src/curate/testdata/fake_curate.py";

// 100 tokens "t0 .. t99" with `edit` replaced at position 50 (for near-duplicates).
std::string Tokens(const std::string& edit = "") {
  Json t = Json::array();
  for (int i = 0; i < 100; ++i) t.push_back(i == 50 && !edit.empty() ? edit : "t" + std::to_string(i));
  return t.dump();
}

class CurateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_ = dir_.File("repo");
    Write("layers.py",
          "#fake {\"class\": \"Relu\", \"ast_hash\": \"A\", \"tokens\": " + Tokens() + "}\n"
          "#fake {\"class\": \"Relu2\", \"ast_hash\": \"A\", \"tokens\": " + Tokens() + "}\n");
    Write("more/near.py", "#fake {\"class\": \"Near\", \"ast_hash\": \"B\", \"tokens\": " +
                              Tokens("EDIT") + ", \"family\": \"activation\"}\n");
    Write("more/conv.py",
          "#fake {\"class\": \"Conv\", \"ast_hash\": \"C\", \"family\": \"convolution\", "
          "\"source\": \"import torch\\nclass Conv(torch.nn.Module):\\n    def __init__(self):\\n"
          "        self.c = nn.Conv2d(3, 8, 3)\\n    def forward(self, x):\\n"
          "        return torch.relu(self.c(x)) + 1\\n\"}\n"
          "#fake {\"class\": \"Hard\", \"ast_hash\": \"D\", \"family\": \"linear\", "
          "\"note\": \"NEEDS_LLM\"}\n"
          "#fake {\"class\": \"Timm\", \"status\": \"rejected\", \"reason\": \"needs "
          "third-party import 'timm.layers' (unresolvable)\"}\n");
    Write("tests/test_ignored.py", "#fake {\"class\": \"Ignored\"}\n");
    Write("README.md", "not python\n");
  }
  void Write(const std::string& rel, const std::string& text) {
    fs::create_directories(fs::path(repo_ + "/" + rel).parent_path());
    std::ofstream(repo_ + "/" + rel) << text;
  }
  CurateOptions Options() {
    CurateOptions o;
    o.sources = {repo_};
    o.out_dir = dir_.File("out");
    o.jobs = 2;
    o.extract_batch = 2;
    o.inputs_batch = 2;
    o.tool.command = {"python3", kFake};
    // The tool runs sandboxed; its call log is the one place outside its scratch it may write.
    fs::create_directories(dir_.File("log"));
    o.sandbox.writable_paths = DefaultWritablePaths();
    o.sandbox.writable_paths.push_back(dir_.File("log"));
    return o;
  }
  Result<Json> Run(CurateOptions o) {
    setenv("FAKE_CURATE_LOG", dir_.File("log/calls.log").c_str(), 1);
    std::FILE* sink = std::fopen("/dev/null", "w");
    Result<Json> r = Status::Internal("not run");
    {
      Progress progress(sink, false, "");
      r = RunCurate(std::move(o), &progress);
    }
    std::fclose(sink);
    unsetenv("FAKE_CURATE_LOG");
    return r;
  }
  std::map<std::string, Json> Modules() {
    std::map<std::string, Json> out;
    std::istringstream in(*ReadFile(dir_.File("out/modules.jsonl")));
    for (std::string line; std::getline(in, line);) {
      Json j = Json::parse(line);
      if (j["class"].is_string()) out[j["class"].get<std::string>()] = j;
    }
    return out;
  }
  std::string Calls() {
    Result<std::string> text = ReadFile(dir_.File("log/calls.log"));
    return text.ok() ? *text : "";
  }
  ScratchDir dir_;
  std::string repo_;
};

TEST_F(CurateTest, ExtractsDeduplicatesRunsAndWritesEveryOutput) {
  Result<Json> summary = Run(Options());
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ((*summary)["files_scanned"], 3);  // tests/ and README.md left out
  EXPECT_EQ((*summary)["modules_found"], 6);
  EXPECT_EQ((*summary)["self_contained"], 5);
  EXPECT_EQ((*summary)["exact_duplicates"], 1);
  EXPECT_EQ((*summary)["near_duplicates"], 1);
  EXPECT_EQ((*summary)["unique"], 3);
  EXPECT_EQ((*summary)["executable"], 2);
  EXPECT_EQ((*summary)["clusters"], 1);
  EXPECT_EQ((*summary)["families"], Json({{"activation", 1}, {"convolution", 1}}));

  std::map<std::string, Json> m = Modules();
  ASSERT_EQ(m.size(), 6u);
  // Ids follow (file, line): layers.py first, then more/conv.py, then more/near.py.
  EXPECT_EQ(m["Relu"]["id"], 1);
  EXPECT_EQ(m["Relu"]["status"], "ok");
  EXPECT_EQ(m["Relu"]["repo"], "repo");
  EXPECT_EQ(m["Relu"]["file"], "layers.py");
  EXPECT_EQ(m["Relu"]["problem"], "problems/activation/1_Relu.py");
  EXPECT_EQ(m["Relu"]["runtime_us"], 12.5);
  EXPECT_EQ(m["Relu2"]["status"], "duplicate");
  EXPECT_EQ(m["Relu2"]["reason"], "exact duplicate of 1");
  EXPECT_EQ(m["Relu2"]["merged_into"], 1);
  EXPECT_EQ(m["Near"]["status"], "duplicate");
  EXPECT_EQ(m["Near"]["merged_into"], 1);
  EXPECT_GT(m["Near"]["jaccard"].get<double>(), 0.7);
  EXPECT_LT(m["Near"]["jaccard"].get<double>(), 1.0);
  EXPECT_EQ(m["Timm"]["status"], "rejected");
  EXPECT_EQ(m["Timm"]["stage"], "extract");
  EXPECT_NE(m["Timm"]["reason"].get<std::string>().find("timm.layers"), std::string::npos);
  EXPECT_EQ(m["Hard"]["status"], "rejected");
  EXPECT_EQ(m["Hard"]["stage"], "inputs");
  EXPECT_EQ(m["Hard"]["last_error"], "RuntimeError: mat1 and mat2 shapes cannot be multiplied");
  EXPECT_EQ(m["Conv"]["problem"], "problems/convolution/3_Conv.py");
  // The estimate of export/difficulty.h from the source: a layer, an activation and an add.
  EXPECT_EQ(m["Conv"]["difficulty"], 2);
  EXPECT_EQ(m["Relu"]["difficulty"], 1);

  Result<std::string> problem = ReadFile(dir_.File("out/problems/convolution/3_Conv.py"));
  ASSERT_TRUE(problem.ok());
  EXPECT_NE(problem->find("class Model(Conv)"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_.File("out/problems/linear")));
  Json clusters = Json::parse(*ReadFile(dir_.File("out/clusters.json")));
  EXPECT_EQ(clusters["method"], "tfidf+hdbscan");
  ASSERT_EQ(clusters["seeds"].size(), 1u);
  EXPECT_EQ(clusters["seeds"][0]["id"], 1);
  EXPECT_TRUE(fs::exists(dir_.File("out/seeds/1_Relu.py")));
  EXPECT_EQ(m["Relu"]["central"], true);
  EXPECT_EQ(m["Conv"]["cluster"], 0);
  EXPECT_FALSE(fs::exists(dir_.File("out/tmp")));
}

TEST_F(CurateTest, ResumeRedoesNothingAndAFreshRunRefusesAnUsedDirectory) {
  ASSERT_TRUE(Run(Options()).ok());
  std::string first = Calls();
  EXPECT_NE(first.find("extract"), std::string::npos);
  EXPECT_NE(first.find("inputs"), std::string::npos);
  fs::remove(dir_.File("log/calls.log"));

  Result<Json> again = Run(Options());
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("--resume"), std::string::npos);

  CurateOptions o = Options();
  o.resume = true;
  Result<Json> resumed = Run(o);
  ASSERT_TRUE(resumed.ok()) << resumed.status().message();
  EXPECT_EQ(Calls(), "cluster 2\n");  // nothing extracted or run again
  EXPECT_EQ((*resumed)["executable"], 2);
  EXPECT_EQ((*resumed)["resumed"], true);
  EXPECT_EQ(Modules()["Relu2"]["merged_into"], 1);

  o.sources = {repo_, dir_.File("out")};
  Result<Json> other = Run(o);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("cannot resume"), std::string::npos);
}

TEST_F(CurateTest, AFailingFileOrModuleDoesNotSinkItsBatch) {
  Write("more/broken.py", "#crash\n");
  Write("more/zz.py", "#fake {\"class\": \"Boom\", \"ast_hash\": \"E\", \"note\": \"CRASH_INPUTS\"}\n");
  Result<Json> summary = Run(Options());
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  std::map<std::string, Json> m = Modules();
  EXPECT_EQ(m["Relu"]["status"], "ok");  // batched with broken.py
  EXPECT_EQ(m["Conv"]["status"], "ok");
  EXPECT_EQ(m["Boom"]["status"], "rejected");
  EXPECT_NE(m["Boom"]["reason"].get<std::string>().find("inputs failed"), std::string::npos);
  int file_records = 0;
  std::istringstream in(*ReadFile(dir_.File("out/modules.jsonl")));
  for (std::string line; std::getline(in, line);) {
    Json j = Json::parse(line);
    if (j["class"].is_null()) {
      ++file_records;
      EXPECT_EQ(j["file"], "more/broken.py");
      EXPECT_NE(j["reason"].get<std::string>().find("extract failed"), std::string::npos);
    }
  }
  EXPECT_EQ(file_records, 1);
  EXPECT_EQ((*summary)["executable"], 2);
}

TEST_F(CurateTest, LlmAnswersAreVerifiedBeforeTheyCount) {
  Result<std::unique_ptr<TestLlmServer>> server = TestLlmServer::Start(2);
  ASSERT_TRUE(server.ok());
  (*server)->Push(ScriptedReply::Completion(
      "```python\nimport torch\ndef get_init_inputs():\n    return []\n\n"
      "def get_inputs():\n    return [torch.randn(2, 8)]  # good\n```"));
  OpenAiClientOptions co;
  co.base_url = (*server)->base_url();
  co.model = "m";
  co.max_attempts = 1;
  Result<std::unique_ptr<OpenAiClient>> client = OpenAiClient::Create(co);
  ASSERT_TRUE(client.ok());
  CurateOptions o = Options();
  o.llm = std::move(*client);
  o.llm_template = *ReadFile(*DefaultInputsTemplatePath());
  Result<Json> summary = Run(o);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ((*summary)["executable"], 3);
  EXPECT_EQ((*summary)["executable_via_llm"], 1);
  Json hard = Modules()["Hard"];
  EXPECT_EQ(hard["status"], "ok");
  EXPECT_EQ(hard["inputs_via"], "llm");
  EXPECT_EQ(hard["problem"], "problems/linear/4_Hard.py");
  EXPECT_NE(ReadFile(dir_.File("out/problems/linear/4_Hard.py"))->find("torch.randn(2, 8)"),
            std::string::npos);
  ASSERT_EQ((*server)->requests().size(), 1u);
  const std::string& body = (*server)->requests()[0].body;
  EXPECT_NE(body.find("mat1 and mat2 shapes cannot be multiplied"), std::string::npos);
  EXPECT_NE(body.find("class Hard"), std::string::npos);
}

TEST_F(CurateTest, AnLlmAnswerThatFailsIsRecordedAndNotAskedAgain) {
  Result<std::unique_ptr<TestLlmServer>> server = TestLlmServer::Start(2);
  ASSERT_TRUE(server.ok());
  (*server)->SetFallback(ScriptedReply::Completion(
      "def get_init_inputs():\n    return []\ndef get_inputs():\n    return [1]\n"));
  OpenAiClientOptions co;
  co.base_url = (*server)->base_url();
  co.model = "m";
  CurateOptions o = Options();
  o.llm = std::move(*OpenAiClient::Create(co));
  o.llm_template = *ReadFile(*DefaultInputsTemplatePath());
  ASSERT_TRUE(Run(o).ok());
  Json hard = Modules()["Hard"];
  EXPECT_EQ(hard["status"], "rejected");
  EXPECT_EQ(hard["stage"], "llm");
  EXPECT_NE(hard["reason"].get<std::string>().find("LLM repair: the LLM's inputs did not pass"),
            std::string::npos);
  o.resume = true;
  ASSERT_TRUE(Run(o).ok());
  EXPECT_EQ((*server)->requests().size(), 1u);
}

TEST_F(CurateTest, AMissingPackageIsAClearError) {
  CurateOptions o = Options();
  o.tool.command = {"python3", "-m", "no_such_curate_package"};
  Result<Json> r = Run(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cannot run the curate package"), std::string::npos);
  EXPECT_NE(r.status().message().find("No module named"), std::string::npos);
}

}  // namespace
}  // namespace ks
