#include "cli/report_command.h"

#include <fmt/format.h>

#include "core/file.h"
#include "report/report.h"
#include "report/report_data.h"

namespace ks {

CLI::App* AddReportCommand(CLI::App& app, ReportCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write one self-contained HTML report (curves, metric tables, problems, best-kernel "
      "diffs, LLM usage, device) of a bench directory or an evolve run directory.\nExit "
      "status: 0 written, 1 write error, 2 usage or input error.");
  cmd->add_option("run_dir", o.run_dir, "Bench directory (bench.json) or evolve run directory")
      ->required();
  cmd->add_option("-o,--output", o.output, "Output file (default: RUN_DIR/report.html)");
  return cmd;
}

int RunReportCommand(const ReportCommandOptions& o) {
  Result<ReportData> data = LoadReportData(o.run_dir);
  if (!data.ok()) {
    fmt::print(stderr, "kernelsmith report: error: {}\n", data.status().message());
    return 2;
  }
  for (const std::string& w : data->warnings) {
    fmt::print(stderr, "kernelsmith report: warning: {}\n", w);
  }
  std::string path = o.output.empty() ? o.run_dir + "/report.html" : o.output;
  Status s = WriteFileAtomic(path, BuildReportHtml(*data));
  if (!s.ok()) {
    fmt::print(stderr, "kernelsmith report: error: {}\n", s.message());
    return 1;
  }
  fmt::print("report: {}\n", path);
  return 0;
}

}  // namespace ks
