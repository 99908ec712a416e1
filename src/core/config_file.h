// Configuration files: JSON, or YAML (.yaml/.yml) read into the same JSON value, so every
// command takes one kind of config object whatever the file's format.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace ks {

// Reads `path` as YAML when it ends in .yaml or .yml, else as JSON. YAML scalars become
// booleans, integers, floats or strings as they read; mappings and sequences become objects
// and arrays. InvalidArgument names the file and, for YAML, the line of a syntax error.
Result<nlohmann::json> ReadConfigFile(const std::string& path);

// The JSON value of a YAML document's text (exposed for tests).
Result<nlohmann::json> YamlToJson(const std::string& text, const std::string& what);

// OK when `config` is an object whose keys are all in `known`; otherwise InvalidArgument from
// `source` naming the first unknown key, the closest known one when it looks like a typo, and
// every valid key.
Status CheckConfigKeys(const nlohmann::json& config, const std::vector<std::string>& known,
                       const std::string& source);

}  // namespace ks
