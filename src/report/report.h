// The self-contained HTML report of a bench or evolve run (docs/report.md): inline CSS and
// SVG, no scripts, no external resources.
// Thread-safety: functions only.
#pragma once

#include <string>

#include "report/report_data.h"

namespace ks {

// The whole page.
std::string BuildReportHtml(const ReportData& data);

// The metric tables' column headers (also the e2e test's markers).
inline constexpr const char* kMetricHeaders[] = {"group",    "problems", "skipped",  "correct",
                                                 "corr",     "fast_1.0", "fast_1.2", "fast_1.5",
                                                 "fast_2.0", "avg_amsr", "geomean"};

}  // namespace ks
