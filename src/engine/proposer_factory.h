// Building the proposer an evolve run asks for: the tuner, an LLM endpoint or a weighted
// ensemble of them, a user command, or the files exchange; optionally mixed with the tuner as
// a cheap local polisher (`tuner_ratio`).
// Thread-safety: functions only; the proposers made are safe as Proposer requires.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/proposer.h"
#include "llm/llm_client.h"
#include "store/store.h"

namespace ks {

struct LlmEndpointSpec {
  std::string url;          // OpenAI-compatible base URL, e.g. http://localhost:8000/v1
  std::string model;        // model name at that endpoint
  double weight = 1;        // share of the calls in an ensemble (> 0)
  std::string api_key_env;  // environment variable holding the key; empty: none
};

// Parses "URL,MODEL[,WEIGHT[,API_KEY_ENV]]" (the --llm flag). InvalidArgument says what is
// wrong with `text`.
Result<LlmEndpointSpec> ParseLlmEndpointSpec(const std::string& text);

// Limits of each LLM call (flags --max-tokens, --context-tokens, --llm-timeout).
struct LlmLimits {
  int max_tokens = 32768;      // completion cap per call (the paper's 32K), fitted to the context
  int context_tokens = 0;      // the model's context; 0: asked from the server
  double llm_timeout_s = 900;  // one call's limit per attempt (reasoning models are slow)
};

struct ProposerSpec {
  std::string kind = "tuner";         // "tuner", "llm", "command" or "files"
  std::string run_id;                 // the run the LLM calls are stored under
  std::vector<LlmEndpointSpec> llms;  // kind llm: one endpoint, or several for an ensemble
  int max_in_flight = 4;              // requests on the wire per endpoint
  std::string command;                // kind command: run by /bin/sh
  double command_timeout_s = 600;
  std::string exchange_dir;  // kind files: where prompts and answers are exchanged
  std::string prompts_dir;   // user prompt templates; empty: prompts/ of the source tree
  int64_t max_prompt_tokens = 32768;
  LlmLimits limits;
  double tuner_ratio = 0;  // share of proposals given to the tuner (not for kind tuner)
  uint64_t seed = 42;
  // Kinds llm and command: this client instead of one made from `llms` or `command` (one client
  // shared by several runs); null: made here.
  std::shared_ptr<LlmClient> client;
};

// The client of spec.llms: one endpoint behind a dead-endpoint guard (a run stops with the
// endpoint's error after a few failed calls in a row instead of spinning), or a weighted
// ensemble of several; each member fits max_tokens into its model's context.
Result<std::shared_ptr<LlmClient>> MakeLlmClient(const ProposerSpec& spec);

// InvalidArgument for an incomplete spec (e.g. kind llm without endpoints) or a bad template
// directory; the message names the flag to fix.
Result<std::unique_ptr<Proposer>> MakeProposer(const ProposerSpec& spec, Store* store);

}  // namespace ks
