#include "propose/lines.h"

namespace ks {

std::vector<Line> SplitLines(std::string_view s) {
  std::vector<Line> lines;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t nl = s.find('\n', pos);
    if (nl == std::string_view::npos) {
      lines.push_back({s.substr(pos), std::string_view(), pos});
      break;
    }
    size_t end = nl;
    if (end > pos && s[end - 1] == '\r') --end;
    lines.push_back({s.substr(pos, end - pos), s.substr(end, nl + 1 - end), pos});
    pos = nl + 1;
  }
  return lines;
}

std::vector<std::string_view> LineTexts(std::string_view s) {
  std::vector<std::string_view> out;
  for (const Line& line : SplitLines(s)) out.push_back(line.text);
  return out;
}

static bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

std::string_view Trim(std::string_view s) {
  s = TrimRight(s);
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  return s;
}

std::string_view LeadingWhitespace(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && (s[n] == ' ' || s[n] == '\t' || s[n] == '\f')) ++n;
  return s.substr(0, n);
}

bool IsBlank(std::string_view s) { return Trim(s).empty(); }

int IndentColumns(std::string_view whitespace) {
  int col = 0;
  for (char c : whitespace) {
    if (c == '\t') {
      col = (col / 4 + 1) * 4;
    } else if (c == ' ') {
      ++col;
    }
  }
  return col;
}

std::string MakeIndent(int columns, bool use_tabs) {
  if (columns <= 0) return "";
  if (!use_tabs) return std::string(static_cast<size_t>(columns), ' ');
  return std::string(static_cast<size_t>(columns / 4), '\t') +
         std::string(static_cast<size_t>(columns % 4), ' ');
}

std::string NormalizeNewlines(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r') {
      out += '\n';
      if (i + 1 < s.size() && s[i + 1] == '\n') ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string QuoteLine(std::string_view line, size_t max_chars) {
  line = TrimRight(line);
  if (line.size() <= max_chars) return std::string(line);
  return std::string(line.substr(0, max_chars)) + "...";
}

}  // namespace ks
