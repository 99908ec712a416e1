// `kernelsmith export sft|rl`: SFT and RL datasets from evolve and bench run directories
// (docs/export.md).
// Thread-safety: called once from main.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace ks {

struct ExportCommandOptions {
  std::vector<std::string> run_dirs;  // evolve run directories and bench directories
  std::string output;                 // the JSONL file; required
  // sft
  double min_gain = 1.0;
  int64_t max_tokens = 65536;
  double balance_ratio = 2.0;
  // rl
  std::string selection = "best";
  std::string data_source = "kernelsmith";
};

struct ExportCommands {
  CLI::App* sft = nullptr;
  CLI::App* rl = nullptr;
};

// Registers `export` with its `sft` and `rl` subcommands.
ExportCommands AddExportCommand(CLI::App& app, ExportCommandOptions& options);

// Runs the parsed one. Exit code: 0 written, 1 nothing to export (the summary says why; no
// dataset is written) or a write error, 2 usage or input error.
int RunExportCommand(const ExportCommandOptions& options, const ExportCommands& commands);

}  // namespace ks
