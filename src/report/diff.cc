#include "report/diff.h"

#include <algorithm>
#include <cstdint>

namespace ks {

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::vector<DiffLine> LineDiff(const std::string& old_text, const std::string& new_text,
                               size_t max_cells) {
  std::vector<std::string> a = SplitLines(old_text);
  std::vector<std::string> b = SplitLines(new_text);
  std::vector<DiffLine> out;
  // Common prefix and suffix need no table.
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    ++suffix;
  }
  for (size_t i = 0; i < prefix; ++i) out.push_back({' ', a[i]});
  const size_t n = a.size() - prefix - suffix;
  const size_t m = b.size() - prefix - suffix;
  if ((n + 1) * (m + 1) > max_cells) {
    for (size_t i = 0; i < n; ++i) out.push_back({'-', a[prefix + i]});
    for (size_t j = 0; j < m; ++j) out.push_back({'+', b[prefix + j]});
  } else {
    // lcs[i][j]: LCS length of a[prefix+i..] and b[prefix+j..].
    std::vector<uint32_t> lcs((n + 1) * (m + 1), 0);
    auto at = [&](size_t i, size_t j) -> uint32_t& { return lcs[i * (m + 1) + j]; };
    for (size_t i = n; i-- > 0;) {
      for (size_t j = m; j-- > 0;) {
        at(i, j) = a[prefix + i] == b[prefix + j] ? at(i + 1, j + 1) + 1
                                                  : std::max(at(i + 1, j), at(i, j + 1));
      }
    }
    size_t i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[prefix + i] == b[prefix + j]) {
        out.push_back({' ', a[prefix + i]});
        ++i;
        ++j;
      } else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) {
        out.push_back({'-', a[prefix + i]});
        ++i;
      } else {
        out.push_back({'+', b[prefix + j]});
        ++j;
      }
    }
  }
  for (size_t k = a.size() - suffix; k < a.size(); ++k) out.push_back({' ', a[k]});
  return out;
}

}  // namespace ks
