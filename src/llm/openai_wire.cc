#include "llm/openai_wire.h"

#include <fmt/format.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

namespace ks {
namespace {

using nlohmann::json;

// The string at j[key] when present and a string, else "".
std::string StringField(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

int64_t IntField(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return 0;
  return it->get<int64_t>();
}

bool Cap(std::string& s, size_t max_chars) {
  if (s.size() <= max_chars) return false;
  s.resize(max_chars);
  return true;
}

}  // namespace

std::string BuildChatRequestBody(const ChatRequest& request, const std::string& default_model) {
  json messages = json::array();
  for (const ChatMessage& m : request.messages) {
    messages.push_back({{"role", m.role}, {"content", m.content}});
  }
  json body = {
      {"model", request.model.empty() ? default_model : request.model},
      {"messages", std::move(messages)},
      {request.max_completion_tokens ? "max_completion_tokens" : "max_tokens", request.max_tokens},
      {"stream", false}};
  if (!request.default_sampling) {
    body["temperature"] = request.temperature;
    body["top_p"] = request.top_p;
  }
  if (!request.stop.empty()) body["stop"] = request.stop;
  // Invalid UTF-8 in a prompt (a candidate's bytes) is replaced rather than thrown on.
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

ParamRejection ParseParamRejection(std::string_view body) {
  const std::string message = ErrorBodyMessage(body);
  if (message.find("max_completion_tokens") != std::string::npos) {
    return ParamRejection::kMaxTokens;
  }
  if ((message.find("Unsupported value") != std::string::npos ||
       message.find("unsupported_value") != std::string::npos ||
       message.find("not supported") != std::string::npos) &&
      (message.find("'temperature'") != std::string::npos ||
       message.find("'top_p'") != std::string::npos)) {
    return ParamRejection::kSampling;
  }
  return ParamRejection::kNone;
}

std::string QuoteBodyStart(std::string_view body, size_t n) {
  std::string out = "\"";
  for (size_t i = 0; i < body.size() && i < n; ++i) {
    char c = body[i];
    out += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
  }
  out += body.size() > n ? "...\"" : "\"";
  return out;
}

std::string ErrorBodyMessage(std::string_view body) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object()) {
    auto err = j.find("error");
    if (err != j.end() && err->is_object() && !StringField(*err, "message").empty()) {
      return StringField(*err, "message");
    }
    if (err != j.end() && err->is_string()) return err->get<std::string>();
    if (!StringField(j, "message").empty()) return StringField(j, "message");
    auto detail = j.find("detail");
    if (detail != j.end()) return detail->is_string() ? detail->get<std::string>() : detail->dump();
  }
  if (body.empty()) return "(empty body)";
  return "body " + QuoteBodyStart(body);
}

Result<ChatResponse> ParseChatResponse(std::string_view body, size_t max_chars,
                                       const std::string& url) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::Protocol(
        fmt::format("{} returned a reply that is not valid JSON ({} bytes, truncated or not a chat "
                    "completion): {}",
                    url, body.size(), QuoteBodyStart(body)));
  }
  if (j.contains("error")) {
    return Status::Protocol(
        fmt::format("{} returned an error object with HTTP 200: {}", url, ErrorBodyMessage(body)));
  }
  auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty() ||
      !(*choices)[0].is_object() || !(*choices)[0].contains("message") ||
      !(*choices)[0]["message"].is_object()) {
    return Status::Protocol(
        fmt::format("{} returned JSON without choices[0].message (is this an OpenAI-compatible "
                    "chat endpoint?): {}",
                    url, QuoteBodyStart(body)));
  }
  const json& choice = (*choices)[0];
  const json& message = choice["message"];
  ChatResponse r;
  r.content = StringField(message, "content");
  r.reasoning_content = StringField(message, "reasoning_content");
  if (r.reasoning_content.empty()) r.reasoning_content = StringField(message, "reasoning");
  r.finish_reason = StringField(choice, "finish_reason");
  r.model = StringField(j, "model");
  if (auto usage = j.find("usage"); usage != j.end() && usage->is_object()) {
    r.prompt_tokens = IntField(*usage, "prompt_tokens");
    r.completion_tokens = IntField(*usage, "completion_tokens");
    r.usage_reported = usage->contains("prompt_tokens") || usage->contains("completion_tokens");
  }
  if (r.content.find_first_not_of(" \t\r\n") == std::string::npos) {
    return Status::Protocol(fmt::format(
        "{} returned an empty completion (finish_reason={}, completion_tokens={}{}); raise "
        "max_tokens if the model spent them on reasoning",
        url, r.finish_reason.empty() ? "none" : r.finish_reason, r.completion_tokens,
        r.reasoning_content.empty()
            ? ""
            : fmt::format(", {} chars of reasoning", r.reasoning_content.size())));
  }
  r.capped = Cap(r.content, max_chars);
  Cap(r.reasoning_content, max_chars);
  return r;
}

std::optional<double> ParseRetryAfter(std::string_view value) {
  std::string s(value);
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t\r\n");
  if (b == std::string::npos) return std::nullopt;
  s = s.substr(b, e - b + 1);
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0' || !(v >= 0) || v > 1e7) return std::nullopt;
  return v;
}

}  // namespace ks
