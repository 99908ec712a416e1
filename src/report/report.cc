#include "report/report.h"

#include <fmt/format.h>

#include <set>

#include "report/diff.h"
#include "report/html.h"
#include "report/roofline_svg.h"
#include "verify/verify_cells.h"

namespace ks {
namespace {

using nlohmann::json;

constexpr const char* kCss = R"(body{font-family:sans-serif;margin:24px;color:#222;max-width:1150px}
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}
table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #ccc;padding:3px 8px;
text-align:right;font-size:0.9em}th{background:#f0f0f0}td:first-child{text-align:left}
.charts{display:flex;flex-wrap:wrap;gap:12px}svg.chart{border:1px solid #eee;background:#fff}
svg .ct{font-size:13px;font-weight:bold}svg .tk{font-size:10px;fill:#555}
svg .al{font-size:11px}svg .lg{font-size:10px}svg .nd{font-size:12px;fill:#999}
pre.diff{background:#fafafa;border:1px solid #ddd;padding:6px;font-size:12px;overflow-x:auto}
pre.diff span{display:block;white-space:pre}.add{background:#e6ffec}.del{background:#ffebe9}
.muted{color:#777})";

std::optional<double> Opt(const json& j, const std::string& key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}

std::string Count(const json& j, const std::string& key) {
  return j.is_object() && j.contains(key) && j[key].is_number_integer()
             ? std::to_string(j[key].get<int64_t>())
             : "-";
}

std::vector<double> Series(const json& g) {
  std::vector<double> out;
  if (g.is_object() && g.contains("series") && g["series"].is_array()) {
    for (const json& v : g["series"]) out.push_back(v.is_number() ? v.get<double>() : 0.0);
  }
  return out;
}

std::string MetricTable(const ReportData& d, const std::string& suffix) {
  std::vector<std::string> headers(std::begin(kMetricHeaders), std::end(kMetricHeaders));
  std::vector<std::vector<std::string>> rows;
  for (const auto& [name, g] : d.groups) {
    std::vector<std::string> r = {name, Count(g, "problems"), Count(g, "skipped"),
                                  Count(g, "correct")};
    r.push_back(FormatPercent(Opt(g, "corr" + suffix)));
    for (const char* f : {"fast_1.0", "fast_1.2", "fast_1.5", "fast_2.0"}) {
      r.push_back(FormatPercent(Opt(g, f + suffix)));
    }
    r.push_back(FormatNumber(Opt(g, "avg_amsr" + suffix)));
    r.push_back(FormatNumber(Opt(g, "geomean_speedup" + suffix)));
    rows.push_back(std::move(r));
  }
  std::string out = HtmlTable(headers, rows);
  if (d.groups.empty()) out += "<p class=\"muted\">No levels.</p>\n";
  return out;
}

std::string StatusCounts(const std::map<std::string, int64_t>& counts) {
  std::string out;
  for (const auto& [k, v] : counts) out += (out.empty() ? "" : ", ") + k + " " + std::to_string(v);
  return out.empty() ? "-" : out;
}

std::string Curves(const ReportData& d) {
  std::string out = "<h2>Best speedup versus round</h2>\n<div class=\"charts\">\n";
  std::vector<ChartSeries> suite;
  for (const auto& [name, g] : d.groups) suite.push_back({name, Series(g)});
  ChartOptions o;
  o.title = d.is_bench ? "suite (mean over attempted problems)" : "run";
  out += SvgLineChart(suite, o);
  for (const ProblemReport& p : d.problems) {
    if (p.status == "skipped") continue;
    ChartOptions po;
    po.title = p.name;
    po.width = 360;
    po.height = 220;
    out += SvgLineChart({{p.name, p.series}}, po);
  }
  return out + "</div>\n";
}

std::string ProblemTable(const ReportData& d) {
  std::vector<std::vector<std::string>> rows;
  bool flagged = false;
  for (const ProblemReport& p : d.problems) {
    VerifyCells v = p.verify ? DescribeVerify(*p.verify) : VerifyCells{"-", "-", "", "-", false};
    flagged = flagged || v.flagged;
    rows.push_back({p.name, p.status + (p.reason.empty() ? "" : ": " + p.reason),
                    FormatNumber(p.seed_speedup), FormatNumber(p.best_speedup), v.remeasured,
                    v.independent + (v.method.empty() ? "" : " (" + v.method + ")"),
                    v.flagged ? "\u2717 " + v.verdict : v.verdict,
                    p.rounds_to_best >= 0 ? std::to_string(p.rounds_to_best) : "-",
                    StatusCounts(p.candidates_by_status)});
  }
  std::string note =
      "<p class=\"muted\">Verified speedup: the best kernel evaluated again in a fresh worker "
      "at the end (95% CI), beside an independent steady-state method (range of its repeats). "
      "The metrics use the best speedup the run recorded." +
      std::string(flagged ? " \u2717 marks a re-measurement that does not confirm it." : "") +
      "</p>\n";
  return "<h2>Problems</h2>\n" + note +
         HtmlTable({"problem", "status", "seed speedup", "best speedup", "verified speedup",
                    "independent", "verify", "rounds to best", "candidates by status"},
                   rows);
}

// The best kernel re-measured in a fresh worker (verify.json): both figures and the verdict.
std::string VerifyLine(const nlohmann::json& v) {
  auto num = [&](const char* key) {
    return v.contains(key) && v[key].is_number() ? std::optional<double>(v[key].get<double>())
                                                 : std::nullopt;
  };
  if (v.value("status", std::string()) != "ok") {
    return fmt::format("<p>Re-measured in a fresh worker: {} ({})</p>\n",
                       HtmlEscape(v.value("status", std::string("?"))),
                       HtmlEscape(v.value("message", std::string())));
  }
  std::string ci;
  if (v.contains("speedup_ci95") && v["speedup_ci95"].is_array() && v["speedup_ci95"].size() == 2) {
    ci = fmt::format(" [{}, {}]", FormatNumber(v["speedup_ci95"][0].get<double>()),
                     FormatNumber(v["speedup_ci95"][1].get<double>()));
  }
  std::string independent =
      num("independent_speedup")
          ? fmt::format("{}x ({})", FormatNumber(num("independent_speedup")),
                        HtmlEscape(v.value("independent_method", std::string())))
          : "none (" + HtmlEscape(v.value("independent_error", std::string())) + ")";
  return fmt::format("<p>Re-measured in a fresh worker: evaluator {}x{}, independent {}: {}</p>\n",
                     FormatNumber(num("speedup")), ci, independent,
                     v.value("agree", false) ? "agree" : "<b>differ</b>");
}

// The best kernel's per-shape table of a multi-shape problem; empty for a plain problem.
std::string CasesTable(const std::vector<CaseResult>& cases) {
  if (cases.empty()) return "";
  std::vector<std::vector<std::string>> rows;
  for (const CaseResult& c : cases) {
    std::string ci = c.speedup_ci_lo && c.speedup_ci_hi
                         ? FormatNumber(c.speedup_ci_lo) + "-" + FormatNumber(c.speedup_ci_hi)
                         : "-";
    rows.push_back({c.name, fmt::format("{:g}", c.weight),
                    c.speedup ? FormatNumber(c.speedup) + "x" : c.status, ci,
                    FormatNumber(c.ref_us, 2), FormatNumber(c.cand_us, 2)});
  }
  return HtmlTable({"shape", "weight", "speedup", "95% CI", "reference us", "candidate us"}, rows) +
         "<p class=\"muted\">The speedup above is the weighted geometric mean of these.</p>\n";
}

std::string Kernels(const ReportData& d) {
  std::string out = "<h2>Best kernels</h2>\n";
  int shown = 0;
  for (const ProblemReport& p : d.problems) {
    if (p.best_code.empty()) continue;
    ++shown;
    out += fmt::format("<h3>{}</h3>\n<p>{} ({}x) against {}</p>\n", HtmlEscape(p.name),
                       HtmlEscape(p.best_label), HtmlEscape(FormatNumber(p.best_speedup)),
                       HtmlEscape(p.base_label.empty() ? "nothing" : p.base_label));
    if (p.verify && p.verify->value("state", std::string("verified")) == "verified") {
      out += VerifyLine(*p.verify);
    }
    out += CasesTable(p.best_cases);
    out += DiffHtml(LineDiff(p.base_code, p.best_code));
    if (!p.problem_source.empty()) {
      out += fmt::format(
          "<details><summary>The problem (sha256 {}, as stored in run.db)</summary>\n"
          "<pre>{}</pre></details>\n",
          HtmlEscape(p.problem_sha256.substr(0, 12)), HtmlEscape(p.problem_source));
    }
  }
  if (shown == 0) out += "<p class=\"muted\">No best kernel.</p>\n";
  return out;
}

std::string Llm(const ReportData& d) {
  std::vector<std::vector<std::string>> rows;
  LlmUsage total;
  auto row = [&](const std::string& name, const LlmUsage& u) {
    std::optional<double> cost = u.CostUsd(d.prices);
    return std::vector<std::string>{
        name,
        std::to_string(u.calls),
        std::to_string(u.errors),
        std::to_string(u.prompt_tokens),
        std::to_string(u.completion_tokens),
        u.estimated_calls > 0
            ? fmt::format("{} calls: {} + {}", u.estimated_calls, u.estimated_prompt_tokens,
                          u.estimated_completion_tokens)
            : "-",
        fmt::format("{:.1f}", u.latency_s_total),
        u.calls > 0 ? fmt::format("{:.2f}", u.latency_s_total / static_cast<double>(u.calls)) : "-",
        cost ? fmt::format("{:.4f}", *cost) : "-"};
  };
  for (const ProblemReport& p : d.problems) {
    rows.push_back(row(p.name, p.llm));
    total.Add(p.llm);
  }
  rows.push_back(row("total", total));
  std::string note =
      "<p class=\"muted\">Tokens are the server's counts (its <code>usage</code>); where it "
      "gave none (files and command proposers, servers without <code>usage</code>) they are "
      "estimated from the text at 4 bytes a token, shown apart as estimated. Cost: " +
      (d.prices.given() ? fmt::format("USD at {} per million prompt and {} per million "
                                      "completion tokens.",
                                      d.prices.in_per_mtok, d.prices.out_per_mtok)
                        : std::string("no prices given (--price-in, --price-out).")) +
      "</p>\n";
  return "<h2>LLM usage</h2>\n" + note +
         HtmlTable({"problem", "calls", "errors", "prompt tokens", "completion tokens",
                    "of them estimated", "latency total (s)", "latency mean (s)", "cost (USD)"},
                   rows);
}

std::string JsonCell(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::string Device(const ReportData& d) {
  std::string out = "<h2>Device and versions</h2>\n";
  std::vector<std::vector<std::string>> rows = {{"kernelsmith", d.kernelsmith_version}};
  for (const auto& [k, v] : d.protocol.items()) rows.push_back({"protocol." + k, JsonCell(v)});
  for (const auto& [k, v] : d.bench_device.items()) rows.push_back({"worker." + k, JsonCell(v)});
  out += HtmlTable({"key", "value"}, rows);
  std::set<std::string> keys;
  for (const json& dev : d.devices) {
    for (const auto& [k, v] : dev.items()) keys.insert(k);
  }
  std::vector<std::string> headers = {"device (from evaluations)"};
  headers.insert(headers.end(), keys.begin(), keys.end());
  std::vector<std::vector<std::string>> dev_rows;
  for (size_t i = 0; i < d.devices.size(); ++i) {
    std::vector<std::string> r = {std::to_string(i + 1)};
    for (const std::string& k : keys) {
      r.push_back(d.devices[i].contains(k) ? JsonCell(d.devices[i][k]) : "");
    }
    dev_rows.push_back(std::move(r));
  }
  out += HtmlTable(headers, dev_rows);
  return out;
}

// One roofline plot per problem with a measured floor: reference, seed and best, and the
// lazy-optimization flag of the best kernel.
std::string Rooflines(const ReportData& d) {
  std::string out;
  for (const ProblemReport& p : d.problems) {
    if (!p.roofline) continue;
    std::vector<RooflineMark> marks = {{"reference", p.ref_us.value_or(0)},
                                       {"seed", p.seed_us.value_or(0)},
                                       {"best", p.best_us.value_or(0)}};
    out += "<figure>" + SvgRoofline(*p.roofline, marks, p.name) + "<figcaption>" +
           HtmlEscape(RooflineSummary(*p.roofline, marks));
    if (p.best_lazy) {
      out +=
          "<br><b>lazy optimization</b> (information, not a reject): the best kernel's own "
          "kernels cover a trivial share of the work; torch ops do the rest";
    }
    out += "</figcaption></figure>\n";
  }
  if (out.empty()) return "";
  return "<h2>Roofline (measured peaks)</h2>\n<div class=\"charts\">\n" + out + "</div>\n";
}

}  // namespace

std::string BuildReportHtml(const ReportData& d) {
  std::string title = std::string("kernelsmith ") + (d.is_bench ? "bench" : "run") + " report";
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<title>" + HtmlEscape(title + ": " + d.run_dir) + "</title>\n";
  out += std::string("<style>") + kCss + "</style>\n</head>\n<body>\n";
  out += "<h1>" + HtmlEscape(title) + "</h1>\n<p>" + HtmlEscape(d.run_dir) + "</p>\n";
  for (const std::string& w : d.warnings) {
    out += "<p class=\"muted\">warning: " + HtmlEscape(w) + "</p>\n";
  }
  out += Curves(d);
  out += "<h2>Metrics after all rounds</h2>\n" + MetricTable(d, "");
  out += "<h2>Metrics after round 1</h2>\n" + MetricTable(d, "_round1");
  out += ProblemTable(d);
  out += Rooflines(d);
  out += Kernels(d);
  out += Llm(d);
  out += Device(d);
  return out + "</body>\n</html>\n";
}

}  // namespace ks
