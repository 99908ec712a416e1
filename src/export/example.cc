#include "export/example.h"

#include <fmt/format.h>

#include "core/sha256.h"

namespace ks {

Result<nlohmann::json> PromptMessages(const LlmCallRecord& call) {
  const nlohmann::json& request = call.request;
  if (!request.is_object() || !request.contains("messages") || !request["messages"].is_array() ||
      request["messages"].empty()) {
    return Status::InvalidArgument(
        fmt::format("LLM call {} of run '{}': its request holds no messages", call.id,
                    call.run_id));
  }
  nlohmann::json out = nlohmann::json::array();
  for (const nlohmann::json& m : request["messages"]) {
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string() ||
        !m.contains("content") || !m["content"].is_string()) {
      return Status::InvalidArgument(fmt::format(
          "LLM call {} of run '{}': a request message is not {{role, content}}", call.id,
          call.run_id));
    }
    out.push_back({{"role", m["role"]}, {"content", m["content"]}});
  }
  return out;
}

int64_t EstimateMessageTokens(const nlohmann::json& messages) {
  int64_t n = 0;
  for (const nlohmann::json& m : messages) {
    if (m.is_object() && m.contains("content") && m["content"].is_string()) {
      n += EstimateTokens(m["content"].get_ref<const std::string&>());
    }
  }
  return n;
}

TokenCount CountTokens(const LlmCallRecord& call, const nlohmann::json& prompt_messages) {
  TokenCount t;
  if (call.prompt_tokens && *call.prompt_tokens > 0) {
    t.prompt = *call.prompt_tokens;
  } else {
    t.prompt = EstimateMessageTokens(prompt_messages);
    t.estimated = true;
  }
  if (call.completion_tokens && *call.completion_tokens > 0) {
    t.completion = *call.completion_tokens;
  } else {
    t.completion = EstimateTokens(call.completion);
    t.estimated = true;
  }
  return t;
}

std::string ExampleHash(const nlohmann::json& prompt_messages, std::string_view completion) {
  std::string key = prompt_messages.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  key.push_back('\0');
  key.append(completion);
  return Sha256Hex(key);
}

}  // namespace ks
