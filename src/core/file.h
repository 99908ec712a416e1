// Whole-file reads and writes with errors a user can act on.
// Thread-safety: functions; callers serialize access to the same path.
#pragma once

#include <string>

#include "core/status.h"

namespace ks {

// Reads the whole file. NotFound / IOError name the path and the OS reason.
Result<std::string> ReadFile(const std::string& path);

// Writes `data` to `path` atomically (temporary file in the same directory, then rename).
Status WriteFileAtomic(const std::string& path, const std::string& data);

}  // namespace ks
