// A minimal Python lexer: which bytes of a source are code, string literal or comment. Enough
// to strip comments, find markers and find tunable constants without being fooled by a `#` or
// an `=` inside a string. Handles '...', "...", triple quotes and backslash escapes (string
// prefixes such as r/b/f need no special case for finding where a literal ends). Not handled:
// Python 3.12 f-strings that reuse their own quote inside a replacement field.
// Thread-safety: pure function.
#pragma once

#include <string_view>
#include <vector>

namespace ks {

enum class PyRegion : unsigned char { kCode, kString, kComment };

// One entry per byte of `code`. A comment runs from `#` to the end of its line (the newline is
// code); a string literal includes its quotes. An unterminated single-quoted string ends at the
// end of its line; an unterminated triple-quoted one runs to the end of the text.
std::vector<PyRegion> ClassifyPythonRegions(std::string_view code);

}  // namespace ks
