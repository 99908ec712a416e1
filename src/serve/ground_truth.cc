#include "serve/ground_truth.h"

#include <initializer_list>

namespace ks {
namespace {

using nlohmann::json;

// The first of `keys` present in `j`, or nullptr.
const json* Find(const json& j, std::initializer_list<const char*> keys, std::string* found) {
  for (const char* key : keys) {
    auto it = j.find(key);
    if (it != j.end() && !it->is_null()) {
      *found = key;
      return &*it;
    }
  }
  return nullptr;
}

Status Text(const json& j, std::initializer_list<const char*> keys, bool required,
            const char* what, std::string* out) {
  std::string key;
  const json* v = Find(j, keys, &key);
  if (v == nullptr) {
    if (!required) return Status::Ok();
    return Status::InvalidArgument(std::string("ground truth: missing \"") + *keys.begin() +
                                   "\" (" + what + ")");
  }
  if (v->is_string()) {
    *out = v->get<std::string>();
  } else if (v->is_number_integer()) {
    *out = std::to_string(v->get<int64_t>());
  } else {
    return Status::InvalidArgument("ground truth: \"" + key + "\" must be a string, got " +
                                   std::string(v->type_name()));
  }
  if (required && out->empty()) {
    return Status::InvalidArgument("ground truth: \"" + key + "\" is empty (" + what + ")");
  }
  return Status::Ok();
}

Status Number(const json& j, std::initializer_list<const char*> keys, std::optional<double>* out) {
  std::string key;
  const json* v = Find(j, keys, &key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_number()) {
    return Status::InvalidArgument("ground truth: \"" + key + "\" must be a number, got " +
                                   std::string(v->type_name()));
  }
  *out = v->get<double>();
  return Status::Ok();
}

}  // namespace

Result<GroundTruth> ParseGroundTruth(const json& value) {
  json j = value;
  if (value.is_string()) {
    j = json::parse(value.get<std::string>(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      return Status::InvalidArgument(
          "ground truth: the string is not valid JSON (expected the JSON object that "
          "`kernelsmith export rl` writes)");
    }
  }
  if (!j.is_object()) {
    return Status::InvalidArgument(std::string("ground truth: expected a JSON object, got ") +
                                   j.type_name());
  }
  GroundTruth t;
  Status s = Text(j, {"reference_code", "reference", "problem_source"}, true,
                  "the reference problem's source: class Model, get_inputs", &t.reference_code);
  if (s.ok()) {
    // Required but may be empty: a translation step (its parent is the reference itself).
    if (!j.contains("parent_code")) {
      s = Status::InvalidArgument(
          "ground truth: missing \"parent_code\" (the program the completion edits; empty for a "
          "translation)");
    } else {
      s = Text(j, {"parent_code"}, false, "", &t.parent_code);
    }
  }
  if (s.ok()) s = Text(j, {"problem_id", "task_id"}, false, "", &t.problem_id);
  if (s.ok()) s = Text(j, {"problem_path"}, false, "", &t.problem_path);
  if (s.ok()) s = Text(j, {"backend"}, false, "", &t.backend);
  if (s.ok()) s = Number(j, {"parent_speedup"}, &t.parent_speedup);
  if (s.ok()) s = Number(j, {"parent_runtime_us", "parent_us"}, &t.parent_runtime_us);
  if (!s.ok()) return s;
  if (!t.backend.empty() && t.backend != "triton" && t.backend != "cuda" && t.backend != "cpu") {
    return Status::InvalidArgument("ground truth: unknown backend \"" + t.backend +
                                   "\" (triton, cuda or cpu)");
  }
  if (t.problem_path.empty()) t.problem_path = t.problem_id.empty() ? "problem.py" : t.problem_id;
  return t;
}

}  // namespace ks
