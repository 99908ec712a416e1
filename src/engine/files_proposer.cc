// MakeFilesProposer (llm_proposer.h): prompts and answers exchanged through a directory.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>

#include "core/file.h"
#include "engine/llm_proposer.h"

namespace ks {
namespace {

class FilesProposer : public LlmProposer {
 public:
  FilesProposer(Store* store, LlmProposerOptions options, PromptBuilder builder, std::string dir)
      : LlmProposer(nullptr, store, std::move(options), std::move(builder)), dir_(std::move(dir)) {}

 protected:
  Result<ChatResponse> Ask(const ProposalContext& context, const ChatRequest& request,
                           int turn) override {
    auto start = std::chrono::steady_clock::now();
    std::string stem = dir_ + "/" + ExchangeStem(context) + (turn > 0 ? "-retry" : "");
    std::string prompt;
    for (const ChatMessage& m : request.messages) {
      prompt += "## " + m.role + "\n\n" + m.content + "\n\n";
    }
    Result<std::string> written = ReadFile(stem + ".prompt.md");
    if (!written.ok() || *written != prompt) {
      Status s = WriteFileAtomic(stem + ".prompt.md", prompt);
      if (!s.ok()) return s;
    }
    std::error_code ec;
    if (!std::filesystem::exists(stem + ".answer.md", ec)) {
      return WaitingStatus(stem + ".answer.md");
    }
    Result<std::string> answer = ReadFile(stem + ".answer.md");
    if (!answer.ok()) return answer.status();
    ChatResponse response;
    response.content = std::move(*answer);
    response.finish_reason = "stop";
    response.latency_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    response.model = "files";
    response.attempts = 1;
    if (response.content.find_first_not_of(" \t\r\n") == std::string::npos) {
      return Status::Protocol(stem + ".answer.md is empty");
    }
    return response;
  }
  std::string Endpoint() const override { return "files:" + dir_; }

 private:
  const std::string dir_;
};

}  // namespace

std::string ExchangeStem(const ProposalContext& context) {
  return fmt::format("{}-r{}-s{}", context.run_id.empty() ? "run" : context.run_id, context.round,
                     context.slot);
}

Result<std::unique_ptr<Proposer>> MakeFilesProposer(Store* store, LlmProposerOptions options,
                                                    std::string exchange_dir) {
  std::error_code ec;
  std::filesystem::create_directories(exchange_dir, ec);
  if (ec) {
    return Status::IOError("cannot create the exchange directory " + exchange_dir + ": " +
                           ec.message());
  }
  PromptBuilderOptions bo;
  bo.template_dir = options.prompts_dir;
  bo.max_prompt_tokens = options.max_prompt_tokens;
  Result<PromptBuilder> builder = PromptBuilder::Create(bo);
  if (!builder.ok()) return builder.status();
  options.kind = ProposerKind::kFiles;
  return std::unique_ptr<Proposer>(
      new FilesProposer(store, std::move(options), std::move(*builder), std::move(exchange_dir)));
}

}  // namespace ks
