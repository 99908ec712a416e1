// Where the installed resources of kernelsmith are: the built-in prompt templates and the
// Python packages (worker, curate tool) its subprocesses import. Found relative to the running
// binary, so an installed or copied tree works wherever it lies:
//   $KS_RESOURCE_DIR                      explicit override (development; nothing else is tried)
//   <binary's dir>/../share/kernelsmith   installed: cmake --install, pip (the package's bin/)
//   <binary's dir>/share/kernelsmith      build tree (links to the sources, made by CMake)
// A resource directory holds prompts/ and, unless the packages are installed into the Python
// interpreter (pip), python/ with kernelsmith_worker/ and kernelsmith_curate/.
// Thread-safety: FindResources is safe to call from any thread (computed once).
#pragma once

#include <string>

#include "core/status.h"

namespace ks {

struct Resources {
  std::string dir;          // the resource directory
  std::string prompts_dir;  // dir/prompts: the built-in prompt templates
  // dir/python when it exists: prepended to the subprocesses' PYTHONPATH. Empty: the packages
  // are installed in the interpreter (pip) and nothing is added.
  std::string python_dir;
};

// The resources of this binary (/proc/self/exe). NotFound lists every directory looked at and
// how to fix it.
Result<Resources> FindResources();

// The decision itself, for a binary at `exe_path` and the override `override_dir` (empty:
// unset). Exposed for tests.
Result<Resources> FindResourcesFor(const std::string& exe_path, const std::string& override_dir);

}  // namespace ks
