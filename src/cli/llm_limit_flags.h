// The LLM-call limits evolve and bench share: --max-tokens, --context-tokens, --llm-timeout.
#pragma once

#include <CLI/CLI.hpp>

#include "engine/proposer_factory.h"

namespace ks {

// Registers the three flags on `cmd`, writing into `limits`.
void AddLlmLimitFlags(CLI::App* cmd, LlmLimits& limits);

}  // namespace ks
