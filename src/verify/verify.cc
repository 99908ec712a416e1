#include "verify/verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/json_fields.h"

namespace ks {
namespace {

// Without intervals the two figures must be this close to count as agreeing.
constexpr double kAgreeWithoutIntervals = 0.02;

}  // namespace

bool FiguresAgree(double a, std::optional<double> a_lo, std::optional<double> a_hi, double b,
                  std::optional<double> b_lo, std::optional<double> b_hi) {
  if (a_lo && a_hi && b_lo && b_hi) return *b_lo <= *a_hi && *a_lo <= *b_hi;
  return std::abs(b / a - 1) <= kAgreeWithoutIntervals;
}

VerifyOutcome VerifyFromResult(EvalResult result) {
  VerifyOutcome v;
  v.result = std::move(result);
  auto timing = v.result.stages.find("timing");
  if (timing == v.result.stages.end() || !timing->is_object()) {
    v.independent_error = "the evaluation has no timing stage";
    return v;
  }
  auto ind = timing->find("independent");
  if (ind == timing->end() || !ind->is_object()) {
    v.independent_error = "the worker did not time it independently";
    return v;
  }
  if (ind->contains("error")) {
    v.independent_error = ind->value("error", std::string("failed"));
    return v;
  }
  v.method = ind->value("method", std::string());
  v.independent = JsonNumber(*ind, "speedup");
  if (auto range = ind->find("speedup_range"); range != ind->end() && range->is_array() &&
                                               range->size() == 2 && (*range)[0].is_number() &&
                                               (*range)[1].is_number()) {
    v.independent_lo = (*range)[0].get<double>();
    v.independent_hi = (*range)[1].get<double>();
  }
  if (!v.independent) {
    v.independent_error = "the independent method gave no speedup";
    return v;
  }
  if (!v.result.speedup) return v;
  double ours = *v.result.speedup;
  v.difference = *v.independent / ours - 1;
  v.agree = FiguresAgree(ours, v.result.speedup_ci_lo, v.result.speedup_ci_hi, *v.independent,
                         v.independent_lo, v.independent_hi);
  return v;
}

VerifyOutcome Verify(Runner* runner, EvalRequest request) {
  request.timing = true;
  request.independent_timing = true;
  return VerifyFromResult(runner->Evaluate(std::move(request)));
}

nlohmann::json VerifyOutcome::ToJson() const {
  auto opt = [](const std::optional<double>& x) {
    return x ? nlohmann::json(*x) : nlohmann::json(nullptr);
  };
  nlohmann::json j = {
      {"status", EvalStatusName(result.status)},
      {"speedup", opt(result.speedup)},
      {"speedup_ci95", result.speedup_ci_lo && result.speedup_ci_hi
                           ? nlohmann::json::array({*result.speedup_ci_lo, *result.speedup_ci_hi})
                           : nlohmann::json(nullptr)},
      {"independent_speedup", opt(independent)},
      {"independent_range", independent_lo && independent_hi
                                ? nlohmann::json::array({*independent_lo, *independent_hi})
                                : nlohmann::json(nullptr)},
      {"independent_method", method},
      {"agree", agree},
      {"difference", difference},
  };
  if (!independent_error.empty()) j["independent_error"] = independent_error;
  if (result.status != EvalStatus::kOk) j["message"] = result.message;
  return j;
}

nlohmann::json VerifyRecord(const VerifyOutcome& v, const std::string& candidate,
                            std::optional<double> recorded) {
  nlohmann::json j = v.ToJson();
  j["candidate"] = candidate;
  j["recorded_speedup"] = recorded ? nlohmann::json(*recorded) : nlohmann::json();
  return j;
}

std::string FormatVerify(const VerifyOutcome& v) {
  std::string out;
  if (v.result.status != EvalStatus::kOk) {
    return fmt::format("verify       {}: {}\n", EvalStatusName(v.result.status), v.result.message);
  }
  if (v.result.speedup) {
    out += fmt::format("evaluator    {:.3f}x", *v.result.speedup);
    if (v.result.speedup_ci_lo && v.result.speedup_ci_hi) {
      out +=
          fmt::format(" (95% CI {:.3f}-{:.3f})", *v.result.speedup_ci_lo, *v.result.speedup_ci_hi);
    }
    out += "\n";
  }
  if (!v.independent) {
    return out + fmt::format("independent  none: {}\n", v.independent_error);
  }
  out += fmt::format("independent  {:.3f}x", *v.independent);
  if (v.independent_lo && v.independent_hi) {
    out += fmt::format(" (repeats {:.3f}-{:.3f})", *v.independent_lo, *v.independent_hi);
  }
  out += fmt::format(" [{}]\n", v.method);
  out += v.agree ? fmt::format("verdict      agree ({:+.1f} %)\n", 100 * v.difference)
                 : fmt::format(
                       "verdict      DIFFER: the independent figure is {:+.1f} % off the "
                       "evaluator's, outside both intervals\n",
                       100 * v.difference);
  return out;
}

}  // namespace ks
