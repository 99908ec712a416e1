#include "serve/request_json.h"

#include <fmt/format.h>

#include <cmath>

#include "serve/child_extraction.h"

namespace ks {
namespace {

using nlohmann::json;

Status Bad(const std::string& field, const std::string& expected, const json& got) {
  return Status::InvalidArgument(
      fmt::format("\"{}\" must be {}, got {}", field, expected, got.type_name()));
}

Status OptionalTimeout(const json& body, std::optional<double>* out) {
  auto it = body.find("timeout_s");
  if (it == body.end() || it->is_null()) return Status::Ok();
  if (!it->is_number() || !(it->get<double>() > 0) || !std::isfinite(it->get<double>())) {
    return Status::InvalidArgument("\"timeout_s\" must be a positive number of seconds");
  }
  *out = it->get<double>();
  return Status::Ok();
}

Status OptionalBool(const json& body, const char* key, bool* out) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return Status::Ok();
  if (!it->is_boolean()) return Bad(key, "true or false", *it);
  *out = it->get<bool>();
  return Status::Ok();
}

// A required array of strings of length `n` (any length when n < 0).
Status StringList(const json& body, const char* key, long n, std::vector<std::string>* out) {
  auto it = body.find(key);
  if (it == body.end()) return Status::InvalidArgument(fmt::format("missing \"{}\"", key));
  if (!it->is_array()) return Bad(key, "an array of strings", *it);
  if (n >= 0 && it->size() != static_cast<size_t>(n)) {
    return Status::InvalidArgument(fmt::format(
        "\"{}\" has {} entries but \"query\" has {}; they must match one to one", key,
        it->size(), n));
  }
  for (size_t i = 0; i < it->size(); ++i) {
    if (!(*it)[i].is_string()) return Bad(fmt::format("{}[{}]", key, i), "a string", (*it)[i]);
    out->push_back((*it)[i].get<std::string>());
  }
  return Status::Ok();
}

Status WithPrefix(const std::string& prefix, const Status& s) {
  return Status::InvalidArgument(prefix + s.message());
}

}  // namespace

Result<json> ParseJsonObject(const std::string& body) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::parse_error& e) {
    return Status::InvalidArgument(
        fmt::format("malformed JSON at byte {}: {}", e.byte, e.what()));
  }
  if (!j.is_object()) {
    return Status::InvalidArgument(
        fmt::format("the body must be a JSON object, got {}", j.type_name()));
  }
  return j;
}

Result<EvaluateCall> ParseEvaluateCall(const json& body, const EvalRequest& defaults) {
  EvaluateCall call;
  EvalRequest& r = call.request;
  r = defaults;
  r.problem_path = "problem.py";
  r.candidate_path = "candidate.py";
  struct TextField {
    const char* key;
    std::string* out;
    bool required;
  };
  for (const TextField& f : {TextField{"problem_source", &r.problem_source, true},
                             TextField{"candidate_source", &r.candidate_source, true},
                             TextField{"problem_path", &r.problem_path, false},
                             TextField{"candidate_path", &r.candidate_path, false},
                             TextField{"backend", &r.backend, false},
                             TextField{"tolerance", &r.tolerance, false}}) {
    auto it = body.find(f.key);
    if (it == body.end() || it->is_null()) {
      if (f.required) {
        return Status::InvalidArgument(fmt::format(
            "missing \"{}\" (the file's text; see docs/training.md)", f.key));
      }
      continue;
    }
    if (!it->is_string()) return Bad(f.key, "a string", *it);
    *f.out = it->get<std::string>();
    if (f.required && f.out->empty()) {
      return Status::InvalidArgument(fmt::format("\"{}\" is empty", f.key));
    }
  }
  if (r.backend != "triton" && r.backend != "cuda" && r.backend != "cpu") {
    return Status::InvalidArgument("\"backend\" must be triton, cuda or cpu, got \"" +
                                   r.backend + "\"");
  }
  if (r.tolerance != "default" && r.tolerance != "strict") {
    return Status::InvalidArgument("\"tolerance\" must be default or strict, got \"" +
                                   r.tolerance + "\"");
  }
  if (auto it = body.find("trials"); it != body.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > 1000) {
      return Status::InvalidArgument("\"trials\" must be an integer from 1 to 1000");
    }
    r.trials = it->get<int>();
  }
  if (auto it = body.find("seed"); it != body.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 0) {
      return Status::InvalidArgument("\"seed\" must be a non-negative integer");
    }
    r.seed = it->get<uint64_t>();
  }
  Status s = OptionalBool(body, "timing", &r.timing);
  if (s.ok()) s = OptionalTimeout(body, &call.timeout_s);
  if (!s.ok()) return s;
  return call;
}

Result<RewardCall> ParseRewardCall(const json& body) {
  RewardCall call;
  auto items = body.find("items");
  if (items == body.end()) {
    return Status::InvalidArgument(
        "missing \"items\": [{\"completion\": ..., \"ground_truth\": ...}, ...]");
  }
  if (!items->is_array()) return Bad("items", "an array", *items);
  for (size_t i = 0; i < items->size(); ++i) {
    const json& item = (*items)[i];
    std::string where = fmt::format("items[{}]", i);
    if (!item.is_object()) return Bad(where, "an object", item);
    auto completion = item.find("completion");
    if (completion == item.end() || !completion->is_string()) {
      return Status::InvalidArgument(where + ".completion: missing, or not a string");
    }
    auto truth = item.find("ground_truth");
    if (truth == item.end()) return Status::InvalidArgument(where + ".ground_truth: missing");
    Result<GroundTruth> gt = ParseGroundTruth(*truth);
    if (!gt.ok()) return WithPrefix(where + ": ", gt.status());
    call.items.push_back({completion->get<std::string>(), std::move(*gt)});
  }
  Status s = OptionalTimeout(body, &call.timeout_s);
  if (s.ok()) s = OptionalBool(body, "include_eval", &call.include_eval);
  if (!s.ok()) return s;
  return call;
}

Result<RewardCall> ParseOpenRlhfCall(const json& body) {
  std::vector<std::string> queries, prompts, labels;
  Status s = StringList(body, "query", -1, &queries);
  if (!s.ok()) return s;
  const long n = static_cast<long>(queries.size());
  if (body.contains("prompts") && !body["prompts"].is_null()) {
    s = StringList(body, "prompts", n, &prompts);
    if (!s.ok()) return s;
  }
  if (!body.contains("labels") || body["labels"].is_null()) {
    return Status::InvalidArgument(
        "missing \"labels\": OpenRLHF sends them when started with --label_key (use the "
        "column `kernelsmith export rl` writes as \"label\")");
  }
  s = StringList(body, "labels", n, &labels);
  if (!s.ok()) return s;
  RewardCall call;
  for (size_t i = 0; i < queries.size(); ++i) {
    Result<GroundTruth> gt = ParseGroundTruth(json(labels[i]));
    if (!gt.ok()) return WithPrefix(fmt::format("labels[{}]: ", i), gt.status());
    std::string_view response =
        ResponseOfQuery(queries[i], prompts.empty() ? std::string_view() : prompts[i]);
    call.items.push_back({std::string(response), std::move(*gt)});
  }
  s = OptionalTimeout(body, &call.timeout_s);
  if (!s.ok()) return s;
  return call;
}

}  // namespace ks
