// Reading optional fields of JSON objects (results, records) the same way everywhere.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

namespace ks {

// j[key] when it is a number, else nothing (absent, null, or another type).
inline std::optional<double> JsonNumber(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

}  // namespace ks
