#include "propose/search_match.h"

#include "propose/lines.h"

namespace ks {
namespace {

std::vector<size_t> NonBlankIndices(const std::vector<std::string_view>& lines) {
  std::vector<size_t> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!IsBlank(lines[i])) out.push_back(i);
  }
  return out;
}

int Indent(std::string_view line) { return IndentColumns(LeadingWhitespace(line)); }

// Tolerant match of the non-blank needle lines `sig` starting at haystack[start].
bool MatchTolerantAt(const std::vector<std::string_view>& haystack,
                     const std::vector<std::string_view>& needle, const std::vector<size_t>& sig,
                     size_t start, LineMatch* match) {
  size_t h = start;
  bool have_delta = false;
  int delta = 0;
  for (size_t k = 0; k < sig.size(); ++k) {
    while (h < haystack.size() && IsBlank(haystack[h])) ++h;
    if (h >= haystack.size()) return false;
    std::string_view n = needle[sig[k]];
    if (Trim(haystack[h]) != Trim(n)) return false;
    const int d = Indent(haystack[h]) - Indent(n);
    if (have_delta && d != delta) return false;
    have_delta = true;
    delta = d;
    ++h;
  }
  match->first = start;
  match->last = h;
  match->exact = false;
  match->indent_delta = delta;
  match->use_tabs = LeadingWhitespace(haystack[start]).find('\t') != std::string_view::npos;
  return true;
}

}  // namespace

std::vector<LineMatch> FindLineMatches(const std::vector<std::string_view>& haystack,
                                       const std::vector<std::string_view>& needle) {
  std::vector<LineMatch> matches;
  if (needle.empty()) return matches;
  for (size_t i = 0; i + needle.size() <= haystack.size(); ++i) {
    bool equal = true;
    for (size_t k = 0; k < needle.size() && equal; ++k) equal = haystack[i + k] == needle[k];
    if (equal) matches.push_back({i, i + needle.size(), true, 0, false});
  }
  if (!matches.empty()) return matches;
  const std::vector<size_t> sig = NonBlankIndices(needle);
  if (sig.empty()) return matches;
  for (size_t i = 0; i < haystack.size(); ++i) {
    if (IsBlank(haystack[i])) continue;
    LineMatch m;
    if (MatchTolerantAt(haystack, needle, sig, i, &m)) matches.push_back(m);
  }
  return matches;
}

std::vector<std::string> AdaptReplacement(const std::vector<std::string_view>& needle,
                                          const std::vector<std::string_view>& replace,
                                          const LineMatch& match) {
  std::vector<std::string> out;
  if (match.exact) {
    for (std::string_view line : replace) out.emplace_back(line);
    return out;
  }
  size_t needle_lead = 0, needle_trail = 0;
  while (needle_lead < needle.size() && IsBlank(needle[needle_lead])) ++needle_lead;
  while (needle_trail < needle.size() && IsBlank(needle[needle.size() - 1 - needle_trail])) {
    ++needle_trail;
  }
  size_t begin = 0, end = replace.size();
  while (begin < end && needle_lead > 0 && IsBlank(replace[begin])) ++begin, --needle_lead;
  while (end > begin && needle_trail > 0 && IsBlank(replace[end - 1])) --end, --needle_trail;
  for (size_t i = begin; i < end; ++i) {
    std::string_view line = TrimRight(replace[i]);
    if (line.empty()) {
      out.emplace_back();
      continue;
    }
    std::string_view ws = LeadingWhitespace(line);
    const int columns = IndentColumns(ws) + match.indent_delta;
    out.push_back(MakeIndent(columns, match.use_tabs) + std::string(line.substr(ws.size())));
  }
  return out;
}

std::string DescribeNearMiss(const std::vector<std::string_view>& haystack,
                             const std::vector<std::string_view>& needle, int first_line_number) {
  const std::vector<size_t> sig = NonBlankIndices(needle);
  if (sig.empty()) return "";
  // The longest run of needle lines that matches from some haystack line on.
  size_t best_start = 0, best_len = 0;
  for (size_t i = 0; i < haystack.size(); ++i) {
    if (Trim(haystack[i]) != Trim(needle[sig[0]])) continue;
    size_t h = i, k = 0;
    while (k < sig.size()) {
      while (h < haystack.size() && IsBlank(haystack[h])) ++h;
      if (h >= haystack.size() || Trim(haystack[h]) != Trim(needle[sig[k]])) break;
      ++h;
      ++k;
    }
    if (k > best_len) {
      best_len = k;
      best_start = i;
    }
  }
  if (best_len == 0) return "";
  const std::string where = "line " + std::to_string(first_line_number + best_start);
  if (best_len == sig.size()) {
    return "its lines occur from " + where + " but with different relative indentation";
  }
  // Find the haystack line the first differing needle line was compared with.
  size_t h = best_start;
  for (size_t k = 0; k < best_len; ++k) {
    while (IsBlank(haystack[h])) ++h;
    ++h;
  }
  while (h < haystack.size() && IsBlank(haystack[h])) ++h;
  std::string msg = "its first line matches " + where + ", but SEARCH line " +
                    std::to_string(sig[best_len] + 1) + " `" +
                    QuoteLine(Trim(needle[sig[best_len]])) + "`";
  if (h < haystack.size()) {
    msg += " differs from `" + QuoteLine(Trim(haystack[h])) + "` (line " +
           std::to_string(first_line_number + h) + ")";
  } else {
    msg += " runs past the end of the EVOLVE-BLOCK";
  }
  return msg;
}

}  // namespace ks
