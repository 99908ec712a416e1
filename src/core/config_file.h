// Configuration files: JSON, or YAML (.yaml/.yml) read into the same JSON value, so every
// command takes one kind of config object whatever the file's format.
// Thread-safety: pure functions.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace ks {

// Reads `path` as YAML when it ends in .yaml or .yml, else as JSON. YAML scalars become
// booleans, integers, floats or strings as they read; mappings and sequences become objects
// and arrays. InvalidArgument names the file and, for YAML, the line of a syntax error.
Result<nlohmann::json> ReadConfigFile(const std::string& path);

// The JSON value of a YAML document's text (exposed for tests).
Result<nlohmann::json> YamlToJson(const std::string& text, const std::string& what);

}  // namespace ks
