#include "llm/context_budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>

#include "llm/token_estimate.h"

namespace ks {
namespace {

constexpr int64_t kTokensPerMessage = 8;

std::optional<int64_t> ContextOf(const nlohmann::json& entry) {
  for (const char* key : {"max_model_len", "context_length", "max_context_length"}) {
    auto it = entry.find(key);
    if (it != entry.end() && it->is_number_integer() && it->get<int64_t>() > 0) {
      return it->get<int64_t>();
    }
  }
  return std::nullopt;
}

std::optional<int64_t> FirstNumber(const std::string& text, const std::regex& re) {
  std::smatch m;
  if (!std::regex_search(text, m, re)) return std::nullopt;
  try {
    return std::stoll(m[1].str());
  } catch (...) {  // out of range: not a usable figure
    return std::nullopt;
  }
}

}  // namespace

int64_t EstimatePromptTokens(const std::vector<ChatMessage>& messages) {
  int64_t tokens = 0;
  for (const ChatMessage& m : messages) {
    tokens += EstimateTokensUpper(m.content) + kTokensPerMessage;
  }
  return tokens;
}

std::optional<int64_t> ContextFromModels(const std::string& models_body, const std::string& model) {
  nlohmann::json j = nlohmann::json::parse(models_body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("data") || !j["data"].is_array()) return std::nullopt;
  const nlohmann::json& data = j["data"];
  for (const nlohmann::json& entry : data) {
    if (entry.is_object() && entry.value("id", std::string()) == model) return ContextOf(entry);
  }
  if (data.size() == 1 && data[0].is_object()) return ContextOf(data[0]);
  return std::nullopt;
}

std::optional<ContextExceeded> ParseContextExceeded(const std::string& error_body) {
  std::string text = error_body;
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  static const std::regex kMentions(
      "context length|context window|max_model_len|maximum context|too many tokens|"
      "context_length_exceeded");
  if (!std::regex_search(text, kMentions)) return std::nullopt;
  static const std::regex kContext(
      "(?:maximum context length is|max_model_len(?: is|=| of)?|context length of|context "
      "window of) *(\\d+)");
  static const std::regex kPrompt(
      "(\\d+) (?:tokens )?in the messages|(?:prompt|input) "
      "(?:contains|has|is|of|length) *(\\d+)");
  ContextExceeded out;
  out.context = FirstNumber(text, kContext).value_or(0);
  std::smatch m;
  if (std::regex_search(text, m, kPrompt)) {
    const std::string digits = m[1].matched ? m[1].str() : m[2].str();
    try {
      out.prompt_tokens = std::stoll(digits);
    } catch (...) {
      out.prompt_tokens.reset();
    }
  }
  return out;
}

Result<int> FitMaxTokens(int requested, int64_t context, int64_t prompt_tokens) {
  int64_t room = context - prompt_tokens;
  if (room < kMinCompletionTokens) {
    return Status::InvalidArgument(fmt::format(
        "the prompt (about {} tokens) leaves {} of the model's {}-token context for the "
        "answer, under the {} a kernel needs: serve the model with a longer context "
        "(vLLM --max-model-len) or pass the right one with --context-tokens",
        prompt_tokens, std::max<int64_t>(room, 0), context, kMinCompletionTokens));
  }
  return static_cast<int>(std::min<int64_t>(requested, room));
}

}  // namespace ks
