// LlmProposer: asks a language model (any LlmClient: an OpenAI-compatible endpoint, an
// ensemble, or a user command) for a child of the parent program, or for a translation of the
// reference when there is no parent. Every call is stored (Store::RecordLlmCall) with the
// exact request and completion, tokens, latency and error. A reply that cannot be used (no
// code, a SEARCH that matches nothing, ...) is answered once with the exact reason; if the
// second reply is unusable too, Propose returns InvalidArgument with that reason.
//
// Prompts: built-in system texts (or <prompts_dir>/<backend>/engine_system.md and
// engine_translate.md when `prompts_dir` is set), the user part (reference, current program
// with its metrics and errors, top programs, output format) assembled here. To be replaced by
// src/llm/prompt_builder (prompts/<backend>/*.md) once that lands.
// Thread-safety: Propose may be called from several threads at once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/proposer.h"
#include "llm/llm_client.h"
#include "store/store.h"

namespace ks {

struct LlmProposerOptions {
  std::string run_id;  // the run the calls are stored under; required
  std::string model;   // recorded with each call (the client's own default is used)
  ProposerKind kind = ProposerKind::kLlm;
  double temperature = 0.6;
  double top_p = 0.95;
  int max_tokens = 32768;
  size_t max_prompt_chars = 32768 * 4;  // inspirations are dropped first to stay under it
  std::string prompts_dir;              // empty: built-in texts
};

// The chat messages for `context` (system + user). Exposed for tests.
std::vector<ChatMessage> BuildProposalMessages(const ProposalContext& context,
                                               const LlmProposerOptions& options);

class LlmProposer : public Proposer {
 public:
  // `store` must outlive the proposer.
  LlmProposer(std::shared_ptr<LlmClient> client, Store* store, LlmProposerOptions options);
  Result<Proposal> Propose(const ProposalContext& context) override;
  ProposerKind kind() const override { return options_.kind; }
  bool can_translate() const override { return true; }

 private:
  const std::shared_ptr<LlmClient> client_;
  Store* const store_;
  const LlmProposerOptions options_;
};

// An LlmClient that runs `command` through /bin/sh with the conversation on stdin (each
// message as "## <role>\n<content>\n") and takes its stdout as the completion. A non-zero exit
// is IOError with the stderr tail; running past `timeout_s` is Timeout (process group killed).
std::shared_ptr<LlmClient> MakeCommandClient(std::string command, double timeout_s);

}  // namespace ks
