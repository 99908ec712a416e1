#include "core/config_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <string>
#include <vector>

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
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The text of line `line` (1-based) of `text`, without its newline.
std::string LineOf(const std::string& text, size_t line) {
  size_t start = 0;
  for (size_t l = 1; l < line && start != std::string::npos; ++l) {
    start = text.find('\n', start);
    if (start != std::string::npos) ++start;
  }
  if (start == std::string::npos || start >= text.size()) return "";
  size_t end = text.find('\n', start);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// ": `LINE TEXT`" for messages, or "" for an empty line.
std::string Quoted(const std::string& line_text) {
  size_t b = line_text.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return ": `" + line_text.substr(b) + "`";
}

// Edit distance of two short strings, for "did you mean".
size_t Distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

Result<nlohmann::json> YamlToJson(const std::string& text, const std::string& what) {
  try {
    return NodeToJson(YAML::Load(text));
  } catch (const YAML::Exception& e) {
    size_t line = static_cast<size_t>(e.mark.line + 1);
    return Status::InvalidArgument(what + ": not valid YAML (line " + std::to_string(line) +
                                   ", column " + std::to_string(e.mark.column + 1) + "): " + e.msg +
                                   Quoted(LineOf(text, line)) + "; fix line " +
                                   std::to_string(line) +
                                   " (keys are `name: value`, lists `[a, b]` or `- item` lines)");
  }
}

Result<nlohmann::json> ReadConfigFile(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  if (EndsWith(path, ".yaml") || EndsWith(path, ".yml")) return YamlToJson(*text, path);
  try {
    return nlohmann::json::parse(*text);
  } catch (const nlohmann::json::parse_error& e) {
    // Line and column of the byte where parsing stopped.
    size_t byte = std::min(e.byte > 0 ? e.byte - 1 : 0, text->size());
    size_t line = 1, column = 1;
    for (size_t i = 0; i < byte; ++i) {
      if ((*text)[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return Status::InvalidArgument(
        path + ": not valid JSON (line " + std::to_string(line) + ", column " +
        std::to_string(column) + ")" + Quoted(LineOf(*text, line)) + "; fix line " +
        std::to_string(line) + " (or name the file .yaml to write YAML)");
  }
}

Status CheckConfigKeys(const nlohmann::json& config, const std::vector<std::string>& known,
                       const std::string& source) {
  if (!config.is_object()) {
    return Status::InvalidArgument(source + ": expected a mapping of option names to values");
  }
  for (const auto& item : config.items()) {
    const std::string& key = item.key();
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string list, best;
    size_t best_distance = 3;  // suggest only close matches
    for (const std::string& k : known) {
      list += (list.empty() ? "" : ", ") + k;
      if (size_t d = Distance(key, k); d < best_distance) {
        best_distance = d;
        best = k;
      }
    }
    return Status::InvalidArgument(source + ": unknown key \"" + key + "\"" +
                                   (best.empty() ? "" : " (did you mean \"" + best + "\"?)") +
                                   "; valid keys: " + list);
  }
  return Status::Ok();
}

}  // namespace ks
