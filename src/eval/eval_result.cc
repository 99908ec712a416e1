#include "eval/eval_result.h"

#include <array>
#include <utility>

#include "core/json_fields.h"

namespace ks {
namespace {

constexpr std::array<std::pair<EvalStatus, const char*>, 8> kStatusNames = {{
    {EvalStatus::kOk, "ok"},
    {EvalStatus::kCompileError, "compile_error"},
    {EvalStatus::kRuntimeError, "runtime_error"},
    {EvalStatus::kIncorrect, "incorrect"},
    {EvalStatus::kHacked, "hacked"},
    {EvalStatus::kTimeout, "timeout"},
    {EvalStatus::kCrash, "crash"},
    {EvalStatus::kInfraError, "infra_error"},
}};

nlohmann::json OptionalNumber(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::string StringOr(const nlohmann::json& j, const char* key, std::string fallback = "") {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return fallback;
  return it->get<std::string>();
}

FileIdentity IdentityFrom(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_object()) return {};
  return {StringOr(*it, "path"), StringOr(*it, "sha256")};
}

}  // namespace

const char* EvalStatusName(EvalStatus s) {
  for (const auto& [status, name] : kStatusNames) {
    if (status == s) return name;
  }
  return "infra_error";
}

Result<EvalStatus> ParseEvalStatus(const std::string& name) {
  for (const auto& [status, n] : kStatusNames) {
    if (name == n) return status;
  }
  return Status::InvalidArgument("unknown evaluation status '" + name + "'");
}

namespace {

nlohmann::json CiJson(const std::optional<double>& lo, const std::optional<double>& hi) {
  return lo && hi ? nlohmann::json::array({*lo, *hi}) : nlohmann::json(nullptr);
}

// Reads "speedup_ci95": [lo, hi] of `j` when it is a pair of numbers.
void ReadCi(const nlohmann::json& j, std::optional<double>* lo, std::optional<double>* hi) {
  auto ci = j.find("speedup_ci95");
  if (ci != j.end() && ci->is_array() && ci->size() == 2 && (*ci)[0].is_number() &&
      (*ci)[1].is_number()) {
    *lo = (*ci)[0].get<double>();
    *hi = (*ci)[1].get<double>();
  }
}

nlohmann::json CaseToJson(const CaseResult& c) {
  return {{"name", c.name},
          {"weight", c.weight},
          {"status", c.status},
          {"message", c.message},
          {"speedup", OptionalNumber(c.speedup)},
          {"speedup_ci95", CiJson(c.speedup_ci_lo, c.speedup_ci_hi)},
          {"ref_us", OptionalNumber(c.ref_us)},
          {"cand_us", OptionalNumber(c.cand_us)},
          {"cv", OptionalNumber(c.cv)},
          {"stages", c.stages},
          {"roofline", c.roofline}};
}

Result<CaseResult> CaseFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::Protocol("result field 'cases' holds a non-object");
  CaseResult c;
  c.name = StringOr(j, "name");
  if (c.name.empty()) return Status::Protocol("result field 'cases' holds a case without a name");
  c.weight = JsonNumber(j, "weight").value_or(1.0);
  c.status = StringOr(j, "status");
  if (c.status != "not_run" && !ParseEvalStatus(c.status).ok()) {
    return Status::Protocol("case '" + c.name + "' has an unknown status '" + c.status + "'");
  }
  c.message = StringOr(j, "message");
  c.speedup = JsonNumber(j, "speedup");
  ReadCi(j, &c.speedup_ci_lo, &c.speedup_ci_hi);
  c.ref_us = JsonNumber(j, "ref_us");
  c.cand_us = JsonNumber(j, "cand_us");
  c.cv = JsonNumber(j, "cv");
  if (auto st = j.find("stages"); st != j.end() && st->is_object()) c.stages = *st;
  if (auto rl = j.find("roofline"); rl != j.end()) c.roofline = *rl;
  return c;
}

}  // namespace

nlohmann::json EvalResult::ToJson() const {
  nlohmann::json j;
  j["schema_version"] = kEvalResultSchemaVersion;
  j["status"] = EvalStatusName(status);
  j["message"] = message;
  j["backend"] = backend;
  j["problem"] = {{"path", problem.path}, {"sha256", problem.sha256}};
  j["candidate"] = {{"path", candidate.path}, {"sha256", candidate.sha256}};
  j["speedup"] = OptionalNumber(speedup);
  j["speedup_ci95"] = CiJson(speedup_ci_lo, speedup_ci_hi);
  j["ref_us"] = OptionalNumber(ref_us);
  j["cand_us"] = OptionalNumber(cand_us);
  j["cv"] = OptionalNumber(cv);
  j["vs_baseline"] = nullptr;
  if (vs_baseline) {
    const BaselineComparison& b = *vs_baseline;
    j["vs_baseline"] = {{"path", b.path},
                        {"speedup", b.speedup},
                        {"speedup_ci95", CiJson(b.speedup_ci_lo, b.speedup_ci_hi)},
                        {"baseline_us", OptionalNumber(b.baseline_us)},
                        {"cand_us", OptionalNumber(b.cand_us)}};
  }
  if (!cases.empty()) {
    j["cases"] = nlohmann::json::array();
    for (const CaseResult& c : cases) j["cases"].push_back(CaseToJson(c));
  }
  j["findings"] = nlohmann::json::array();
  for (const Finding& f : findings) {
    j["findings"].push_back({{"kind", f.kind}, {"detail", f.detail}, {"severity", f.severity}});
  }
  j["roofline"] = roofline ? RooflineToJson(*roofline) : nlohmann::json(nullptr);
  j["stages"] = stages;
  j["device"] = device;
  j["duration_s"] = duration_s;
  j["device_seconds"] = device_seconds;
  j["gpu_seconds"] = gpu_seconds;
  j["stdout_tail"] = stdout_tail;
  j["stderr_tail"] = stderr_tail;
  j["feedback"] = feedback;
  if (!evaluated_by.empty()) j["evaluated_by"] = evaluated_by;
  return j;
}

Result<EvalResult> EvalResult::FromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::Protocol("result is not a JSON object");
  auto status_it = j.find("status");
  if (status_it == j.end() || !status_it->is_string()) {
    return Status::Protocol("result has no string field 'status'");
  }
  Result<EvalStatus> status = ParseEvalStatus(status_it->get<std::string>());
  if (!status.ok()) return Status::Protocol("result field 'status': " + status.status().message());

  EvalResult r;
  r.status = *status;
  r.message = StringOr(j, "message");
  r.backend = StringOr(j, "backend");
  r.problem = IdentityFrom(j, "problem");
  r.candidate = IdentityFrom(j, "candidate");
  r.speedup = JsonNumber(j, "speedup");
  r.ref_us = JsonNumber(j, "ref_us");
  r.cand_us = JsonNumber(j, "cand_us");
  r.cv = JsonNumber(j, "cv");
  ReadCi(j, &r.speedup_ci_lo, &r.speedup_ci_hi);
  if (auto b = j.find("vs_baseline"); b != j.end() && b->is_object()) {
    std::optional<double> speedup = JsonNumber(*b, "speedup");
    if (!speedup) return Status::Protocol("result field 'vs_baseline' has no number 'speedup'");
    BaselineComparison c;
    c.path = StringOr(*b, "path");
    c.speedup = *speedup;
    ReadCi(*b, &c.speedup_ci_lo, &c.speedup_ci_hi);
    c.baseline_us = JsonNumber(*b, "baseline_us");
    c.cand_us = JsonNumber(*b, "cand_us");
    r.vs_baseline = c;
  }
  if (auto cs = j.find("cases"); cs != j.end() && cs->is_array()) {
    for (const auto& c : *cs) {
      Result<CaseResult> parsed = CaseFromJson(c);
      if (!parsed.ok()) return parsed.status();
      r.cases.push_back(std::move(*parsed));
    }
  }
  if (auto fs = j.find("findings"); fs != j.end() && fs->is_array()) {
    for (const auto& f : *fs) {
      if (!f.is_object()) return Status::Protocol("result field 'findings' holds a non-object");
      r.findings.push_back({StringOr(f, "kind"), StringOr(f, "detail"), StringOr(f, "severity")});
    }
  }
  if (auto rl = j.find("roofline"); rl != j.end()) {
    // A malformed roofline loses only itself: the evaluation stands, the reason is kept.
    Result<std::optional<Roofline>> roofline = ParseRoofline(*rl, r.ref_us, r.cand_us);
    if (roofline.ok()) {
      r.roofline = *roofline;
    } else {
      r.roofline = Roofline{};
      r.roofline->error = roofline.status().message();
    }
  }
  if (auto st = j.find("stages"); st != j.end() && st->is_object()) r.stages = *st;
  if (auto dev = j.find("device"); dev != j.end() && dev->is_object()) r.device = *dev;
  if (auto d = JsonNumber(j, "duration_s")) r.duration_s = *d;
  if (auto d = JsonNumber(j, "device_seconds")) r.device_seconds = *d;
  if (auto d = JsonNumber(j, "gpu_seconds")) r.gpu_seconds = *d;
  r.evaluated_by = StringOr(j, "evaluated_by");
  r.stdout_tail = StringOr(j, "stdout_tail");
  r.stderr_tail = StringOr(j, "stderr_tail");
  r.feedback = StringOr(j, "feedback");
  return r;
}

EvalResult EvalResult::Failure(EvalStatus status, std::string message) {
  EvalResult r;
  r.status = status;
  r.message = std::move(message);
  return r;
}

}  // namespace ks
