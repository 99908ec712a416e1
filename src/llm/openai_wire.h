// The OpenAI chat-completions wire format: request bodies, response parsing, error bodies.
// Kept apart from the transport so it can be tested without a server.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "llm/llm_client.h"

namespace ks {

// The JSON body for `request`; `default_model` is used when request.model is empty.
std::string BuildChatRequestBody(const ChatRequest& request, const std::string& default_model);

// Parses a 200 reply. Content and reasoning longer than `max_chars` are cut (`capped`). A body
// that is not JSON, has no choices[0].message, or carries an `error` object is a Protocol error
// quoting the start of the body; an empty completion is a Protocol error naming finish_reason
// and the token counts. `url` goes into the messages.
Result<ChatResponse> ParseChatResponse(std::string_view body, size_t max_chars,
                                       const std::string& url);

// What a 400 says the model does not take, in OpenAI's words for its reasoning models:
// "Unsupported parameter: 'max_tokens' ... Use 'max_completion_tokens' instead." (kMaxTokens),
// "Unsupported value: 'temperature' does not support 0.6 with this model" (kSampling).
enum class ParamRejection { kNone, kMaxTokens, kSampling };
ParamRejection ParseParamRejection(std::string_view body);

// The server's own words from an error body: error.message, message or detail when the body
// is such JSON, else the body's first 200 characters, quoted.
std::string ErrorBodyMessage(std::string_view body);

// The first `n` characters of `body` in quotes, with "..." when cut and control characters
// shown as spaces, for messages.
std::string QuoteBodyStart(std::string_view body, size_t n = 200);

// Retry-After as delay-seconds ("3", also "0.5"); nullopt for HTTP dates and garbage.
std::optional<double> ParseRetryAfter(std::string_view value);

}  // namespace ks
