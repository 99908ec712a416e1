// LlmProposer: asks a language model (any LlmClient: an OpenAI-compatible endpoint, an
// ensemble, or a user command) for a child of the parent program, or for a translation of the
// reference when there is no parent. Every call is stored (Store::RecordLlmCall) with the
// exact request and completion, tokens, latency and error. A reply that cannot be used (no
// code, a SEARCH that matches nothing, ...) is answered once with the exact reason; if the
// second reply is unusable too, Propose returns InvalidArgument with that reason. An unusable
// reply is echoed in the follow-up whole when short, else as its first and last 8 KiB. When a
// call fails and the client has given up on its endpoint(s) (LlmClient::GaveUp), Propose
// returns a StopRunStatus so that the engine stops instead of spinning.
//
// Prompts come from the template files prompts/<backend>/{system,user,translate}.md (or a
// user directory that overrides some of them), filled by PromptBuilder (llm/prompt_builder.h)
// with the reference, the current program with its metrics and feedback, the parent's lineage,
// top programs and the hardware, and kept under the token cap.
// Thread-safety: Propose may be called from several threads at once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/proposer.h"
#include "llm/llm_client.h"
#include "llm/prompt_builder.h"
#include "store/store.h"

namespace ks {

struct LlmProposerOptions {
  std::string run_id;  // the run the calls are stored under; required
  std::string model;   // recorded with each call (the client's own default is used)
  ProposerKind kind = ProposerKind::kLlm;
  double temperature = 0.6;
  double top_p = 0.95;
  int max_tokens = 32768;
  int64_t max_prompt_tokens = 32768;  // the builder trims history, then top programs
  std::string prompts_dir;            // user templates (DIR/<backend>/*.md); empty: built-in
};

// The PromptBuilder input for `context`. Exposed for tests.
PromptInput BuildPromptInput(const ProposalContext& context);

class LlmProposer : public Proposer {
 public:
  // Loads the templates; NotFound / InvalidArgument name a missing or bad template file.
  // `store` must outlive the proposer.
  static Result<std::unique_ptr<LlmProposer>> Create(std::shared_ptr<LlmClient> client,
                                                     Store* store, LlmProposerOptions options);
  Result<Proposal> Propose(const ProposalContext& context) override;
  ProposerKind kind() const override { return options_.kind; }
  bool can_translate() const override { return true; }

 protected:
  LlmProposer(std::shared_ptr<LlmClient> client, Store* store, LlmProposerOptions options,
              PromptBuilder builder);
  // One exchange of the conversation (`turn` 0: the prompt, 1: the follow-up after an
  // unusable reply). A WaitingStatus is passed on to the engine without storing a call.
  virtual Result<ChatResponse> Ask(const ProposalContext& context, const ChatRequest& request,
                                   int turn);
  virtual std::string Endpoint() const { return client_->Endpoint(); }

 private:
  const std::shared_ptr<LlmClient> client_;
  Store* const store_;
  const LlmProposerOptions options_;
  const PromptBuilder builder_;
};

// An LlmClient that runs `command` through /bin/sh with the conversation on stdin (each
// message as "## <role>\n<content>\n") and takes its stdout as the completion. A non-zero exit
// is IOError with the stderr tail; running past `timeout_s` is Timeout (process group killed).
std::shared_ptr<LlmClient> MakeCommandClient(std::string command, double timeout_s);

// The files proposer (a person or an outside agent in the loop): each prompt goes to
// `exchange_dir`/<run>-r<round>-s<slot>.prompt.md (the follow-up after an unusable reply to
// ...-retry.prompt.md) and the answer is read from the same name with .answer.md. A missing
// answer is a WaitingStatus; the resumed run finds the same names again.
Result<std::unique_ptr<Proposer>> MakeFilesProposer(Store* store, LlmProposerOptions options,
                                                    std::string exchange_dir);

// "<run>-r<round>-s<slot>": the exchange file stem of a proposal (without the turn suffix).
std::string ExchangeStem(const ProposalContext& context);

}  // namespace ks
