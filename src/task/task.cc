#include "task/task.h"

#include <cctype>
#include <string_view>

#include "core/file.h"
#include "core/sha256.h"

namespace ks {
namespace {

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// True when the line `line` starts with `class NAME`, `def NAME` or `NAME =` (a scan, not a
// regex: linear in the line, whatever a reply's size).
bool LineDefines(std::string_view line, std::string_view name) {
  for (std::string_view keyword : {"class", "def"}) {
    if (line.substr(0, keyword.size()) != keyword) continue;
    size_t i = keyword.size();
    size_t spaces = i;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i == spaces) continue;
    if (line.substr(i, name.size()) == name &&
        (i + name.size() == line.size() || !IsNameChar(line[i + name.size()]))) {
      return true;
    }
  }
  if (line.substr(0, name.size()) != name) return false;
  size_t i = name.size();
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  return i < line.size() && line[i] == '=' && (i + 1 == line.size() || line[i + 1] != '=');
}

bool DefinesTopLevel(const std::string& source, const std::string& name) {
  std::string_view text(source);
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    if (LineDefines(text.substr(start, end - start), name)) return true;
    start = end + 1;
  }
  return false;
}

Result<SourceFile> LoadChecked(const std::string& path, const char* what,
                               std::initializer_list<const char*> names, const char* hint) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) {
    return Status::InvalidArgument("cannot read the " + std::string(what) + " file " +
                                   text.status().message());
  }
  std::string missing = MissingTopLevelNames(*text, names);
  if (!missing.empty()) {
    return Status::InvalidArgument(path + ": this " + what + " file does not define " + missing +
                                   " (" + hint + ")");
  }
  return SourceFile{path, *text, Sha256Hex(*text)};
}

}  // namespace

std::string MissingTopLevelNames(const std::string& source,
                                 std::initializer_list<const char*> names) {
  std::string missing;
  for (const char* name : names) {
    if (DefinesTopLevel(source, name)) continue;
    if (!missing.empty()) missing += ", ";
    missing += std::string("`") + name + "`";
  }
  return missing;
}

Result<SourceFile> LoadProblem(const std::string& path) {
  return LoadChecked(path, "problem", {"Model", "get_inputs", "get_init_inputs"},
                     "a KernelBench problem defines class Model(nn.Module), get_inputs() and "
                     "get_init_inputs()");
}

Result<SourceFile> LoadCandidate(const std::string& path) {
  return LoadChecked(path, "candidate", {"ModelNew"},
                     "a candidate defines class ModelNew(nn.Module) with Model's constructor "
                     "and forward signature");
}

}  // namespace ks
