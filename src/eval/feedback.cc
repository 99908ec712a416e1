#include "eval/feedback.h"

#include <fmt/format.h>

namespace ks {
namespace {

constexpr size_t kLogLines = 30;

std::string StageError(const EvalResult& r, const char* stage) {
  auto it = r.stages.find(stage);
  if (it == r.stages.end() || !it->is_object()) return "";
  std::string out;
  for (const char* key : {"error", "log_tail"}) {
    auto f = it->find(key);
    if (f != it->end() && f->is_string() && !f->get<std::string>().empty()) {
      out += LastLines(f->get<std::string>(), kLogLines);
      if (out.back() != '\n') out += '\n';
    }
  }
  return out;
}

double NumberAt(const nlohmann::json& obj, const char* key, double fallback) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string CorrectnessLine(const EvalResult& r) {
  auto it = r.stages.find("correctness");
  if (it == r.stages.end() || !it->is_object()) return "";
  const nlohmann::json& c = *it;
  std::string line = fmt::format("Correctness: {}/{} trials passed",
                                 static_cast<int>(NumberAt(c, "passed", 0)),
                                 static_cast<int>(NumberAt(c, "trials", 0)));
  if (c.contains("max_abs_err") && c["max_abs_err"].is_number()) {
    line += fmt::format("; max abs error {:.3g}, max rel error {:.3g} (atol={:g}, rtol={:g})",
                        NumberAt(c, "max_abs_err", 0), NumberAt(c, "max_rel_err", 0),
                        NumberAt(c, "atol", 0), NumberAt(c, "rtol", 0));
  }
  if (auto m = c.find("first_mismatch"); m != c.end() && m->is_object()) {
    line += fmt::format("; first mismatch in trial {} at index {}: expected {}, got {}",
                        m->value("trial", 0), m->value("index", nlohmann::json::array()).dump(),
                        m->value("expected", nlohmann::json()).dump(),
                        m->value("actual", nlohmann::json()).dump());
  }
  return line + ".\n";
}

// The per-case table of a multi-shape problem, one line: "2.10x at batch 256, 0.80x at
// batch 1" when every case was timed, else each case's status.
std::string CasesLine(const EvalResult& r) {
  if (r.cases.empty()) return "";
  bool timed = true;
  for (const CaseResult& c : r.cases) timed = timed && c.speedup.has_value();
  std::string line;
  for (const CaseResult& c : r.cases) {
    if (!line.empty()) line += ", ";
    if (timed) {
      line += fmt::format("{:.2f}x at {} (weight {:g})", *c.speedup, c.name, c.weight);
    } else if (c.status == "ok") {
      line += c.name + " correct";
    } else if (c.status == "not_run") {
      line += c.name + " not evaluated";
    } else {
      line += c.name + " " + c.status;
    }
  }
  if (timed) {
    return fmt::format("Per shape: {}; the speedup is their weighted geometric mean.\n", line);
  }
  return fmt::format("Per shape ({} cases, each must be correct): {}.\n", r.cases.size(), line);
}

const char* StatusHeadline(EvalStatus s) {
  switch (s) {
    case EvalStatus::kOk: return "The candidate is correct.";
    case EvalStatus::kCompileError: return "The candidate failed to compile or import.";
    case EvalStatus::kRuntimeError: return "The candidate raised an error at run time.";
    case EvalStatus::kIncorrect: return "The candidate's output is wrong.";
    case EvalStatus::kHacked:
      return "The candidate was rejected by the audit: it must compute the result with its "
             "own kernels.";
    case EvalStatus::kTimeout: return "The evaluation timed out and the worker was killed.";
    case EvalStatus::kCrash: return "The candidate crashed the evaluation worker.";
    case EvalStatus::kInfraError: return "The evaluation could not be carried out.";
  }
  return "";
}

}  // namespace

std::string LastLines(const std::string& text, size_t max_lines) {
  size_t end = text.size();
  while (end > 0 && text[end - 1] == '\n') --end;
  size_t pos = end;
  for (size_t n = 0; pos > 0; --pos) {
    if (text[pos - 1] == '\n' && ++n == max_lines) break;
  }
  return text.substr(pos, end - pos);
}

std::string BuildFeedback(const EvalResult& r) {
  std::string out = StatusHeadline(r.status);
  out += '\n';
  if (!r.message.empty()) out += "Reason: " + r.message + "\n";
  switch (r.status) {
    case EvalStatus::kCompileError:
      out += StageError(r, "load");
      break;
    case EvalStatus::kRuntimeError:
      out += StageError(r, "load") + StageError(r, "correctness") + StageError(r, "timing");
      break;
    case EvalStatus::kTimeout:
    case EvalStatus::kCrash:
      if (!r.stderr_tail.empty()) {
        out += "Last lines of stderr:\n" + LastLines(r.stderr_tail, kLogLines) + "\n";
      }
      break;
    default:
      break;
  }
  out += CasesLine(r);
  out += CorrectnessLine(r);
  for (const Finding& f : r.findings) {
    out += fmt::format("Audit [{}] {}: {}\n", f.severity, f.kind, f.detail);
  }
  if (r.speedup) {
    out += fmt::format("Speedup: {:.3f}x over the PyTorch reference", *r.speedup);
    if (r.ref_us && r.cand_us) {
      out += fmt::format(" (reference {:.2f} us, candidate {:.2f} us per call", *r.ref_us,
                         *r.cand_us);
      if (r.speedup_ci_lo && r.speedup_ci_hi) {
        out += fmt::format("; 95% CI {:.3f}-{:.3f}", *r.speedup_ci_lo, *r.speedup_ci_hi);
      }
      out += ")";
    }
    out += ".\n";
    if (r.roofline) out += RooflineFeedback(*r.roofline);
    if (*r.speedup < 1.0) {
      out += "The candidate is slower than the reference: look for uncoalesced memory access, "
             "too small or too large blocks, or extra passes over memory.\n";
    }
  }
  return out;
}

}  // namespace ks
