// ApplyEdit (declared in reply_parser.h): applying a parsed reply to the parent program.
#include <string>
#include <vector>

#include "propose/evolve_block.h"
#include "propose/lines.h"
#include "propose/reply_parser.h"
#include "propose/search_match.h"

namespace ks {
namespace {

std::string BlockSpan(const EvolveBlock& block) {
  return "(lines " + std::to_string(block.start_line + 1) + "-" +
         std::to_string(block.end_line - 1) + ")";
}

std::string FirstNonBlank(const std::vector<std::string_view>& lines) {
  for (std::string_view line : lines) {
    if (!IsBlank(line)) return QuoteLine(line);
  }
  return "";
}

// Drops a marker line the model quoted on both sides of a diff as an anchor.
void DropQuotedMarkers(std::vector<std::string_view>* search, std::vector<std::string_view>* rep) {
  while (!search->empty() && !rep->empty() &&
         ClassifyMarkerLine(search->front()) != EvolveMarker::kNone &&
         Trim(search->front()) == Trim(rep->front())) {
    search->erase(search->begin());
    rep->erase(rep->begin());
  }
  while (!search->empty() && !rep->empty() &&
         ClassifyMarkerLine(search->back()) != EvolveMarker::kNone &&
         Trim(search->back()) == Trim(rep->back())) {
    search->pop_back();
    rep->pop_back();
  }
}

Result<std::string> ApplyDiffs(std::string_view parent, const EvolveBlock& block,
                               const std::vector<SearchReplace>& diffs) {
  const int body_line = block.start_line + 1;  // line number of the body's first line
  std::vector<std::string> body;
  for (const Line& line : SplitLines(block.Body(parent))) body.emplace_back(line.text);
  const std::vector<std::string_view> whole = LineTexts(parent);

  std::vector<std::string> errors;
  for (size_t d = 0; d < diffs.size(); ++d) {
    std::vector<std::string_view> search = LineTexts(diffs[d].search);
    std::vector<std::string_view> replace = LineTexts(diffs[d].replace);
    DropQuotedMarkers(&search, &replace);
    const std::string name = "SEARCH block " + std::to_string(d + 1);
    const std::string first = FirstNonBlank(search);
    if (first.empty()) {
      errors.push_back(name + " is empty; quote the exact lines to replace");
      continue;
    }
    const std::string label = name + " (starting `" + first + "`)";
    bool adds_marker = false;
    for (std::string_view line : replace) {
      adds_marker = adds_marker || ClassifyMarkerLine(line) != EvolveMarker::kNone;
    }
    if (adds_marker) {
      errors.push_back("REPLACE block " + std::to_string(d + 1) +
                       " adds an EVOLVE-BLOCK marker line; markers must stay as they are");
      continue;
    }
    const std::vector<std::string_view> hay(body.begin(), body.end());
    std::vector<LineMatch> matches = FindLineMatches(hay, search);
    if (matches.size() > 1) {
      std::string lines;
      for (size_t m = 0; m < matches.size() && m < 5; ++m) {
        lines += (m ? ", " : "") + std::to_string(body_line + matches[m].first);
      }
      errors.push_back(label + " matches " + std::to_string(matches.size()) +
                       " places inside the EVOLVE-BLOCK (lines " + lines +
                       (matches.size() > 5 ? ", ..." : "") +
                       "); add context lines to make it unique");
      continue;
    }
    if (matches.empty()) {
      // Lines of the parent program: the body is [start_line, end_line - 1) 0-based.
      const size_t body_first = static_cast<size_t>(block.start_line);
      const size_t body_last = static_cast<size_t>(block.end_line) - 1;
      bool stale = false;
      std::string outside;
      for (const LineMatch& m : FindLineMatches(whole, search)) {
        if (m.first >= body_first && m.last <= body_last) {
          stale = true;
        } else if (outside.empty()) {
          outside = std::to_string(m.first + 1);
        }
      }
      if (!outside.empty()) {
        errors.push_back(label + " matches line " + outside + ", outside the EVOLVE-BLOCK " +
                         BlockSpan(block) + "; only code between the markers may change");
        continue;
      }
      std::string msg = label + " matched nothing inside the EVOLVE-BLOCK " + BlockSpan(block);
      if (stale) {
        msg += "; an earlier block of this reply already changed those lines";
      } else if (std::string hint = DescribeNearMiss(hay, search, body_line); !hint.empty()) {
        msg += "; " + hint;
      }
      errors.push_back(msg);
      continue;
    }
    std::vector<std::string> lines = AdaptReplacement(search, replace, matches[0]);
    body.erase(body.begin() + static_cast<std::ptrdiff_t>(matches[0].first),
               body.begin() + static_cast<std::ptrdiff_t>(matches[0].last));
    body.insert(body.begin() + static_cast<std::ptrdiff_t>(matches[0].first), lines.begin(),
                lines.end());
  }
  if (!errors.empty()) {
    std::string msg;
    for (const std::string& e : errors) msg += (msg.empty() ? "" : "; ") + e;
    if (diffs.size() > errors.size()) {
      msg += "; the other " + std::to_string(diffs.size() - errors.size()) +
             " block(s) matched, but nothing was applied";
    }
    return Status::InvalidArgument(msg);
  }
  std::string out(parent.substr(0, block.body_begin));
  for (const std::string& line : body) out += line + block.newline;
  out += parent.substr(block.body_end);
  return out;
}

// Trimmed non-blank lines.
std::vector<std::string_view> Significant(std::string_view text) {
  std::vector<std::string_view> out;
  for (const Line& line : SplitLines(text)) {
    if (!IsBlank(line.text)) out.push_back(Trim(line.text));
  }
  return out;
}

Status OutsideChanged(std::string_view line) {
  return Status::InvalidArgument("the rewrite changes code outside the EVOLVE-BLOCK (`" +
                                 QuoteLine(line) +
                                 "` is not in the original there); keep that code as it is "
                                 "and change only the lines between the markers");
}

// Context the model showed around the markers must be the parent's outside code: its lines
// must occur there in order (elided lines, full-line comments and `...` lines are allowed).
Status CheckContext(const std::vector<std::string_view>& parent,
                    const std::vector<std::string_view>& shown) {
  size_t p = 0;
  for (std::string_view line : shown) {
    if (line.front() == '#' || line == "...") continue;
    while (p < parent.size() && parent[p] != line) ++p;
    if (p == parent.size()) return OutsideChanged(line);
    ++p;
  }
  return Status::Ok();
}

Status CheckContext(std::string_view parent, const EvolveBlock& pb, std::string_view code,
                    const EvolveBlock& cb) {
  Status s = CheckContext(Significant(parent.substr(0, pb.start_marker_begin)),
                          Significant(code.substr(0, cb.start_marker_begin)));
  if (!s.ok()) return s;
  return CheckContext(Significant(parent.substr(pb.end_marker_end)),
                      Significant(code.substr(cb.end_marker_end)));
}

// A whole-file rewrite without markers: the body is what lies between the parent's outside code.
Result<std::string> FileRewriteBody(std::string_view parent, const EvolveBlock& pb,
                                    std::string_view code) {
  const auto before = Significant(parent.substr(0, pb.start_marker_begin));
  const auto after = Significant(parent.substr(pb.end_marker_end));
  const std::vector<std::string_view> lines = LineTexts(code);
  auto dropped = [](std::string_view line) {
    return Status::InvalidArgument(
        "the rewrite drops the EVOLVE-BLOCK markers and changes code outside them (`" +
        QuoteLine(line) +
        "` of the original is missing or altered); send the EVOLVE-BLOCK with its marker lines");
  };
  size_t a = 0;
  for (std::string_view want : before) {
    while (a < lines.size() && IsBlank(lines[a])) ++a;
    if (a >= lines.size() || Trim(lines[a]) != want) return dropped(want);
    ++a;
  }
  size_t b = lines.size();
  for (auto it = after.rbegin(); it != after.rend(); ++it) {
    while (b > a && IsBlank(lines[b - 1])) --b;
    if (b <= a || Trim(lines[b - 1]) != *it) return dropped(*it);
    --b;
  }
  while (a < b && IsBlank(lines[a])) ++a;
  while (b > a && IsBlank(lines[b - 1])) --b;
  std::string body;
  for (size_t i = a; i < b; ++i) {
    body.append(lines[i]);
    body += '\n';
  }
  return body;
}

}  // namespace

Result<std::string> ApplyEdit(std::string_view parent_code, const Edit& edit) {
  Result<EvolveBlock> parent_block = FindEvolveBlock(parent_code);
  if (!parent_block.ok()) {
    return Status::InvalidArgument("the parent program: " + parent_block.status().message());
  }
  Result<std::string> child = Status::Internal("unhandled edit kind");
  switch (edit.kind) {
    case Edit::Kind::kSearchReplace:
      if (edit.diffs.empty()) {
        return Status::InvalidArgument(
            "the reply contains no code block and no SEARCH/REPLACE "
            "diff");
      }
      child = ApplyDiffs(parent_code, *parent_block, edit.diffs);
      break;
    case Edit::Kind::kBlockRewrite: {
      Result<EvolveBlock> block = FindEvolveBlock(edit.code);
      if (!block.ok()) {
        return Status::InvalidArgument("in the reply's code: " + block.status().message());
      }
      Status s = CheckContext(parent_code, *parent_block, edit.code, *block);
      if (!s.ok()) return s;
      child = ReplaceEvolveBlock(parent_code, block->Body(edit.code));
      break;
    }
    case Edit::Kind::kFileRewrite: {
      Result<std::string> body = FileRewriteBody(parent_code, *parent_block, edit.code);
      if (!body.ok()) return body.status();
      child = ReplaceEvolveBlock(parent_code, *body);
      break;
    }
  }
  if (child.ok() && *child == parent_code) {
    return Status::InvalidArgument("the edit leaves the program unchanged");
  }
  return child;
}

}  // namespace ks
