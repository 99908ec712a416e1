// Building the chat prompt for one proposal from the per-backend template files under
// prompts/<backend>/ (system.md, user.md, translate.md) and prompts/common/ (output formats).
//
// Templates hold `{{name}}` placeholders (name: a letter, then letters, digits or '_'); other
// text, `{{` included, is copied as it is. Values are inserted in one pass and never scanned
// again, so code that contains braces is safe. Known names: reference_code, current_program,
// current_metrics, feedback, history, top_programs, output_format, hardware, backend.
//
// The prompt is kept under a token cap (estimated as characters / 4): the oldest history
// entries go first, then the lowest-ranked top programs, then the middle of the feedback. The
// reference and the current program are never cut; if they alone exceed the cap, Build fails.
// Thread-safety: a built PromptBuilder is immutable; Build may run on several threads.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "llm/llm_client.h"
#include "llm/token_estimate.h"

namespace ks {

struct HistoryEntry {
  std::string summary;  // what the attempt changed, e.g. "BLOCK_SIZE 1024→2048, fused bias"
  std::string metrics;  // how it did, e.g. "correct, speedup 1.31x" or "compile_error: ..."
};

struct TopProgram {
  std::string code;     // the program (or its EVOLVE-BLOCK)
  std::string metrics;  // e.g. "correct, speedup 2.10x"
};

struct PromptInput {
  std::string backend;          // template folder: "triton", "cuda" or "cpu"
  std::string hardware;         // e.g. "NVIDIA H100 80GB HBM3 (sm_90)"; empty: generic text
  std::string reference_code;   // the problem module; never trimmed
  std::string current_program;  // the parent; never trimmed. Empty: translation (translate.md)
  std::string current_metrics;  // the parent's metrics line
  std::string feedback;         // the evaluator's feedback on the parent; trimmed last
  std::vector<HistoryEntry> history;     // oldest first; the oldest are dropped first
  std::vector<TopProgram> top_programs;  // best first; the last are dropped first
};

struct Prompt {
  std::string system;
  std::string user;
  int64_t estimated_tokens = 0;      // of system + user
  bool translation = false;          // built from translate.md
  std::vector<std::string> trimmed;  // what was cut to fit, e.g. "dropped 3 of 8 history entries"

  std::vector<ChatMessage> Messages() const;  // {system, user}
};

struct PromptBuilderOptions {
  // Searched first for BACKEND/FILE and common/FILE; files missing there come from
  // `builtin_dir`. Empty: only the built-in templates.
  std::string template_dir;
  // The templates shipped with kernelsmith. Empty: the resources' prompts/ (FindResources).
  std::string builtin_dir;
  // Backends whose templates are loaded (and checked) by Create.
  std::vector<std::string> backends = {"triton", "cuda", "cpu"};
  int64_t max_prompt_tokens = 32768;  // cap on system + user; the paper's 32K
};

class PromptBuilder {
 public:
  // Loads and checks every template. NotFound names a missing file and where it was looked
  // for; InvalidArgument names the file and line of an unknown placeholder.
  static Result<PromptBuilder> Create(PromptBuilderOptions options = {});

  // InvalidArgument for a backend that was not loaded, or when the reference and the current
  // program alone do not fit under the cap.
  Result<Prompt> Build(const PromptInput& input) const;

  static int64_t EstimateTokens(std::string_view text) { return ks::EstimateTokens(text); }

 private:
  struct Template {
    std::string path;
    std::string text;
  };
  struct BackendTemplates {
    Template system, user, translate, format_edit, format_translate;
  };
  explicit PromptBuilder(PromptBuilderOptions options) : options_(std::move(options)) {}

  const PromptBuilderOptions options_;
  std::map<std::string, BackendTemplates> backends_;
};

}  // namespace ks
