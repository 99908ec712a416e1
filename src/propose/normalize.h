// Normalized program text, for recognising candidates already evaluated before they reach the
// GPU: two programs that differ only in comments, trailing whitespace, blank lines or line
// endings normalize to the same text and hash.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace ks {

// Returns `code` with line endings made "\n", Python comments removed (a `#` inside a string
// literal is kept), trailing whitespace removed and blank lines dropped. String literals are
// kept byte for byte, blank lines and trailing spaces inside triple-quoted strings included.
// Every kept line ends with "\n".
std::string NormalizeCode(std::string_view code);

// Lowercase hex SHA-256 of NormalizeCode(code).
std::string CodeHash(std::string_view code);

}  // namespace ks
