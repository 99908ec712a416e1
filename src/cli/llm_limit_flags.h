// The LLM-call limits evolve and bench share: --max-tokens, --context-tokens, --llm-timeout.
#pragma once

#include <CLI/CLI.hpp>

namespace ks {

struct LlmLimits {
  int max_tokens = 32768;      // completion cap per call (the paper's 32K)
  int context_tokens = 0;      // the model's context; 0: asked from the server
  double llm_timeout_s = 900;  // one call's limit per attempt (reasoning models are slow)
};

// Registers the three flags on `cmd`, writing into `limits`.
void AddLlmLimitFlags(CLI::App* cmd, LlmLimits& limits);

}  // namespace ks
