// From a trainer's completion to the child program the reward evaluates, exactly as the
// evolution engine turns an LLM reply into a candidate (src/engine/llm_proposer.cc): ParseReply
// then ApplyEdit into the parent's EVOLVE-BLOCK.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace ks {

struct ChildProgram {
  std::string code;       // the parent with the completion's edit applied
  std::string edit_kind;  // "search_replace", "block_rewrite", "file_rewrite" or "translation"
};

// Parses `completion` (reasoning sections ignored) and applies its edit to `parent_code`. An
// empty `parent_code` is a translation step: the completion must be a whole file defining
// `class ModelNew` (edit_kind "translation").
// InvalidArgument with the message the engine would send back to the model ("the reply contains
// no code block and no SEARCH/REPLACE diff", "SEARCH block 1 ... matched nothing", ...).
Result<ChildProgram> ExtractChild(std::string_view completion, std::string_view parent_code);

// The response part of an OpenRLHF query (prompt + response, rendered with the chat template):
// the text after `prompt` when the query holds it, else the whole query.
std::string_view ResponseOfQuery(std::string_view query, std::string_view prompt);

}  // namespace ks
