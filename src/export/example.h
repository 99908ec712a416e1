// What SFT and RL rows share: the chat messages a proposer sent (exactly as stored), token
// counts, and the identity of an example for de-duplication.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/status.h"
#include "llm/token_estimate.h"
#include "store/store.h"

namespace ks {

// The messages of a stored call's request (`request.messages`), as a JSON array of
// {"role", "content"} objects, exactly as they were sent. InvalidArgument naming the call when
// the request has no such list (an empty list included).
Result<nlohmann::json> PromptMessages(const LlmCallRecord& call);

// Tokens of an example. The endpoint's own counts when the call recorded them, else an
// estimate of one token per 4 bytes of text (rounded up), the usual ratio of BPE tokenizers
// on English and code; `estimated` says whether any part was estimated.
struct TokenCount {
  int64_t prompt = 0;
  int64_t completion = 0;
  bool estimated = false;
  int64_t total() const { return prompt + completion; }
};

// The estimate for a list of messages: the sum over their contents.
int64_t EstimateMessageTokens(const nlohmann::json& messages);
TokenCount CountTokens(const LlmCallRecord& call, const nlohmann::json& prompt_messages);

// SHA-256 (hex) of the prompt messages and the completion: two examples with the same hash
// teach the same thing. `completion` may be empty (an RL prompt).
std::string ExampleHash(const nlohmann::json& prompt_messages, std::string_view completion);

}  // namespace ks
