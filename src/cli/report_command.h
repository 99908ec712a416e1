// `kernelsmith report`: the self-contained HTML report of a bench or evolve run directory
// (docs/report.md).
// Thread-safety: called once from main.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace ks {

struct ReportCommandOptions {
  std::string run_dir;
  std::string output;  // empty: RUN_DIR/report.html
};

// Registers the `report` subcommand.
CLI::App* AddReportCommand(CLI::App& app, ReportCommandOptions& options);

// Runs it. Exit code: 0 written, 1 the file could not be written, 2 usage or input error.
int RunReportCommand(const ReportCommandOptions& options);

}  // namespace ks
