// Task: a KernelBench-format problem and the candidates evaluated against it.
//
// A problem file defines `class Model(nn.Module)`, `get_inputs()` and `get_init_inputs()`;
// a candidate file defines `class ModelNew`. These checks are textual (the worker imports
// the files); they exist so that a wrong file is reported before a worker starts, with the
// file and the missing name. Thread-safety: values and pure functions.
#pragma once

#include <string>

#include "core/status.h"

namespace ks {

struct SourceFile {
  std::string path;
  std::string source;
  std::string sha256;
};

// Reads and checks a problem file. InvalidArgument names the file and each missing name.
Result<SourceFile> LoadProblem(const std::string& path);
// Reads and checks a candidate file (needs `ModelNew`).
Result<SourceFile> LoadCandidate(const std::string& path);

// The names among `names` that `source` does not define at top level (a `class X`, `def X`
// or `X =` at the start of a line).
std::string MissingTopLevelNames(const std::string& source,
                                 std::initializer_list<const char*> names);

}  // namespace ks
