#include "core/config_file.h"

#include <yaml-cpp/yaml.h>

#include "core/file.h"

namespace ks {
namespace {

nlohmann::json ScalarToJson(const std::string& s, bool quoted) {
  if (quoted) return s;
  if (s == "true" || s == "True" || s == "yes") return true;
  if (s == "false" || s == "False" || s == "no") return false;
  if (s == "null" || s == "~" || s.empty()) return nullptr;
  size_t used = 0;
  try {
    long long i = std::stoll(s, &used);
    if (used == s.size()) return i;
  } catch (const std::exception&) {
  }
  try {
    double d = std::stod(s, &used);
    if (used == s.size()) return d;
  } catch (const std::exception&) {
  }
  return s;
}

nlohmann::json NodeToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json obj = nlohmann::json::object();
      for (const auto& kv : node) obj[kv.first.as<std::string>()] = NodeToJson(kv.second);
      return obj;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& item : node) arr.push_back(NodeToJson(item));
      return arr;
    }
    case YAML::NodeType::Scalar:
      return ScalarToJson(node.Scalar(), node.Tag() == "!");
    default:
      return nullptr;
  }
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Result<nlohmann::json> YamlToJson(const std::string& text, const std::string& what) {
  try {
    return NodeToJson(YAML::Load(text));
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(what + ": not valid YAML (line " +
                                   std::to_string(e.mark.line + 1) + "): " + e.msg);
  }
}

Result<nlohmann::json> ReadConfigFile(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  if (EndsWith(path, ".yaml") || EndsWith(path, ".yml")) return YamlToJson(*text, path);
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return Status::InvalidArgument(path + ": not valid JSON");
  return j;
}

}  // namespace ks
