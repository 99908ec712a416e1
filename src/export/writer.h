// Writing an export: the rows as JSON lines and the summary beside them.
// Thread-safety: functions; callers serialize writes to the same path.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"
#include "export/summary.h"

namespace ks {

// Where the summary of the dataset `output` goes: "x.jsonl" → "x.summary.json", any other
// name gets ".summary.json" appended.
std::string SummaryPathFor(const std::string& output);

// Writes one compact JSON object per line (UTF-8; invalid bytes replaced), atomically.
// IOError naming the file when it cannot be written (e.g. its directory is missing).
Status WriteJsonl(const std::string& path, const std::vector<nlohmann::json>& rows);

// Writes `summary` (with "output" added) to SummaryPathFor(output), atomically.
Status WriteSummary(const std::string& output, const ExportSummary& summary);

}  // namespace ks
