// Turning an LLM completion into an edit of the parent program, and applying it.
//
// A reply may carry SEARCH/REPLACE diffs in the OpenEvolve/aider format
//     <<<<<<< SEARCH
//     old lines
//     =======
//     new lines
//     >>>>>>> REPLACE
// (several, possibly inside ``` fences), or a rewrite in a fenced code block: of the
// EVOLVE-BLOCK when the code holds both markers, of the whole file when it defines
// `class ModelNew` without markers. <think>...</think> reasoning is ignored. Every error message
// is short and precise: it is sent back to the model.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace ks {

struct SearchReplace {
  std::string search;   // lines to find, each ending in "\n"
  std::string replace;  // lines to put in their place, each ending in "\n"
};

struct Edit {
  enum class Kind {
    kSearchReplace,  // `diffs`, applied in order
    kBlockRewrite,   // `code` holds both markers; any code shown around them must be unchanged
    kFileRewrite,    // `code` defines ModelNew and has no markers; must keep the outside code
  };
  Kind kind = Kind::kSearchReplace;
  std::vector<SearchReplace> diffs;
  std::string code;  // rewrites: the code block as returned, with "\n" line endings
};

// "search_replace", "block_rewrite" or "file_rewrite" (for logs and the store).
std::string_view EditKindName(Edit::Kind kind);

// `reply` without its reasoning: <think>...</think> and <thinking>...</thinking> sections
// removed, everything up to a closing tag whose opening tag is missing (templates that put
// <think> in the prompt) removed, and an unclosed section removed to the end.
std::string StripReasoning(std::string_view reply);

// Parses a completion. Diffs win over code blocks; among code blocks the last one holding an
// EVOLVE-BLOCK marker or `class ModelNew` is taken. InvalidArgument when nothing usable is
// found, e.g. "the reply contains no code block and no SEARCH/REPLACE diff", or when a diff is
// malformed or the code's markers are broken.
Result<Edit> ParseReply(std::string_view reply);

// Applies `edit` to `parent_code` and returns the child program. Only the EVOLVE-BLOCK may
// change: text outside it stays byte-identical. SEARCH texts are matched inside the block only,
// exactly first, then ignoring trailing whitespace, blank lines and a uniform indentation
// offset. All diffs must apply or none is. InvalidArgument, with a message for the model, when a
// SEARCH matches nothing ("SEARCH block 2 (starting `    BLOCK = 128`) matched nothing inside
// the EVOLVE-BLOCK (lines 12-40)") or several places, when the edit changes code outside the
// block, or when the child equals the parent.
Result<std::string> ApplyEdit(std::string_view parent_code, const Edit& edit);

}  // namespace ks
