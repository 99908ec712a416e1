// Token counts estimated from text, where no tokenizer is at hand (the endpoint's own count,
// when it reports `usage`, is used instead wherever there is one).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

namespace ks {

// A typical count: 4 bytes a token, rounded up (English prose and Python code tokenize at
// about 3.5–4.5 bytes a token with current tokenizers). For sizes and accounting.
inline int64_t EstimateTokens(std::string_view text) {
  return static_cast<int64_t>((text.size() + 3) / 4);
}

// An upper bound for fitting into a model's context: 3 bytes a token, rounded up.
inline int64_t EstimateTokensUpper(std::string_view text) {
  return static_cast<int64_t>((text.size() + 2) / 3);
}

}  // namespace ks
