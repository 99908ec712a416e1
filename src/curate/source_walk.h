// Which Python files `kernelsmith curate` reads from its source directories (docs/curate.md).
//
// Each source directory is one repository root (its basename is the `repo` of its modules).
// The walk takes every `*.py` below it, in sorted order, except:
//   - hidden files and directories (".git", ".venv", ...), `__pycache__`, `node_modules`,
//     `*.egg-info`, `build`, `dist`, and any directory holding `pyvenv.cfg` (a virtualenv);
//   - test code: directories named `test`, `tests` or `testing`, and files `test_*.py`,
//     `*_test.py`, `conftest.py` (their modules are toy copies of the library's own);
//   - files larger than `max_file_bytes` (generated code);
//   - symbolic links to directories (no cycles, no escaping the root).
// Thread-safety: functions only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace ks {

struct CurateSourceFile {
  int root_index = 0;  // position of its source directory on the command line
  std::string root;    // the source directory, absolute
  std::string path;    // the file, absolute
  std::string rel;     // path relative to `root`
};

struct SourceWalkOptions {
  bool skip_tests = true;                 // leave test directories and files out
  uint64_t max_file_bytes = 2ull << 20;  // larger files are generated code: left out
};

// The Python files of `roots`, grouped by root in the given order, sorted by relative path.
// NotFound names a root that is not a directory.
Result<std::vector<CurateSourceFile>> WalkSources(const std::vector<std::string>& roots,
                                                  const SourceWalkOptions& options = {});

}  // namespace ks
