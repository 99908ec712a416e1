// Line-level text helpers for the propose component: splitting a program or a reply into
// lines (LF or CRLF), trimming, and measuring indentation.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ks {

// One line of a text. `text` excludes the terminator; `eol` is "\n", "\r\n" or "" (last line
// without a newline). Views point into the split text.
struct Line {
  std::string_view text;
  std::string_view eol;
  size_t begin = 0;  // byte offset of `text` in the split text
};

// Splits `s` into lines. "a\nb\n" gives two lines; "" gives none.
std::vector<Line> SplitLines(std::string_view s);

// The texts of SplitLines(s), without terminators.
std::vector<std::string_view> LineTexts(std::string_view s);

std::string_view TrimRight(std::string_view s);
std::string_view Trim(std::string_view s);
std::string_view LeadingWhitespace(std::string_view s);
bool IsBlank(std::string_view s);

// Width of leading whitespace in columns, a tab advancing to the next multiple of 4 (how
// models usually re-render tabs).
int IndentColumns(std::string_view whitespace);

// Whitespace that is `columns` wide: tabs (plus spaces for a remainder) when `use_tabs`.
std::string MakeIndent(int columns, bool use_tabs);

// "\r\n" and lone "\r" replaced by "\n".
std::string NormalizeNewlines(std::string_view s);

// A line for an error message: trimmed of trailing whitespace, cut to `max_chars` with "...".
std::string QuoteLine(std::string_view line, size_t max_chars = 60);

}  // namespace ks
