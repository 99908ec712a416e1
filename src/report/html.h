// Building blocks of the HTML report: escaping, tables, an SVG line chart and a rendered line
// diff. Everything returned is self-contained markup (inline SVG, no scripts, no URLs); every
// piece of text passed in is escaped.
// Thread-safety: functions only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/diff.h"

namespace ks {

// Escapes &, <, >, " and ' for text and attribute values.
std::string HtmlEscape(const std::string& text);

// A <table>: `headers` and every cell are escaped; a row shorter than the headers is padded.
std::string HtmlTable(const std::vector<std::string>& headers,
                      const std::vector<std::vector<std::string>>& rows);

struct ChartSeries {
  std::string name;
  std::vector<double> values;  // value at x = 0, 1, 2, ...
};

struct ChartOptions {
  std::string title;
  std::string x_label = "round";
  std::string y_label = "best speedup";
  int width = 560;
  int height = 280;
};

// An inline <svg> line chart: axes with ticks and labels, one polyline per series (a
// one-point series is drawn as a dot), a legend; "no data" when every series is empty.
std::string SvgLineChart(const std::vector<ChartSeries>& series, const ChartOptions& options);

// A <pre class="diff"> block: one line per DiffLine with class "add", "del" or "ctx" and its
// +/-/space marker.
std::string DiffHtml(const std::vector<DiffLine>& lines);

// "1.234" or "-" when unset; "12.5%" for FormatPercent.
std::string FormatNumber(const std::optional<double>& v, int decimals = 3);
std::string FormatPercent(const std::optional<double>& v);

}  // namespace ks
