// Locating the SEARCH text of a SEARCH/REPLACE diff among the lines of a program: exact first,
// then whitespace-tolerant (trailing whitespace, blank lines, and a uniform indentation offset
// ignored; tabs count as 4 columns). Used by ApplyEdit.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ks {

struct LineMatch {
  size_t first = 0;       // index of the first matched line
  size_t last = 0;        // one past the last matched line
  bool exact = true;      // false: found by the whitespace-tolerant pass
  int indent_delta = 0;   // tolerant only: program indent minus SEARCH indent, in columns
  bool use_tabs = false;  // tolerant only: the matched program lines indent with tabs
};

// Every place `needle` occurs in `haystack`: the exact matches if there is any, otherwise the
// tolerant ones. A tolerant match spans from the first to the last non-blank matched line.
// `needle` must hold a non-blank line.
std::vector<LineMatch> FindLineMatches(const std::vector<std::string_view>& haystack,
                                       const std::vector<std::string_view>& needle);

// The lines that replace a match: `replace` as given for an exact match; for a tolerant one,
// re-indented by the match's offset (in the program's tab/space style), with the blank lines
// that led or trailed the SEARCH text dropped from the ends of `replace` as well.
std::vector<std::string> AdaptReplacement(const std::vector<std::string_view>& needle,
                                          const std::vector<std::string_view>& replace,
                                          const LineMatch& match);

// Why `needle` did not match, when a near miss explains it, e.g. "its first line matches line
// 14, but SEARCH line 3 `x = 1` differs from `x = 2`"; "" when no line of `needle` occurs.
// `first_line_number` is the 1-based number of haystack[0] in the program.
std::string DescribeNearMiss(const std::vector<std::string_view>& haystack,
                             const std::vector<std::string_view>& needle, int first_line_number);

}  // namespace ks
