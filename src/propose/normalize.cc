#include "propose/normalize.h"

#include <vector>

#include "core/sha256.h"
#include "propose/lines.h"
#include "propose/python_lexer.h"

namespace ks {

std::string NormalizeCode(std::string_view code) {
  const std::string text = NormalizeNewlines(code);
  const std::vector<PyRegion> regions = ClassifyPythonRegions(text);
  std::string out;
  out.reserve(text.size());
  std::string line;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    const size_t end = nl == std::string::npos ? text.size() : nl;
    line.clear();
    for (size_t i = pos; i < end; ++i) {
      if (regions[i] != PyRegion::kComment) line += text[i];
    }
    // A newline inside a triple-quoted string is part of the literal: keep the line as it is.
    const bool newline_in_string = nl != std::string::npos && regions[nl] == PyRegion::kString;
    if (newline_in_string) {
      out += line;
      out += '\n';
    } else {
      std::string_view kept = TrimRight(line);
      if (!kept.empty()) {
        out += kept;
        out += '\n';
      }
    }
    pos = end + 1;
  }
  return out;
}

std::string CodeHash(std::string_view code) { return Sha256Hex(NormalizeCode(code)); }

}  // namespace ks
