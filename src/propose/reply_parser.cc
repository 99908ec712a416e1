#include "propose/reply_parser.h"

#include <array>

#include "propose/evolve_block.h"
#include "propose/lines.h"

namespace ks {
namespace {

struct Reasoning {
  std::string answer;     // the reply without reasoning
  bool unclosed = false;  // a reasoning section ran to the end of the reply
};

constexpr std::array<std::pair<std::string_view, std::string_view>, 2> kReasoningTags = {{
    {"<think>", "</think>"},
    {"<thinking>", "</thinking>"},
}};

Reasoning SplitReasoning(std::string_view text) {
  Reasoning r;
  size_t pos = 0;
  while (true) {
    size_t open = std::string_view::npos;
    std::string_view close_tag;
    size_t open_len = 0;
    for (const auto& [o, c] : kReasoningTags) {
      size_t at = text.find(o, pos);
      if (at < open) {
        open = at;
        close_tag = c;
        open_len = o.size();
      }
    }
    if (open == std::string_view::npos) {
      r.answer.append(text.substr(pos));
      break;
    }
    r.answer.append(text.substr(pos, open - pos));
    size_t close = text.find(close_tag, open + open_len);
    if (close == std::string_view::npos) {
      r.unclosed = true;
      break;
    }
    pos = close + close_tag.size();
  }
  // A closing tag left over had its opening tag in the prompt: all before it is reasoning.
  size_t cut = std::string::npos;
  for (const auto& [o, c] : kReasoningTags) {
    size_t at = r.answer.rfind(c);
    if (at != std::string::npos && (cut == std::string::npos || at + c.size() > cut)) {
      cut = at + c.size();
    }
  }
  if (cut != std::string::npos) r.answer.erase(0, cut);
  return r;
}

// A line made of 5 to 9 `c` characters, then (after optional spaces) `word`.
bool IsMarker(std::string_view line, char c, std::string_view word) {
  std::string_view t = Trim(line);
  size_t n = 0;
  while (n < t.size() && t[n] == c) ++n;
  if (n < 5 || n > 9) return false;
  return Trim(t.substr(n)) == word;
}

bool IsFence(std::string_view line) { return Trim(line).substr(0, 3) == "```"; }

// Drops a ``` fence wrapped around the lines between diff markers.
void StripFenceLines(std::vector<std::string_view>* lines) {
  if (lines->size() >= 2 && IsFence(lines->front()) && Trim(lines->back()) == "```") {
    lines->pop_back();
    lines->erase(lines->begin());
  }
}

std::string JoinLines(const std::vector<std::string_view>& lines) {
  std::string out;
  for (std::string_view line : lines) {
    out += line;
    out += '\n';
  }
  return out;
}

Result<std::vector<SearchReplace>> ParseSearchReplace(std::string_view text) {
  enum class State { kOutside, kSearch, kReplace };
  std::vector<SearchReplace> diffs;
  State state = State::kOutside;
  std::vector<std::string_view> search, replace;
  size_t opened_at = 0;
  auto where = [&]() {
    return "SEARCH/REPLACE block " + std::to_string(diffs.size() + 1) + " (reply line " +
           std::to_string(opened_at) + ")";
  };
  const std::vector<Line> lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i].text;
    const bool is_search = IsMarker(line, '<', "SEARCH");
    const bool is_divider = IsMarker(line, '=', "");
    const bool is_replace = IsMarker(line, '>', "REPLACE");
    switch (state) {
      case State::kOutside:
        if (is_search) {
          state = State::kSearch;
          opened_at = i + 1;
          search.clear();
          replace.clear();
        }
        break;
      case State::kSearch:
        if (is_divider) {
          state = State::kReplace;
        } else if (is_search || is_replace) {
          return Status::InvalidArgument(where() + " has no `=======` line between SEARCH and " +
                                         "REPLACE");
        } else {
          search.push_back(line);
        }
        break;
      case State::kReplace:
        if (is_replace) {
          StripFenceLines(&search);
          StripFenceLines(&replace);
          diffs.push_back({JoinLines(search), JoinLines(replace)});
          state = State::kOutside;
        } else if (is_search) {
          return Status::InvalidArgument(where() + " is not closed by `>>>>>>> REPLACE`");
        } else {
          replace.push_back(line);
        }
        break;
    }
  }
  if (state != State::kOutside) {
    return Status::InvalidArgument(where() +
                                   " is not closed by `>>>>>>> REPLACE` (was the reply cut off?)");
  }
  return diffs;
}

struct Fence {
  std::string code;
  bool closed = false;
};

// Fenced code blocks (``` with an optional info string; closed by a bare ``` line).
std::vector<Fence> FencedBlocks(std::string_view text) {
  std::vector<Fence> fences;
  bool inside = false;
  size_t ticks = 0;
  for (const Line& line : SplitLines(text)) {
    std::string_view t = Trim(line.text);
    size_t n = 0;
    while (n < t.size() && t[n] == '`') ++n;
    if (!inside) {
      if (n >= 3 && t.find('`', n) == std::string_view::npos) {
        inside = true;
        ticks = n;
        fences.emplace_back();
      }
    } else if (n >= ticks && n == t.size()) {
      inside = false;
      fences.back().closed = true;
    } else {
      fences.back().code.append(line.text);
      fences.back().code += '\n';
    }
  }
  return fences;
}

bool DefinesModelNew(std::string_view code) {
  for (const Line& line : SplitLines(code)) {
    std::string_view t = Trim(line.text);
    constexpr std::string_view kClass = "class ModelNew";
    if (t.substr(0, kClass.size()) != kClass || t.size() == kClass.size()) continue;
    char next = t[kClass.size()];
    if (next == '(' || next == ':' || next == ' ') return true;
  }
  return false;
}

bool HasMarker(std::string_view code) {
  for (const Line& line : SplitLines(code)) {
    if (ClassifyMarkerLine(line.text) != EvolveMarker::kNone) return true;
  }
  return false;
}

// The lines from the first START marker to the last END marker, when the reply has code that
// is not fenced.
std::string UnfencedBlock(std::string_view text) {
  const std::vector<Line> lines = SplitLines(text);
  size_t first = lines.size(), last = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    EvolveMarker m = ClassifyMarkerLine(lines[i].text);
    if (m == EvolveMarker::kStart && first == lines.size()) first = i;
    if (m == EvolveMarker::kEnd) last = i;
  }
  if (first == lines.size() || last == lines.size() || last < first) return "";
  std::string out;
  for (size_t i = first; i <= last; ++i) {
    out.append(lines[i].text);
    out += '\n';
  }
  return out;
}

Result<Edit> RewriteEdit(std::string code) {
  Edit edit;
  edit.code = std::move(code);
  if (!HasMarker(edit.code)) {
    edit.kind = Edit::Kind::kFileRewrite;
    return edit;
  }
  Result<EvolveBlock> block = FindEvolveBlock(edit.code);
  if (!block.ok()) {
    return Status::InvalidArgument("in the reply's code: " + block.status().message());
  }
  edit.kind = Edit::Kind::kBlockRewrite;
  return edit;
}

}  // namespace

std::string_view EditKindName(Edit::Kind kind) {
  switch (kind) {
    case Edit::Kind::kSearchReplace:
      return "search_replace";
    case Edit::Kind::kBlockRewrite:
      return "block_rewrite";
    case Edit::Kind::kFileRewrite:
      return "file_rewrite";
  }
  return "unknown";
}

std::string StripReasoning(std::string_view reply) { return SplitReasoning(reply).answer; }

Result<Edit> ParseReply(std::string_view reply) {
  if (IsBlank(reply)) return Status::InvalidArgument("the reply is empty");
  const std::string text = NormalizeNewlines(reply);
  const Reasoning reasoning = SplitReasoning(text);
  const std::string& answer = reasoning.answer;

  Result<std::vector<SearchReplace>> diffs = ParseSearchReplace(answer);
  if (!diffs.ok()) return diffs.status();
  if (!diffs->empty()) {
    Edit edit;
    edit.kind = Edit::Kind::kSearchReplace;
    edit.diffs = std::move(*diffs);
    return edit;
  }

  const std::vector<Fence> fences = FencedBlocks(answer);
  for (auto it = fences.rbegin(); it != fences.rend(); ++it) {
    if (HasMarker(it->code) || DefinesModelNew(it->code)) return RewriteEdit(it->code);
  }
  if (!fences.empty()) {
    return Status::InvalidArgument(
        "the reply's code blocks hold neither the `# EVOLVE-BLOCK-START` / `# EVOLVE-BLOCK-END` "
        "markers nor `class ModelNew`; send the whole EVOLVE-BLOCK with its marker lines, or "
        "SEARCH/REPLACE diffs");
  }
  std::string unfenced = UnfencedBlock(answer);
  if (!unfenced.empty()) return RewriteEdit(std::move(unfenced));
  if (reasoning.unclosed) {
    return Status::InvalidArgument(
        "the reply ends inside an unclosed <think> section; no answer followed the reasoning");
  }
  return Status::InvalidArgument("the reply contains no code block and no SEARCH/REPLACE diff");
}

}  // namespace ks
