// ScanTunables / FindTunables (declared in tuner.h): finding tunable constants in the block.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>

#include "propose/evolve_block.h"
#include "propose/python_lexer.h"
#include "propose/tuner.h"

namespace ks {
namespace {

struct Site {
  std::string name;
  size_t offset = 0;
  size_t length = 0;
  int64_t value = 0;
};

struct ExplicitRange {
  std::vector<int64_t> values;
  int line = 0;
};

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsBlankChar(char c) { return c == ' ' || c == '\t'; }

std::vector<int64_t> ImplicitChoices(std::string_view name, int64_t current) {
  std::string up(name);
  for (char& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int64_t lo = 0, hi = 0;
  bool pow2 = true;
  if (up == "NUM_WARPS") {
    lo = 1, hi = 32;
  } else if (up == "NUM_STAGES") {
    lo = 1, hi = 7, pow2 = false;
  } else if (up.starts_with("GROUP_SIZE")) {
    lo = 1, hi = 32;
  } else if (up.starts_with("UNROLL") || up.starts_with("VEC")) {
    lo = 1, hi = 16;
  } else if (up.starts_with("BLOCK") || up.starts_with("TILE")) {
    const bool two_d = up.ends_with("_M") || up.ends_with("_N") || up.ends_with("_K");
    lo = 16, hi = two_d ? 256 : 8192;
  } else {
    return {};
  }
  std::vector<int64_t> out;
  for (int64_t v = lo; v <= hi; v = pow2 ? v * 2 : v + 1) out.push_back(v);
  if (!std::binary_search(out.begin(), out.end(), current)) {
    out.insert(std::lower_bound(out.begin(), out.end(), current), current);
  }
  return out;
}

// Parses the text after `ks:tune`: NAME=[v1, v2, ...] entries separated by spaces or commas.
bool ParseTuneEntries(std::string_view s, int line, std::map<std::string, ExplicitRange>* out) {
  size_t i = 0;
  int entries = 0;
  auto skip = [&](bool commas) {
    while (i < s.size() && (IsBlankChar(s[i]) || (commas && s[i] == ','))) ++i;
  };
  while (true) {
    skip(true);
    if (i >= s.size()) break;
    if (!IsIdentStart(s[i])) return false;
    size_t start = i;
    while (i < s.size() && IsIdentChar(s[i])) ++i;
    std::string name(s.substr(start, i - start));
    skip(false);
    if (i >= s.size() || s[i] != '=') return false;
    ++i;
    skip(false);
    if (i >= s.size() || s[i] != '[') return false;
    ++i;
    std::vector<int64_t> values;
    while (true) {
      skip(false);
      int64_t v = 0;
      auto [end, ec] = std::from_chars(s.data() + i, s.data() + s.size(), v);
      if (ec != std::errc()) return false;
      values.push_back(v);
      i = static_cast<size_t>(end - s.data());
      skip(false);
      if (i < s.size() && s[i] == ',') {
        ++i;
        continue;
      }
      if (i < s.size() && s[i] == ']') {
        ++i;
        break;
      }
      return false;
    }
    ExplicitRange& range = (*out)[name];
    range.values.insert(range.values.end(), values.begin(), values.end());
    std::sort(range.values.begin(), range.values.end());
    range.values.erase(std::unique(range.values.begin(), range.values.end()), range.values.end());
    range.line = line;
    ++entries;
  }
  return entries > 0;
}

// An assignment or keyword argument `NAME = <int>` whose name starts at `p`; sets `*next` to
// where scanning resumes.
std::optional<Site> SiteAt(std::string_view code, const std::vector<PyRegion>& regions, size_t p,
                           size_t end, size_t* next) {
  size_t q = p;
  while (q < end && IsIdentChar(code[q])) ++q;
  *next = q;
  size_t stmt = p;
  if (p > 0 && code[p - 1] == '.') {
    if (p < 5 || code.substr(p - 5, 5) != "self." || (p > 5 && IsIdentChar(code[p - 6]))) {
      return std::nullopt;
    }
    stmt = p - 5;
  }
  size_t r = q;
  while (r < end && IsBlankChar(code[r])) ++r;
  if (r < end && code[r] == ':') {  // annotation, e.g. `: tl.constexpr`
    ++r;
    while (r < end && (IsIdentChar(code[r]) || IsBlankChar(code[r]) || code[r] == '.' ||
                       code[r] == '[' || code[r] == ']')) {
      ++r;
    }
  }
  if (r >= end || code[r] != '=' || (r + 1 < end && code[r + 1] == '=')) return std::nullopt;
  size_t s = r + 1;
  while (s < end && IsBlankChar(code[s])) ++s;
  size_t t = s;
  while (t < end && IsDigit(code[t])) ++t;
  if (t == s || (t < end && (IsIdentChar(code[t]) || code[t] == '.'))) return std::nullopt;
  if (regions[s] != PyRegion::kCode) return std::nullopt;
  *next = t;

  // Keyword argument or parameter default: `(` or `,` before, `,` or `)` after (lines may
  // break in between).
  auto skippable = [&](size_t i) {
    return std::isspace(static_cast<unsigned char>(code[i])) || regions[i] == PyRegion::kComment;
  };
  size_t b = stmt;
  while (b > 0 && skippable(b - 1)) --b;
  size_t e = t;
  while (e < code.size() && skippable(e)) ++e;
  bool ok = b > 0 && (code[b - 1] == '(' || code[b - 1] == ',') && e < code.size() &&
            (code[e] == ',' || code[e] == ')');
  if (!ok) {  // assignment statement: alone on its line but for a comment
    b = stmt;
    while (b > 0 && IsBlankChar(code[b - 1])) --b;
    e = t;
    while (e < code.size() && IsBlankChar(code[e])) ++e;
    ok = (b == 0 || code[b - 1] == '\n') &&
         (e >= code.size() || code[e] == '\n' || code[e] == '\r' || code[e] == '#');
  }
  if (!ok) return std::nullopt;
  Site site{std::string(code.substr(p, q - p)), s, t - s, 0};
  auto [ptr, ec] = std::from_chars(code.data() + s, code.data() + t, site.value);
  if (ec != std::errc()) return std::nullopt;
  return site;
}

}  // namespace

Result<std::vector<TunableParam>> ScanTunables(std::string_view code) {
  Result<EvolveBlock> block = FindEvolveBlock(code);
  if (!block.ok()) return block.status();
  const std::vector<PyRegion> regions = ClassifyPythonRegions(code);
  std::vector<size_t> line_starts = {0};
  for (size_t i = 0; i < code.size(); ++i) {
    if (code[i] == '\n') line_starts.push_back(i + 1);
  }
  auto line_of = [&](size_t offset) {
    return static_cast<int>(std::upper_bound(line_starts.begin(), line_starts.end(), offset) -
                            line_starts.begin());
  };
  const size_t begin = block->body_begin, end = block->body_end;

  std::map<std::string, ExplicitRange> explicit_ranges;
  std::vector<Site> sites;
  for (size_t p = begin; p < end;) {
    if (regions[p] == PyRegion::kComment) {
      size_t e = p;
      while (e < end && regions[e] == PyRegion::kComment) ++e;
      std::string_view comment = code.substr(p, e - p);
      size_t at = comment.find("ks:tune");
      if (at != std::string_view::npos &&
          !ParseTuneEntries(comment.substr(at + 7), line_of(p), &explicit_ranges)) {
        return Status::InvalidArgument("malformed `# ks:tune` comment on line " +
                                       std::to_string(line_of(p)) +
                                       ": expected NAME=[v1, v2, ...]");
      }
      p = e;
      continue;
    }
    if (regions[p] == PyRegion::kCode && IsIdentStart(code[p]) &&
        (p == 0 || !IsIdentChar(code[p - 1]))) {
      size_t next = p + 1;
      if (std::optional<Site> site = SiteAt(code, regions, p, end, &next)) {
        sites.push_back(std::move(*site));
      }
      p = next;
      continue;
    }
    ++p;
  }

  std::vector<TunableParam> params;
  std::map<std::string, int> count;
  for (const Site& site : sites) {
    TunableParam param;
    param.name = site.name;
    param.value = site.value;
    param.offset = site.offset;
    param.length = site.length;
    param.line = line_of(site.offset);
    auto it = explicit_ranges.find(site.name);
    if (it != explicit_ranges.end()) {
      param.choices = it->second.values;
      param.explicit_range = true;
    } else {
      param.choices = ImplicitChoices(site.name, site.value);
      if (param.choices.empty()) continue;
    }
    ++count[param.name];
    params.push_back(std::move(param));
  }
  for (const auto& [name, range] : explicit_ranges) {
    if (count.count(name) == 0) {
      return Status::InvalidArgument("`# ks:tune " + name + "=[...]` on line " +
                                     std::to_string(range.line) +
                                     " names a constant the EVOLVE-BLOCK never sets (expected `" +
                                     name + " = <int>` or `" + name + "=<int>`)");
    }
  }
  for (TunableParam& param : params) {
    param.key = count[param.name] > 1 ? param.name + "@" + std::to_string(param.line) : param.name;
  }
  return params;
}

std::vector<TunableParam> FindTunables(std::string_view code) {
  Result<std::vector<TunableParam>> params = ScanTunables(code);
  if (!params.ok()) return {};
  return std::move(*params);
}

}  // namespace ks
