#include "curate/llm_inputs.h"

#include <gtest/gtest.h>

#include "core/file.h"

namespace ks {
namespace {

TEST(LlmInputsTest, BuiltInTemplateFillsEveryPlaceholder) {
  Result<std::string> tmpl = ReadFile(*DefaultInputsTemplatePath());
  ASSERT_TRUE(tmpl.ok()) << tmpl.status().message();
  Result<ChatRequest> r = BuildInputsRequest(*tmpl, "Block", "class Block(nn.Module): ...",
                                             "RuntimeError: shape mismatch");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->messages.size(), 1u);
  const std::string& text = r->messages[0].content;
  EXPECT_NE(text.find("class Block(nn.Module): ..."), std::string::npos);
  EXPECT_NE(text.find("RuntimeError: shape mismatch"), std::string::npos);
  EXPECT_NE(text.find("`Block(...)`"), std::string::npos);
  EXPECT_EQ(text.find("{{"), std::string::npos);
}

TEST(LlmInputsTest, UnknownPlaceholderIsNamed) {
  Result<ChatRequest> r = BuildInputsRequest("x {{sauce}} y", "A", "s", "e");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("{{sauce}}"), std::string::npos);
}

TEST(LlmInputsTest, ParsesFunctionsFromAFencedReplyWithImports) {
  std::string reply =
      "Here you go:\n```python\nimport torch\n\ndef get_init_inputs():\n    return [16, 4]\n\n\n"
      "def get_inputs():\n    x = torch.randn(2, 16,\n"
      ")\n    return [x]\n\nprint('ignored')\n```\nDone.";
  Result<CandidateInputs> c = ParseInputsReply(reply);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->get_init_inputs, "def get_init_inputs():\n    return [16, 4]\n");
  EXPECT_EQ(c->get_inputs,
            "import torch\ndef get_inputs():\n    x = torch.randn(2, 16,\n)\n    return [x]\n");
}

TEST(LlmInputsTest, UnfencedReplyWorksAndAMissingFunctionIsAnError) {
  Result<CandidateInputs> c =
      ParseInputsReply("def get_inputs():\n    return []\ndef get_init_inputs():\n    return []\n");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->get_inputs, "def get_inputs():\n    return []\n");
  Result<CandidateInputs> missing = ParseInputsReply("```python\ndef get_inputs():\n  pass\n```");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("get_init_inputs()"), std::string::npos);
}

}  // namespace
}  // namespace ks
