#include "verify/verify_cells.h"

#include <fmt/format.h>

#include <optional>
#include <vector>

#include "core/json_fields.h"

namespace ks {
namespace {

// "1.093x [1.071, 1.115]", "1.093x" without an interval, "-" without a figure.
std::string Figure(const nlohmann::json& j, const char* key, const char* interval) {
  std::optional<double> x = JsonNumber(j, key);
  if (!x) return "-";
  std::string out = fmt::format("{:.3f}x", *x);
  auto it = j.find(interval);
  if (it != j.end() && it->is_array() && it->size() == 2 && (*it)[0].is_number() &&
      (*it)[1].is_number()) {
    out += fmt::format(" [{:.3f}, {:.3f}]", (*it)[0].get<double>(), (*it)[1].get<double>());
  }
  return out;
}

}  // namespace

VerifyCells DescribeVerify(const nlohmann::json& verify) {
  VerifyCells c{"-", "-", "", "", false};
  if (!verify.is_object()) {
    c.verdict = "not verified yet";
    return c;
  }
  // verify.json itself has no state: it is written only for a re-measurement
  const std::string state = verify.value("state", std::string("verified"));
  const std::string reason = verify.value("reason", std::string());
  if (state == "not_verified") {
    c.verdict = "not verified: " + reason;
    return c;
  }
  if (state != "verified") {
    c.verdict = "verify failed: " + reason;
    c.flagged = true;
    return c;
  }
  const std::string status = verify.value("status", std::string());
  if (status != "ok") {
    c.verdict = fmt::format("re-evaluated {}: {}", status, verify.value("message", std::string()));
    c.flagged = true;
    return c;
  }
  c.remeasured = Figure(verify, "speedup", "speedup_ci95");
  c.independent = Figure(verify, "independent_speedup", "independent_range");
  c.method = verify.value("independent_method", std::string());
  std::vector<std::string> problems;
  if (!JsonNumber(verify, "independent_speedup")) {
    problems.push_back("no independent figure: " +
                       verify.value("independent_error", std::string("none")));
  } else if (!verify.value("agree", false)) {
    problems.push_back(fmt::format("DIFFER: the independent figure is {:+.1f} % off",
                                   100 * verify.value("difference", 0.0)));
  }
  auto within = verify.find("recorded_within");
  if (within != verify.end() && within->is_boolean() && !within->get<bool>()) {
    std::optional<double> recorded = JsonNumber(verify, "recorded_speedup");
    problems.push_back(recorded ? fmt::format("NOT REPRODUCED: the run's {:.3f}x is outside the "
                                              "re-measured interval",
                                              *recorded)
                                : std::string("NOT REPRODUCED: the run's figure"));
  }
  if (problems.empty()) {
    c.verdict = fmt::format("agree ({:+.1f} %)", 100 * verify.value("difference", 0.0));
    return c;
  }
  c.flagged = true;
  for (const std::string& p : problems) c.verdict += (c.verdict.empty() ? "" : "; ") + p;
  return c;
}

}  // namespace ks
