#include "serve/child_extraction.h"

#include "propose/reply_parser.h"
#include "task/task.h"

namespace ks {

Result<ChildProgram> ExtractChild(std::string_view completion, std::string_view parent_code) {
  Result<Edit> edit = ParseReply(completion);
  if (!edit.ok()) return edit.status();
  if (parent_code.empty()) {  // a translation: the whole candidate file, as the engine takes it
    if (edit->kind == Edit::Kind::kSearchReplace) {
      return Status::InvalidArgument(
          "a translation must be a whole file in one code block, not SEARCH/REPLACE diffs");
    }
    if (!MissingTopLevelNames(edit->code, {"ModelNew"}).empty()) {
      return Status::InvalidArgument("the code block does not define `class ModelNew`");
    }
    return ChildProgram{edit->code, "translation"};
  }
  Result<std::string> child = ApplyEdit(parent_code, *edit);
  if (!child.ok()) return child.status();
  return ChildProgram{std::move(*child), std::string(EditKindName(edit->kind))};
}

std::string_view ResponseOfQuery(std::string_view query, std::string_view prompt) {
  if (prompt.empty()) return query;
  size_t at = query.find(prompt);
  if (at == std::string_view::npos) return query;
  return query.substr(at + prompt.size());
}

}  // namespace ks
