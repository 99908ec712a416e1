#include "cli/eval_report.h"

#include <fmt/format.h>

#include <map>
#include <utility>

namespace ks {
namespace {

std::string Num(const nlohmann::json& obj, const char* key, const char* spec = "{:.3g}") {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return "-";
  return fmt::format(fmt::runtime(spec), it->get<double>());
}

std::string Indent(const std::string& text) {
  std::string out = "  ";
  for (size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '\n' && i + 1 < text.size()) out += "  ";
  }
  return out;
}

std::string Rates(double bw, const std::map<std::string, double>& flops) {
  std::string out = FormatRate(bw, "B/s");
  for (const auto& [cls, rate] : flops)
    out += fmt::format(", {} {}", cls, FormatRate(rate, "FLOP/s"));
  return out;
}

// The roofline lines: floor and bound, both sides against it, the peaks it rests on.
std::string RooflineLines(const Roofline& r) {
  std::string out;
  if (r.has_floor()) {
    std::string bound = r.bound + (r.bound == "compute" ? ", " + r.compute_class : "");
    out +=
        fmt::format("roofline   floor {:.2f} us ({}): {} FLOPs, {} at least\n", r.floor_us, bound,
                    FormatRate(r.work->total_flops(), ""), FormatRate(r.work->bytes, "B"));
    for (const auto& [name, point] :
         {std::pair{"reference", r.ref}, std::pair{"candidate", r.cand}}) {
      if (!point) continue;
      out += fmt::format(
          "           {} at {:.1f}% of the floor ({:.1f}% of peak FLOP/s, {:.1f}% of "
          "peak bandwidth)\n",
          name, point->pct_of_floor, point->flops_pct, point->bw_pct);
    }
    const DevicePeaks& p = *r.peaks;
    out += fmt::format("peaks      {} measured{} on {}, launch {:.2f} us\n",
                       Rates(p.bw_bytes_per_s, p.flops_per_s), p.cached ? " (cached)" : "",
                       p.device, p.launch_us);
    if (p.datasheet) {
      out += fmt::format("           datasheet {} (comparison only): {}\n", p.datasheet->name,
                         Rates(p.datasheet->bw_bytes_per_s, p.datasheet->flops_per_s));
    }
  }
  if (r.lazy) {
    const LazyCheck& l = *r.lazy;
    auto share = [](const std::optional<double>& v) {
      return v ? fmt::format("{:.0f}%", 100 * *v) : std::string("not measured");
    };
    out += fmt::format("custom     kernels do {} of the FLOPs, {} of the bytes; {}{}\n",
                       share(l.custom_flops_share), share(l.custom_bytes_share),
                       l.custom_device_share
                           ? share(l.custom_device_share) + " of the device time"
                           : std::string("device-time share not measured on this backend"),
                       l.lazy ? "; lazy optimization (information, not a reject)" : "");
  }
  if (!r.error.empty()) out += "roofline   not measured: " + r.error + "\n";
  return out;
}

}  // namespace

std::string FormatEvalReport(const EvalResult& r) {
  std::string out;
  std::string device = r.device.value("name", "");
  out += fmt::format("candidate  {}\nproblem    {}\nbackend    {}{}\n", r.candidate.path,
                     r.problem.path, r.backend, device.empty() ? "" : " on " + device);
  out += fmt::format("status     {}{}\n", EvalStatusName(r.status),
                     r.message.empty() ? "" : "  (" + r.message + ")");
  if (auto c = r.stages.find("correctness"); c != r.stages.end() && c->is_object()) {
    out +=
        fmt::format("correct    {}/{} trials, max abs err {}, max rel err {} (atol={} rtol={})\n",
                    c->value("passed", 0), c->value("trials", 0), Num(*c, "max_abs_err"),
                    Num(*c, "max_rel_err"), Num(*c, "atol", "{:g}"), Num(*c, "rtol", "{:g}"));
  }
  if (r.speedup) {
    out += fmt::format("speedup    {:.3f}x", *r.speedup);
    if (r.speedup_ci_lo && r.speedup_ci_hi) {
      out += fmt::format("  (95% CI {:.3f}-{:.3f})", *r.speedup_ci_lo, *r.speedup_ci_hi);
    }
    out += "\n";
  }
  if (!r.cases.empty()) {
    out += fmt::format("cases      {} input cases{}\n", r.cases.size(),
                       r.speedup ? ", speedup = their weighted geometric mean" : "");
    for (const CaseResult& c : r.cases) {
      std::string figures = c.speedup ? fmt::format("{:.3f}x", *c.speedup) : c.status;
      if (c.speedup && c.speedup_ci_lo && c.speedup_ci_hi) {
        figures += fmt::format("  (95% CI {:.3f}-{:.3f})", *c.speedup_ci_lo, *c.speedup_ci_hi);
      }
      if (c.ref_us && c.cand_us) {
        figures += fmt::format("  {:.2f} -> {:.2f} us", *c.ref_us, *c.cand_us);
      }
      out += fmt::format("  {:<24} weight {:<5g} {}\n", c.name, c.weight, figures);
    }
  }
  if (r.vs_baseline) {
    const BaselineComparison& b = *r.vs_baseline;
    out += fmt::format("vs {}  {:.3f}x", b.path, b.speedup);
    if (b.speedup_ci_lo && b.speedup_ci_hi) {
      out += fmt::format("  (95% CI {:.3f}-{:.3f})", *b.speedup_ci_lo, *b.speedup_ci_hi);
    }
    out += "  (timed against it instead of the reference)\n";
  }
  const char* timed_against = r.vs_baseline ? "baseline " : "reference";
  if (auto t = r.stages.find("timing"); t != r.stages.end() && t->is_object()) {
    auto pct = [&](const char* key) {
      auto it = t->find(key);
      return it != t->end() && it->is_number() ? fmt::format("{:.2f}%", 100 * it->get<double>())
                                               : std::string("-");
    };
    out += fmt::format("{}  {} us/call (cv {}), eager {} us\n", timed_against,
                       Num(*t, "ref_us", "{:.2f}"), pct("ref_cv"), Num(*t, "ref_eager_us", "{:.2f}"));
    out += fmt::format("candidate  {} us/call (cv {})\n", Num(*t, "cand_us", "{:.2f}"),
                       pct("cand_cv"));
    if (t->contains("combined")) {
      out += fmt::format("timing     {} per case; times above: weighted mean over the cases\n",
                         t->value("method", std::string("?")));
    } else {
      out +=
          fmt::format("timing     {}, {} samples x {} calls, L2 flush {}\n",
                      t->value("method", std::string("?")), t->value("samples", 0),
                      t->value("calls_per_sample", 0), t->value("l2_flush", false) ? "on" : "off");
    }
    // Both figures when the timing had steady-state blocks: which one is reported, and why.
    auto steady = t->find("steady");
    auto checked = t->find("speedup_checked");
    if (steady != t->end() && steady->is_object() && steady->contains("speedup") &&
        (*steady)["speedup"].is_number() && checked != t->end() && checked->is_number()) {
      bool is_steady = t->value("reported", std::string()) == "steady";
      out += fmt::format("figures    steady state {:.3f}x, checked blocks {:.3f}x: {} reported{}\n",
                         (*steady)["speedup"].get<double>(), checked->get<double>(),
                         is_steady ? "steady state" : "checked blocks",
                         is_steady ? " (lower: what a program running it back to back gets)"
                                   : "");
    }
  }
  if (r.roofline) out += RooflineLines(*r.roofline);
  if (r.findings.empty()) {
    out += "findings   none\n";
  } else {
    out += "findings\n";
    for (const Finding& f : r.findings) {
      out += fmt::format("  [{}] {}: {}\n", f.severity, f.kind, f.detail);
    }
  }
  out += fmt::format("duration   {:.2f} s\n", r.duration_s);
  if (r.status != EvalStatus::kOk && !r.feedback.empty()) {
    out += "feedback\n" + Indent(r.feedback) + "\n";
  }
  return out;
}

}  // namespace ks
