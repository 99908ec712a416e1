#include "propose/python_lexer.h"

#include <algorithm>

namespace ks {

std::vector<PyRegion> ClassifyPythonRegions(std::string_view code) {
  const size_t n = code.size();
  std::vector<PyRegion> regions(n, PyRegion::kCode);
  size_t i = 0;
  while (i < n) {
    const char c = code[i];
    if (c == '#') {
      size_t end = code.find('\n', i);
      if (end == std::string_view::npos) end = n;
      std::fill(regions.begin() + i, regions.begin() + end, PyRegion::kComment);
      i = end;
      continue;
    }
    if (c != '\'' && c != '"') {
      ++i;
      continue;
    }
    const bool triple = i + 2 < n && code[i + 1] == c && code[i + 2] == c;
    size_t j = i + (triple ? 3 : 1);
    while (j < n) {
      if (code[j] == '\\') {
        j += 2;
      } else if (triple && code[j] == c && j + 2 < n && code[j + 1] == c && code[j + 2] == c) {
        j += 3;
        break;
      } else if (!triple && code[j] == c) {
        ++j;
        break;
      } else if (!triple && code[j] == '\n') {
        break;  // unterminated: the literal ends with its line
      } else {
        ++j;
      }
    }
    j = std::min(j, n);
    std::fill(regions.begin() + i, regions.begin() + j, PyRegion::kString);
    i = j;
  }
  return regions;
}

}  // namespace ks
