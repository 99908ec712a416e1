#include "task/task.h"

#include <regex>

#include "core/file.h"
#include "core/sha256.h"

namespace ks {
namespace {

bool DefinesTopLevel(const std::string& source, const std::string& name) {
  const std::regex def("(^|\\n)(class|def)\\s+" + name + "\\b|(^|\\n)" + name + "\\s*=");
  return std::regex_search(source, def);
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
