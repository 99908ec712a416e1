// Fitting a completion into the model's context window: how many tokens a prompt takes (a
// conservative estimate; the server's tokenizer is not available here), the context a server
// reports for a model (vLLM and SGLang: `max_model_len` in GET /v1/models), the size a
// server's "context length exceeded" rejection names, and the max_tokens that fits.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "llm/llm_client.h"

namespace ks {

// A completion budget below this many tokens cannot hold a revised kernel: the call is
// refused with a message instead of being sent.
inline constexpr int64_t kMinCompletionTokens = 1024;

// Tokens the messages take, an upper bound (EstimateTokensUpper) plus a few per message for
// the chat template.
int64_t EstimatePromptTokens(const std::vector<ChatMessage>& messages);

// The context length a GET {base_url}/models body gives for `model` (`max_model_len`, or
// `context_length`), or for the only model listed; nullopt when it says none.
std::optional<int64_t> ContextFromModels(const std::string& models_body, const std::string& model);

// A rejection that says the request does not fit the context, as vLLM, SGLang and OpenAI word
// it: the context length (0 when the message gives none) and, when given, the prompt's tokens.
struct ContextExceeded {
  int64_t context = 0;
  std::optional<int64_t> prompt_tokens;
};
std::optional<ContextExceeded> ParseContextExceeded(const std::string& error_body);

// The max_tokens to send: `requested` capped to what `context` leaves after `prompt_tokens`.
// InvalidArgument, saying what to change, when that is under kMinCompletionTokens.
Result<int> FitMaxTokens(int requested, int64_t context, int64_t prompt_tokens);

}  // namespace ks
