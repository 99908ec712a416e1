#include "engine/llm_proposer.h"

#include <fmt/format.h>

#include "core/file.h"
#include "propose/reply_parser.h"
#include "task/task.h"

namespace ks {
namespace {

const char* kDefaultSystem =
    "You are an expert GPU kernel engineer. You make a PyTorch module faster by writing a "
    "custom kernel for the {backend} backend. Keep kernel signatures, grid logic and boundary "
    "masks unless your edit says why; never fall back to PyTorch compute ops in "
    "ModelNew.forward; the result must match the reference within atol=rtol=1e-2.\n"
    "Answer with SEARCH/REPLACE diffs of the current program's EVOLVE-BLOCK:\n"
    "<<<<<<< SEARCH\nexact lines\n=======\nnew lines\n>>>>>>> REPLACE\n"
    "or with a rewrite of the whole EVOLVE-BLOCK (markers included) in one ```python block.\n";

const char* kDefaultTranslate =
    "You are an expert GPU kernel engineer. Translate the PyTorch reference below into a "
    "candidate for the {backend} backend: a complete Python file defining `class ModelNew` with "
    "the same constructor and forward signature as `Model`, whose computation runs in a custom "
    "kernel (no PyTorch compute ops in forward). Put the kernel and ModelNew between "
    "`# EVOLVE-BLOCK-START` and `# EVOLVE-BLOCK-END` lines. Answer with the whole file in one "
    "```python block.\n";

std::string Template(const LlmProposerOptions& options, const std::string& backend,
                     const std::string& name, const char* fallback) {
  std::string t = fallback;
  if (!options.prompts_dir.empty()) {
    Result<std::string> text = ReadFile(options.prompts_dir + "/" + backend + "/" + name);
    if (text.ok()) t = *text;
  }
  for (size_t at = t.find("{backend}"); at != std::string::npos; at = t.find("{backend}")) {
    t.replace(at, 9, backend);
  }
  return t;
}

std::string Metrics(const Program& p) {
  if (p.correct && p.speedup) return fmt::format("correct, speedup {:.3f}x", *p.speedup);
  return p.correct ? "correct" : fmt::format("not correct (fitness {:.3f})", p.fitness);
}

}  // namespace

std::vector<ChatMessage> BuildProposalMessages(const ProposalContext& c,
                                               const LlmProposerOptions& options) {
  if (!c.parent) {
    return {{"system", Template(options, c.backend, "engine_translate.md", kDefaultTranslate)},
            {"user", "# Reference (PyTorch)\n```python\n" + c.reference_source + "```\n"}};
  }
  std::string head = "# Reference (PyTorch)\n```python\n" + c.reference_source + "```\n\n";
  std::string tail = "# Current program (" + Metrics(*c.parent) + ")\n```python\n" +
                     c.parent->code + "```\n\n# Its evaluation (" + c.parent_status + ")\n" +
                     c.parent_feedback +
                     "\n\nPropose one improvement: make it faster while staying correct, or fix "
                     "the errors above. Change only the EVOLVE-BLOCK.\n";
  std::string inspirations;
  for (const Program& p : c.inspirations) {
    std::string one = "## " + p.id + " (" + Metrics(p) + ")\n```python\n" + p.code + "```\n\n";
    if (head.size() + inspirations.size() + one.size() + tail.size() > options.max_prompt_chars) {
      break;
    }
    inspirations += one;
  }
  if (!inspirations.empty()) inspirations = "# Other programs\n" + inspirations;
  return {{"system", Template(options, c.backend, "engine_system.md", kDefaultSystem)},
          {"user", head + inspirations + tail}};
}

LlmProposer::LlmProposer(std::shared_ptr<LlmClient> client, Store* store,
                         LlmProposerOptions options)
    : client_(std::move(client)), store_(store), options_(std::move(options)) {}

Result<Proposal> LlmProposer::Propose(const ProposalContext& context) {
  ChatRequest request;
  request.messages = BuildProposalMessages(context, options_);
  request.temperature = options_.temperature;
  request.top_p = options_.top_p;
  request.max_tokens = options_.max_tokens;
  for (int turn = 0; turn < 2; ++turn) {
    Result<ChatResponse> response = client_->Complete(request);
    LlmCallRecord call;
    call.run_id = options_.run_id;
    call.model = options_.model;
    call.endpoint = client_->Endpoint();
    nlohmann::json messages = nlohmann::json::array();
    for (const ChatMessage& m : request.messages) {
      messages.push_back({{"role", m.role}, {"content", m.content}});
    }
    call.request = {{"messages", messages},
                    {"params",
                     {{"temperature", request.temperature},
                      {"top_p", request.top_p},
                      {"max_tokens", request.max_tokens}}}};
    if (!response.ok()) {
      call.error = response.status().message();
      (void)store_->RecordLlmCall(call);
      return Status::IOError("LLM call failed: " + response.status().message());
    }
    call.completion = response->content;
    call.prompt_tokens = response->prompt_tokens;
    call.completion_tokens = response->completion_tokens;
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
    if (child.ok()) {
      Proposal proposal;
      proposal.code = std::move(*child);
      proposal.description =
          context.parent ? std::string(EditKindName(edit->kind)) : std::string("translation");
      if (id.ok()) proposal.llm_call_id = *id;
      proposal.kind = context.parent ? ProgramKind::kEvolution : ProgramKind::kTranslation;
      return proposal;
    }
    if (turn == 1) return child.status();
    request.messages.push_back({"assistant", response->content});
    request.messages.push_back(
        {"user", "Your reply could not be applied: " + child.status().message() +
                     "\nReply again with SEARCH/REPLACE diffs whose SEARCH text is copied "
                     "exactly from the current program, or with the whole EVOLVE-BLOCK."});
  }
  return Status::Internal("unreachable");
}

}  // namespace ks
