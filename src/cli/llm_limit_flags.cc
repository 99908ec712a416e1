#include "cli/llm_limit_flags.h"

#include <cstdint>

#include "llm/context_budget.h"

namespace ks {

void AddLlmLimitFlags(CLI::App* cmd, LlmLimits& limits) {
  cmd->add_option("--max-tokens", limits.max_tokens,
                  "Completion tokens per LLM call at most; capped to what the prompt leaves of "
                  "the model's context")
      ->check(CLI::Range(kMinCompletionTokens, int64_t{1} << 30))
      ->capture_default_str();
  cmd->add_option("--context-tokens", limits.context_tokens,
                  "The model's context length (default: asked from the server's /models, as "
                  "vLLM and SGLang report it)")
      ->check(CLI::Range(0, 1 << 30));
  cmd->add_option("--llm-timeout", limits.llm_timeout_s,
                  "Seconds one LLM call may take per attempt (raise it for reasoning models)")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
}

}  // namespace ks
