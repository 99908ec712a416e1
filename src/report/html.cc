#include "report/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ks {
namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                    "#9467bd", "#8c564b", "#e377c2", "#17becf"};

// A "nice" upper bound for the axis: 1, 2 or 5 times a power of ten at or above `v`.
double NiceCeil(double v) {
  if (!(v > 0)) return 1.0;
  double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double f : {1.0, 2.0, 5.0, 10.0}) {
    if (f * p >= v) return f * p;
  }
  return 10 * p;
}

}  // namespace

std::string HtmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string HtmlTable(const std::vector<std::string>& headers,
                      const std::vector<std::vector<std::string>>& rows) {
  std::string out = "<table>\n<tr>";
  for (const std::string& h : headers) out += "<th>" + HtmlEscape(h) + "</th>";
  out += "</tr>\n";
  for (const auto& row : rows) {
    out += "<tr>";
    for (size_t i = 0; i < std::max(row.size(), headers.size()); ++i) {
      out += "<td>" + (i < row.size() ? HtmlEscape(row[i]) : std::string()) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

std::string SvgLineChart(const std::vector<ChartSeries>& series, const ChartOptions& o) {
  const double left = 60, right = 20, top = 30, bottom = 45;
  const double w = o.width - left - right, h = o.height - top - bottom;
  size_t points = 0;
  double y_max = 0;
  for (const ChartSeries& s : series) {
    points = std::max(points, s.values.size());
    for (double v : s.values) {
      if (std::isfinite(v)) y_max = std::max(y_max, v);
    }
  }
  y_max = NiceCeil(y_max);
  const double x_max = points > 1 ? static_cast<double>(points - 1) : 1.0;
  auto px = [&](double x) { return left + w * x / x_max; };
  auto py = [&](double y) { return top + h - h * std::clamp(y, 0.0, y_max) / y_max; };

  std::string out = fmt::format(
      "<svg class=\"chart\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" role=\"img\">\n",
      o.width, o.height);
  out += fmt::format("<title>{}</title>\n", HtmlEscape(o.title));
  out += fmt::format("<text x=\"{}\" y=\"18\" text-anchor=\"middle\" class=\"ct\">{}</text>\n",
                     o.width / 2, HtmlEscape(o.title));
  // Axes, ticks and grid.
  out += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#333\"/>\n"
      "<line x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\" stroke=\"#333\"/>\n",
      left, top, top + h, left + w);
  for (int i = 0; i <= 4; ++i) {
    double v = y_max * i / 4;
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\" class=\"tk\">{5:.3g}</text>\n",
        left, py(v), left + w, left - 6, py(v) + 4, v);
  }
  const size_t x_step = std::max<size_t>(1, (points + 9) / 10);
  for (size_t x = 0; x < std::max<size_t>(points, 1); x += x_step) {
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" class=\"tk\">{}</text>\n",
        px(static_cast<double>(x)), top + h + 16, x);
  }
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" class=\"al\">{}</text>\n"
      "<text x=\"14\" y=\"{:.1f}\" text-anchor=\"middle\" class=\"al\" "
      "transform=\"rotate(-90 14 {:.1f})\">{}</text>\n",
      left + w / 2, o.height - 6, HtmlEscape(o.x_label), top + h / 2, top + h / 2,
      HtmlEscape(o.y_label));
  if (points == 0) {
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" class=\"nd\">no data</text>\n",
        left + w / 2, top + h / 2);
  }
  // Series and legend.
  for (size_t k = 0; k < series.size(); ++k) {
    const ChartSeries& s = series[k];
    const char* color = kPalette[k % (sizeof(kPalette) / sizeof(kPalette[0]))];
    std::string pts;
    for (size_t x = 0; x < s.values.size(); ++x) {
      double v = std::isfinite(s.values[x]) ? s.values[x] : 0.0;
      pts +=
          fmt::format("{}{:.1f},{:.1f}", pts.empty() ? "" : " ", px(static_cast<double>(x)), py(v));
    }
    if (s.values.size() == 1) {
      out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"/>\n", px(0),
                         py(std::isfinite(s.values[0]) ? s.values[0] : 0.0), color);
    }
    if (!s.values.empty()) {
      out += fmt::format(
          "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n", color, pts);
    }
    double ly = top + 4 + 14.0 * static_cast<double>(k);
    out += fmt::format(
        "<rect x=\"{0:.1f}\" y=\"{1:.1f}\" width=\"10\" height=\"3\" fill=\"{2}\"/>"
        "<text x=\"{3:.1f}\" y=\"{4:.1f}\" class=\"lg\">{5}</text>\n",
        left + 10, ly + 4, color, left + 24, ly + 8, HtmlEscape(s.name));
  }
  return out + "</svg>\n";
}

std::string DiffHtml(const std::vector<DiffLine>& lines) {
  std::string out = "<pre class=\"diff\">";
  for (const DiffLine& l : lines) {
    const char* cls = l.op == '+' ? "add" : l.op == '-' ? "del" : "ctx";
    out += fmt::format("<span class=\"{}\">{}{}</span>", cls, l.op == ' ' ? ' ' : l.op,
                       HtmlEscape(l.text));
  }
  return out + "</pre>\n";
}

std::string FormatNumber(const std::optional<double>& v, int decimals) {
  return v ? fmt::format("{:.{}f}", *v, decimals) : std::string("-");
}

std::string FormatPercent(const std::optional<double>& v) {
  return v ? fmt::format("{:.1f}%", *v * 100) : std::string("-");
}

}  // namespace ks
