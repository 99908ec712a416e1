#include "export/writer.h"

#include "core/file.h"

namespace ks {

std::string SummaryPathFor(const std::string& output) {
  const std::string ext = ".jsonl";
  if (output.size() > ext.size() && output.compare(output.size() - ext.size(), ext.size(), ext) == 0) {
    return output.substr(0, output.size() - ext.size()) + ".summary.json";
  }
  return output + ".summary.json";
}

Status WriteJsonl(const std::string& path, const std::vector<nlohmann::json>& rows) {
  std::string text;
  for (const nlohmann::json& row : rows) {
    text += row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    text += '\n';
  }
  return WriteFileAtomic(path, text);
}

Status WriteSummary(const std::string& output, const ExportSummary& summary) {
  nlohmann::json j = summary.ToJson();
  j["output"] = output;
  return WriteFileAtomic(SummaryPathFor(output), j.dump(2) + "\n");
}

}  // namespace ks
