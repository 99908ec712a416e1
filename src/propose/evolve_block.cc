#include "propose/evolve_block.h"

#include <vector>

#include "propose/lines.h"
#include "propose/python_lexer.h"

namespace ks {
namespace {

constexpr std::string_view kStartToken = "EVOLVE-BLOCK-START";
constexpr std::string_view kEndToken = "EVOLVE-BLOCK-END";

std::string JoinLineNumbers(const std::vector<int>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(lines[i]);
  }
  return out;
}

// Longest common leading whitespace of the non-blank lines.
std::string CommonIndent(const std::vector<Line>& lines) {
  bool first = true;
  std::string_view common;
  for (const Line& line : lines) {
    if (IsBlank(line.text)) continue;
    std::string_view ws = LeadingWhitespace(line.text);
    if (first) {
      common = ws;
      first = false;
      continue;
    }
    size_t n = 0;
    while (n < common.size() && n < ws.size() && common[n] == ws[n]) ++n;
    common = common.substr(0, n);
  }
  return std::string(common);
}

bool HasNonBlankLine(const std::vector<Line>& lines) {
  for (const Line& line : lines) {
    if (!IsBlank(line.text)) return true;
  }
  return false;
}

}  // namespace

EvolveMarker ClassifyMarkerLine(std::string_view line) {
  std::string_view s = Trim(line);
  if (s.empty() || s.front() != '#') return EvolveMarker::kNone;
  while (!s.empty() && (s.front() == '#' || s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  auto matches = [&s](std::string_view token) {
    return s.substr(0, token.size()) == token &&
           (s.size() == token.size() || s[token.size()] == ' ' || s[token.size()] == '\t');
  };
  if (matches(kStartToken)) return EvolveMarker::kStart;
  if (matches(kEndToken)) return EvolveMarker::kEnd;
  return EvolveMarker::kNone;
}

Result<EvolveBlock> FindEvolveBlock(std::string_view code) {
  const std::vector<Line> lines = SplitLines(code);
  std::vector<PyRegion> regions = ClassifyPythonRegions(code);
  std::vector<size_t> starts, ends;  // indices into `lines`
  for (size_t i = 0; i < lines.size(); ++i) {
    EvolveMarker m = ClassifyMarkerLine(lines[i].text);
    if (m == EvolveMarker::kNone) continue;
    size_t hash = lines[i].begin + LeadingWhitespace(lines[i].text).size();
    if (regions[hash] != PyRegion::kComment) continue;  // inside a string literal
    (m == EvolveMarker::kStart ? starts : ends).push_back(i);
  }
  auto numbers = [](const std::vector<size_t>& idx) {
    std::vector<int> out;
    for (size_t i : idx) out.push_back(static_cast<int>(i) + 1);
    return out;
  };
  if (starts.empty() && ends.empty()) {
    return Status::InvalidArgument(
        "no `# EVOLVE-BLOCK-START` / `# EVOLVE-BLOCK-END` markers found; mark the editable "
        "region with them");
  }
  if (starts.size() > 1 || ends.size() > 1) {
    std::string msg;
    if (starts.size() > 1) {
      msg = "found " + std::to_string(starts.size()) + " `# EVOLVE-BLOCK-START` markers (lines " +
            JoinLineNumbers(numbers(starts)) + ")";
    }
    if (ends.size() > 1) {
      msg += std::string(msg.empty() ? "found " : " and ") + std::to_string(ends.size()) +
             " `# EVOLVE-BLOCK-END` markers (lines " + JoinLineNumbers(numbers(ends)) + ")";
    }
    return Status::InvalidArgument(msg + "; exactly one EVOLVE-BLOCK is expected");
  }
  if (ends.empty()) {
    return Status::InvalidArgument("`# EVOLVE-BLOCK-START` on line " +
                                   std::to_string(starts[0] + 1) +
                                   " has no `# EVOLVE-BLOCK-END` after it");
  }
  if (starts.empty()) {
    return Status::InvalidArgument("`# EVOLVE-BLOCK-END` on line " + std::to_string(ends[0] + 1) +
                                   " has no `# EVOLVE-BLOCK-START` before it");
  }
  if (ends[0] < starts[0]) {
    return Status::InvalidArgument("`# EVOLVE-BLOCK-END` on line " + std::to_string(ends[0] + 1) +
                                   " comes before `# EVOLVE-BLOCK-START` on line " +
                                   std::to_string(starts[0] + 1));
  }
  const Line& start = lines[starts[0]];
  const Line& end = lines[ends[0]];
  EvolveBlock block;
  block.start_marker_begin = start.begin;
  block.body_begin = start.begin + start.text.size() + start.eol.size();
  block.body_end = end.begin;
  block.end_marker_end = end.begin + end.text.size() + end.eol.size();
  block.start_line = static_cast<int>(starts[0]) + 1;
  block.end_line = static_cast<int>(ends[0]) + 1;
  block.marker_indent = std::string(LeadingWhitespace(start.text));
  block.newline = start.eol == "\r\n" ? "\r\n" : "\n";
  return block;
}

Result<std::string> ReplaceEvolveBlock(std::string_view code, std::string_view new_body) {
  Result<EvolveBlock> found = FindEvolveBlock(code);
  if (!found.ok()) return found.status();
  const EvolveBlock& block = *found;
  const std::vector<Line> new_lines = SplitLines(new_body);
  for (size_t i = 0; i < new_lines.size(); ++i) {
    if (ClassifyMarkerLine(new_lines[i].text) != EvolveMarker::kNone) {
      return Status::InvalidArgument("the new EVOLVE-BLOCK body holds a marker line (line " +
                                     std::to_string(i + 1) + ": `" + QuoteLine(new_lines[i].text) +
                                     "`); send only the code between the markers");
    }
  }
  const std::vector<Line> old_lines = SplitLines(block.Body(code));
  const std::string target =
      HasNonBlankLine(old_lines) ? CommonIndent(old_lines) : block.marker_indent;
  const std::string current = CommonIndent(new_lines);
  const bool shift = IndentColumns(current) < IndentColumns(target);

  std::string out(code.substr(0, block.body_begin));
  for (const Line& line : new_lines) {
    if (shift && !IsBlank(line.text)) {
      out += target;
      out += line.text.substr(current.size());
    } else {
      out += line.text;
    }
    out += block.newline;
  }
  out += code.substr(block.body_end);
  return out;
}

}  // namespace ks
