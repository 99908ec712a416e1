#include "report/roofline_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/html.h"

namespace ks {
namespace {

std::string Pct(double v) {
  return v >= 10 ? fmt::format("{:.0f}%", v) : fmt::format("{:.2g}%", v);
}

constexpr int kWidth = 360, kHeight = 240;
constexpr double kLeft = 62, kRight = 26, kTop = 30, kBottom = 42;
constexpr const char* kColors[] = {"#888", "#d62728", "#1f77b4"};

std::string Open(const std::string& title) {
  std::string out = fmt::format(
      "<svg class=\"chart roofline\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "role=\"img\">\n<title>{2}</title>\n"
      "<text x=\"{3}\" y=\"18\" text-anchor=\"middle\" class=\"ct\">{2}</text>\n",
      kWidth, kHeight, HtmlEscape(title), kWidth / 2);
  return out;
}

std::string AxisLabels(const char* x, const char* y) {
  double h = kHeight - kTop - kBottom;
  return fmt::format(
      "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" class=\"al\">{}</text>\n"
      "<text x=\"12\" y=\"{:.1f}\" text-anchor=\"middle\" class=\"al\" "
      "transform=\"rotate(-90 12 {:.1f})\">{}</text>\n",
      kLeft + (kWidth - kLeft - kRight) / 2, kHeight - 4, x, kTop + h / 2, kTop + h / 2, y);
}

std::string Legend(const std::vector<RooflineMark>& marks, double x, double y) {
  std::string out;
  for (size_t i = 0; i < marks.size(); ++i) {
    out += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"lg\">{}</text>\n",
        x, y + 14.0 * i, kColors[i % 3], x + 8, y + 14.0 * i + 4, HtmlEscape(marks[i].label));
  }
  return out;
}

// Bars of achieved bandwidth (minimum bytes / time) under the measured bandwidth.
std::string BandwidthBars(const Roofline& r, const std::vector<RooflineMark>& marks) {
  const double w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  const double bw = r.peaks->bw_bytes_per_s;
  std::string out = fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#333\" stroke-dasharray=\"4\"/>"
      "<text x=\"{2}\" y=\"{3}\" text-anchor=\"end\" class=\"tk\">measured {4}</text>\n",
      kLeft, kTop + 12, kLeft + w, kTop + 8, FormatRate(bw, "B/s"));
  double bar = w / (2.0 * std::max<size_t>(marks.size(), 1));
  for (size_t i = 0; i < marks.size(); ++i) {
    double achieved = r.work->bytes / (marks[i].us * 1e-6);
    double bh = (h - 12) * std::min(achieved / bw, 1.0);
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" class=\"tk\">{} {}</text>\n",
        kLeft + bar * (2 * i + 0.5), kTop + h - bh, bar, bh, kColors[i % 3],
        kLeft + bar * (2 * i + 1), kTop + h + 14, HtmlEscape(marks[i].label),
        Pct(100 * achieved / bw));
  }
  return out + AxisLabels("no FLOPs: data movement only", "bandwidth");
}

}  // namespace

std::string SvgRoofline(const Roofline& r, const std::vector<RooflineMark>& marks,
                        const std::string& title) {
  std::string out = Open(title);
  std::vector<RooflineMark> timed;
  for (const RooflineMark& m : marks) {
    if (m.us > 0) timed.push_back(m);
  }
  if (!r.has_floor() || timed.empty()) {
    return out + fmt::format(
                     "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" class=\"nd\">no "
                     "roofline</text>\n</svg>\n",
                     kWidth / 2, kHeight / 2);
  }
  const double flops = r.work->total_flops();
  if (flops <= 0 || r.work->bytes <= 0) return out + BandwidthBars(r, timed) + "</svg>\n";
  const double bw = r.peaks->bw_bytes_per_s;
  double peak = flops / (r.compute_us * 1e-6);  // the time-weighted peak of the problem's mix
  const double ai = flops / r.work->bytes;
  const double ridge = peak / bw;
  // Axes in decades around the problem's intensity and the ridge point.
  double x_lo = std::floor(std::log10(std::min(ai, ridge))) - 1;
  double x_hi = std::ceil(std::log10(std::max(ai, ridge))) + 1;
  double y_hi = std::ceil(std::log10(peak) + 0.1);
  double slowest = flops / (timed.front().us * 1e-6);
  for (const RooflineMark& m : timed) slowest = std::min(slowest, flops / (m.us * 1e-6));
  double y_lo = std::min(std::floor(std::log10(slowest)) - 1, std::log10(bw) + x_lo);
  y_lo = std::max(y_lo, y_hi - 8);
  const double w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  auto px = [&](double x) { return kLeft + w * (std::log10(x) - x_lo) / (x_hi - x_lo); };
  auto py = [&](double y) {
    double v = std::clamp(std::log10(y), y_lo, y_hi);
    return kTop + h - h * (v - y_lo) / (y_hi - y_lo);
  };
  out += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#333\"/>\n"
      "<line x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\" stroke=\"#333\"/>\n",
      kLeft, kTop, kTop + h, kLeft + w);
  for (double e = std::ceil(y_lo); e <= y_hi; e += 1) {
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" class=\"tk\">{}</text>\n",
                       kLeft - 4, py(std::pow(10, e)) + 3, FormatRate(std::pow(10, e), ""));
  }
  for (double e = x_lo; e <= x_hi; e += 1) {
    out +=
        fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" class=\"tk\">{:g}</text>\n",
                    px(std::pow(10, e)), kTop + h + 13, std::pow(10, e));
  }
  // The roof: bandwidth slope up to the ridge, then flat at the peak.
  double x0 = std::pow(10, x_lo), x1 = std::pow(10, x_hi);
  out += fmt::format(
      "<polyline fill=\"none\" stroke=\"#333\" stroke-width=\"2\" "
      "points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\"/>\n",
      px(x0), py(x0 * bw), px(ridge), py(peak), px(x1), py(peak));
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" class=\"tk\">{}, {}"
      "</text>\n",
      kLeft + w, py(peak) - 4, FormatRate(bw, "B/s"), FormatRate(peak, "FLOP/s"));
  out += fmt::format(
      "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ccc\" "
      "stroke-dasharray=\"3\"/>\n",
      px(ai), kTop, kTop + h);
  for (size_t i = 0; i < timed.size(); ++i) {
    out += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"><title>{}: {:.2f} "
        "us</title></circle>\n",
        px(ai), py(flops / (timed[i].us * 1e-6)), kColors[i % 3], HtmlEscape(timed[i].label),
        timed[i].us);
  }
  out += Legend(timed, kLeft + 10, kTop + 10);
  return out + AxisLabels("FLOPs per byte", "FLOP/s") + "</svg>\n";
}

std::string RooflineSummary(const Roofline& r, const std::vector<RooflineMark>& marks) {
  if (!r.has_floor()) return "no roofline measured" + (r.error.empty() ? "" : ": " + r.error);
  std::string out = fmt::format("floor {:.2f} us ({}{})", r.floor_us, r.bound,
                                r.bound == "compute" ? ", " + r.compute_class : "");
  std::string sides;
  for (const RooflineMark& m : marks) {
    if (m.us <= 0) continue;
    sides +=
        fmt::format("{}{} {}", sides.empty() ? "" : ", ", m.label, Pct(100 * r.floor_us / m.us));
  }
  if (!sides.empty()) out += "; " + sides + " of the floor";
  return out;
}

}  // namespace ks
