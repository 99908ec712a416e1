#include "llm/prompt_builder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace ks {
namespace {

namespace fs = std::filesystem;

bool Has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

const char kReference[] = R"(import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)
)";

const char kProgram[] = R"(import torch
# EVOLVE-BLOCK-START
BLOCK_SIZE = 1024
class ModelNew(nn.Module):
    pass
# EVOLVE-BLOCK-END
)";

PromptInput Input() {
  PromptInput in;
  in.backend = "triton";
  in.hardware = "NVIDIA H100 80GB HBM3 (sm_90)";
  in.reference_code = kReference;
  in.current_program = kProgram;
  in.current_metrics = "correct, speedup 1.10x";
  in.feedback = "FEEDBACK-HEAD correct 5/5 trials\n" + std::string(4000, 'f') + "\nFEEDBACK-TAIL";
  for (int i = 0; i < 10; ++i) {
    in.history.push_back({"HISTORY-" + std::to_string(i) + " " + std::string(400, 'h'),
                          "speedup 1.0" + std::to_string(i) + "x"});
  }
  for (int i = 0; i < 4; ++i) {
    in.top_programs.push_back({"TOP-" + std::to_string(i) + "\n" + std::string(2000, 't'),
                               "speedup 2.0" + std::to_string(i) + "x"});
  }
  return in;
}

// A scratch template directory, removed at the end of the test.
class PromptTemplateDir {
 public:
  PromptTemplateDir() {
    static int n = 0;
    path_ = fs::temp_directory_path() /
            ("ks_prompt_test_" + std::to_string(getpid()) + "_" + std::to_string(n++));
    fs::create_directories(path_);
  }
  ~PromptTemplateDir() { fs::remove_all(path_); }
  void Write(const std::string& rel, const std::string& text) {
    fs::create_directories((path_ / rel).parent_path());
    std::ofstream(path_ / rel) << text;
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

Result<Prompt> BuildWithCap(const PromptInput& in, int64_t cap) {
  PromptBuilderOptions o;
  o.max_prompt_tokens = cap;
  auto b = PromptBuilder::Create(o);
  if (!b.ok()) return b.status();
  return b->Build(in);
}

TEST(PromptBuilderTest, BuiltinTemplatesFillEveryPlaceholderForEveryBackend) {
  auto b = PromptBuilder::Create();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  for (const char* backend : {"triton", "cuda", "cpu"}) {
    PromptInput in = Input();
    in.backend = backend;
    Result<Prompt> p = b->Build(in);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_FALSE(p->translation);
    EXPECT_TRUE(p->trimmed.empty());
    for (const std::string* part : {&p->system, &p->user}) {
      EXPECT_FALSE(Has(*part, "{{")) << backend << ": unfilled placeholder in\n" << *part;
    }
    EXPECT_TRUE(Has(p->system, "faster than the PyTorch reference")) << backend;
    EXPECT_TRUE(Has(p->system, "dispatcher level")) << backend;
    EXPECT_TRUE(Has(p->system, "NVIDIA H100 80GB HBM3 (sm_90)")) << backend;
    EXPECT_TRUE(Has(p->system, "<<<<<<< SEARCH")) << backend << ": output format missing";
    EXPECT_TRUE(Has(p->user, "return torch.softmax(x, dim=-1)\n```")) << backend;
    EXPECT_TRUE(Has(p->user, "BLOCK_SIZE = 1024")) << backend;
    EXPECT_TRUE(Has(p->user, "correct, speedup 1.10x")) << backend;
    EXPECT_TRUE(Has(p->user, "HISTORY-0") && Has(p->user, "HISTORY-9")) << backend;
    EXPECT_TRUE(Has(p->user, "TOP-3")) << backend;
    EXPECT_TRUE(Has(p->user, "FEEDBACK-TAIL")) << backend;
    ASSERT_EQ(p->Messages().size(), 2u);
    EXPECT_EQ(p->Messages()[0].role, "system");
  }
}

TEST(PromptBuilderTest, EmptyCurrentProgramBuildsATranslationPrompt) {
  PromptInput in = Input();
  in.current_program.clear();
  in.feedback.clear();
  Result<Prompt> p = BuildWithCap(in, 32768);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->translation);
  EXPECT_TRUE(Has(p->system, "complete candidate file"));
  EXPECT_FALSE(Has(p->system, "<<<<<<< SEARCH"));
  EXPECT_TRUE(Has(p->user, "Triton kernels"));
  EXPECT_TRUE(Has(p->user, "class Model(nn.Module)"));
}

TEST(PromptBuilderTest, TrimsHistoryFirstThenTopProgramsThenFeedback) {
  PromptInput in = Input();
  Result<Prompt> full = BuildWithCap(in, 1 << 20);
  ASSERT_TRUE(full.ok());
  PromptInput bare = in;
  bare.history.clear();
  bare.top_programs.clear();
  bare.feedback.clear();
  Result<Prompt> base = BuildWithCap(bare, 1 << 20);
  ASSERT_TRUE(base.ok());

  // A little too long: only the oldest history goes.
  Result<Prompt> p = BuildWithCap(in, full->estimated_tokens - 150);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_FALSE(Has(p->user, "HISTORY-0 "));
  EXPECT_TRUE(Has(p->user, "HISTORY-9 "));
  EXPECT_TRUE(Has(p->user, "earlier attempts omitted"));
  EXPECT_TRUE(Has(p->user, "TOP-3"));
  EXPECT_TRUE(Has(p->user, "FEEDBACK-TAIL"));
  EXPECT_LE(p->estimated_tokens, full->estimated_tokens - 150);
  ASSERT_EQ(p->trimmed.size(), 1u);
  EXPECT_TRUE(Has(p->trimmed[0], "history entries"));

  // History is not enough: all of it goes, then the lowest-ranked top programs.
  p = BuildWithCap(in, full->estimated_tokens - 1500);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_FALSE(Has(p->user, "HISTORY-9 "));
  EXPECT_TRUE(Has(p->user, "TOP-0"));
  EXPECT_FALSE(Has(p->user, "TOP-3"));
  EXPECT_TRUE(Has(p->user, "more programs omitted"));
  EXPECT_TRUE(Has(p->user, "FEEDBACK-TAIL")) << "feedback is cut only after the rest";

  // Only then the feedback, keeping its head and tail.
  p = BuildWithCap(in, base->estimated_tokens + 500);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_FALSE(Has(p->user, "TOP-0"));
  EXPECT_TRUE(Has(p->user, "FEEDBACK-HEAD"));
  EXPECT_TRUE(Has(p->user, "FEEDBACK-TAIL"));
  EXPECT_TRUE(Has(p->user, "characters of feedback trimmed"));
  EXPECT_LE(p->estimated_tokens, base->estimated_tokens + 500);
  EXPECT_EQ(p->trimmed.size(), 3u);

  // The reference and the current program are never cut.
  p = BuildWithCap(in, base->estimated_tokens - 10);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Has(p.status().message(), "over the cap of")) << p.status().message();
}

TEST(PromptBuilderTest, UnknownPlaceholderNamesTheFileAndLine) {
  PromptTemplateDir dir;
  dir.Write("triton/user.md", "# Current\n\n{{current_program}}\n{{curent_metrics}}\n");
  PromptBuilderOptions o;
  o.template_dir = dir.path();
  o.backends = {"triton"};
  auto b = PromptBuilder::Create(o);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Has(b.status().message(), "unknown placeholder {{curent_metrics}}"))
      << b.status().message();
  EXPECT_TRUE(Has(b.status().message(), dir.path() + "/triton/user.md (line 4)"))
      << b.status().message();
}

TEST(PromptBuilderTest, UserDirectoryOverridesSomeFilesAndValuesAreNotRescanned) {
  PromptTemplateDir dir;
  dir.Write("triton/system.md", "CUSTOM SYSTEM for {{backend}} {{0}} {{ x }}\n{{output_format}}");
  PromptBuilderOptions o;
  o.template_dir = dir.path();
  o.backends = {"triton"};
  auto b = PromptBuilder::Create(o);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  PromptInput in = Input();
  in.reference_code = "x = '{{feedback}}'\n";
  Result<Prompt> p = b->Build(in);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(Has(p->system, "CUSTOM SYSTEM for triton {{0}} {{ x }}")) << p->system;
  EXPECT_TRUE(Has(p->user, "x = '{{feedback}}'")) << "a value must not be expanded again";
  EXPECT_TRUE(Has(p->user, "# Evaluator feedback")) << "user.md comes from the built-in dir";
}

TEST(PromptBuilderTest, MissingTemplatesAndUnknownBackendsAreClearErrors) {
  PromptBuilderOptions o;
  o.backends = {"rocm"};
  auto b = PromptBuilder::Create(o);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), Status::Code::kNotFound);
  EXPECT_TRUE(Has(b.status().message(), "rocm/system.md not found")) << b.status().message();

  auto ok = PromptBuilder::Create();
  ASSERT_TRUE(ok.ok());
  PromptInput in = Input();
  in.backend = "rocm";
  Result<Prompt> p = ok->Build(in);
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(Has(p.status().message(), "backend 'rocm'"));
}

}  // namespace
}  // namespace ks
