#include "engine/llm_proposer.h"

#include <fmt/format.h>

#include <algorithm>

#include "propose/reply_parser.h"
#include "task/task.h"

namespace ks {
namespace {

std::string Metrics(const Program& p) {
  if (p.correct && p.speedup) return fmt::format("correct, speedup {:.3f}x", *p.speedup);
  return p.correct ? "correct" : fmt::format("not correct (fitness {:.3f})", p.fitness);
}

nlohmann::json RequestJson(const ChatRequest& request) {
  nlohmann::json messages = nlohmann::json::array();
  for (const ChatMessage& m : request.messages) {
    messages.push_back({{"role", m.role}, {"content", m.content}});
  }
  return {{"messages", messages},
          {"params",
           {{"temperature", request.temperature},
            {"top_p", request.top_p},
            {"max_tokens", request.max_tokens}}}};
}

// The unusable reply as it is sent back in the follow-up: whole when short, else its start
// and end around a note of what was cut, so that an enormous reply does not make an enormous
// second request.
std::string EchoOfReply(const std::string& reply) {
  constexpr size_t kKeep = 8192;
  if (reply.size() <= 2 * kKeep) return reply;
  return reply.substr(0, kKeep) +
         fmt::format("\n[... {} characters of this reply cut ...]\n", reply.size() - 2 * kKeep) +
         reply.substr(reply.size() - kKeep);
}

}  // namespace

PromptInput BuildPromptInput(const ProposalContext& c) {
  PromptInput in;
  in.backend = c.backend;
  in.hardware = c.hardware;
  in.reference_code = c.reference_source;
  if (!c.parent) return in;  // translation
  in.current_program = c.parent->code;
  in.current_metrics = Metrics(*c.parent);
  if (!c.parent_status.empty()) in.current_metrics += " (" + c.parent_status + ")";
  in.feedback = c.parent_feedback;
  for (const AttemptSummary& a : c.history) in.history.push_back({a.summary, a.metrics});
  std::vector<const Program*> top;
  for (const Program& p : c.inspirations) top.push_back(&p);
  std::stable_sort(top.begin(), top.end(),
                   [](const Program* a, const Program* b) { return a->fitness > b->fitness; });
  for (const Program* p : top) {
    in.top_programs.push_back({p->code, p->id.substr(0, p->id.find('@')) + ": " + Metrics(*p)});
  }
  return in;
}

Result<std::unique_ptr<LlmProposer>> LlmProposer::Create(std::shared_ptr<LlmClient> client,
                                                         Store* store, LlmProposerOptions options) {
  PromptBuilderOptions bo;
  bo.template_dir = options.prompts_dir;
  bo.max_prompt_tokens = options.max_prompt_tokens;
  Result<PromptBuilder> builder = PromptBuilder::Create(bo);
  if (!builder.ok()) return builder.status();
  return std::unique_ptr<LlmProposer>(
      new LlmProposer(std::move(client), store, std::move(options), std::move(*builder)));
}

LlmProposer::LlmProposer(std::shared_ptr<LlmClient> client, Store* store,
                         LlmProposerOptions options, PromptBuilder builder)
    : client_(std::move(client)),
      store_(store),
      options_(std::move(options)),
      builder_(std::move(builder)) {}

Result<ChatResponse> LlmProposer::Ask(const ProposalContext&, const ChatRequest& request, int) {
  return client_->Complete(request);
}

Result<Proposal> LlmProposer::Propose(const ProposalContext& context) {
  Result<Prompt> prompt = builder_.Build(BuildPromptInput(context));
  if (!prompt.ok()) return Status::IOError("cannot build the prompt: " + prompt.status().message());
  ChatRequest request;
  request.messages = prompt->Messages();
  request.temperature = options_.temperature;
  request.top_p = options_.top_p;
  request.max_tokens = options_.max_tokens;
  for (int turn = 0; turn < 2; ++turn) {
    Result<ChatResponse> response = Ask(context, request, turn);
    if (!response.ok() && IsWaiting(response.status())) return response.status();
    LlmCallRecord call;
    call.run_id = options_.run_id;
    call.model = options_.model;
    call.endpoint = Endpoint();
    call.request = RequestJson(request);
    if (!prompt->trimmed.empty()) call.request["trimmed"] = prompt->trimmed;
    if (!response.ok()) {
      call.error = response.status().message();
      if (Result<int64_t> stored = store_->RecordLlmCall(call); !stored.ok()) {
        return Status::IOError("LLM call failed (" + response.status().message() +
                               ") and could not be stored in run.db: " + stored.status().message());
      }
      if (Status gave_up = client_ ? client_->GaveUp() : Status::Ok(); !gave_up.ok()) {
        return StopRunStatus(gave_up.message() + "; once it answers again, continue with --resume");
      }
      return Status::IOError("LLM call failed: " + response.status().message());
    }
    call.completion = response->content;
    if (response->usage_reported) {  // else usage/llm_usage.h estimates them from the text
      call.prompt_tokens = response->prompt_tokens;
      call.completion_tokens = response->completion_tokens;
    }
    call.latency_s = response->latency_s;
    call.attempt = std::max(response->attempts, 1);
    if (!response->model.empty()) call.model = response->model;

    Result<Edit> edit = ParseReply(response->content);
    Result<std::string> child = edit.status();
    if (edit.ok()) {
      if (context.parent) {
        child = ApplyEdit(context.parent->code, *edit);
      } else if (edit->kind == Edit::Kind::kSearchReplace) {
        child = Status::InvalidArgument(
            "a translation must be a whole file in one code block, not SEARCH/REPLACE diffs");
      } else if (!MissingTopLevelNames(edit->code, {"ModelNew"}).empty()) {
        child = Status::InvalidArgument("the code block does not define `class ModelNew`");
      } else {
        child = edit->code;
      }
    }
    if (!child.ok()) call.error = "reply not usable: " + child.status().message();
    Result<int64_t> id = store_->RecordLlmCall(call);
    if (!id.ok()) {  // every call is a row: a reply that cannot be stored is not used
      return Status::IOError("the LLM's reply could not be stored in run.db: " +
                             id.status().message());
    }
    if (child.ok()) {
      Proposal proposal;
      proposal.code = std::move(*child);
      proposal.description =
          context.parent ? std::string(EditKindName(edit->kind)) : std::string("translation");
      proposal.llm_call_id = *id;
      proposal.kind = context.parent ? ProgramKind::kEvolution : ProgramKind::kTranslation;
      return proposal;
    }
    if (turn == 1) return child.status();
    request.messages.push_back({"assistant", EchoOfReply(response->content)});
    request.messages.push_back(
        {"user", "Your reply could not be applied: " + child.status().message() +
                     "\nReply again with SEARCH/REPLACE diffs whose SEARCH text is copied "
                     "exactly from the current program, or with the whole EVOLVE-BLOCK."});
  }
  return Status::Internal("unreachable");
}

}  // namespace ks
