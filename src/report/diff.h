// Line diff for the report: the longest common subsequence of two texts' lines, as a list of
// kept (' '), removed ('-') and added ('+') lines in order.
// Thread-safety: functions only.
#pragma once

#include <string>
#include <vector>

namespace ks {

struct DiffLine {
  char op = ' ';  // ' ' in both, '-' only in the old text, '+' only in the new text
  std::string text;
};

// Splits on '\n'; a final newline does not start an extra empty line.
std::vector<std::string> SplitLines(const std::string& text);

// The LCS line diff of `old_text` → `new_text`. Above `max_cells` DP cells (lines × lines) it
// falls back to removing every old line and adding every new one.
std::vector<DiffLine> LineDiff(const std::string& old_text, const std::string& new_text,
                               size_t max_cells = 16u << 20);

}  // namespace ks
