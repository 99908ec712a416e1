#include "cli/export_command.h"

#include <fmt/format.h>

#include "export/rl.h"
#include "export/run_inputs.h"
#include "export/sft.h"
#include "export/writer.h"

namespace ks {
namespace {

int UsageError(const std::string& format, const std::string& message) {
  fmt::print(stderr, "kernelsmith export {}: error: {}\n", format, message);
  return 2;
}

void AddCommon(CLI::App* cmd, ExportCommandOptions& o) {
  cmd->add_option("run_dirs", o.run_dirs,
                  "Run directories of `kernelsmith evolve` and bench directories of "
                  "`kernelsmith bench` (read-only; runs in progress are fine)")
      ->required();
  cmd->add_option("-o,--output", o.output, "The dataset to write (JSON lines); the summary "
                                           "goes beside it as <name>.summary.json")
      ->required();
}

}  // namespace

ExportCommands AddExportCommand(CLI::App& app, ExportCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "export",
      "Turn evolution trajectories into training data: `export sft` (filtered single-step "
      "revisions for supervised fine-tuning) or `export rl` (prompts + ground truth in verl's "
      "layout). See docs/export.md.");
  cmd->require_subcommand(1);
  ExportCommands c;
  c.sft = cmd->add_subcommand(
      "sft",
      "SFT rows {messages, prompt, completion, meta}: correct translations, and revisions whose "
      "gain over the parent is above --min-gain; de-duplicated, token-capped, balanced across "
      "difficulty levels.\nExit status: 0 written, 1 nothing kept or write error, 2 usage or "
      "input error.");
  AddCommon(c.sft, o);
  c.sft->add_option("--min-gain", o.min_gain,
                    "Keep a revision when child_speedup / parent_speedup > this")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  c.sft->add_option("--max-tokens", o.max_tokens,
                    "Drop rows with more prompt + completion tokens (0: no cap)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  c.sft->add_option("--balance-ratio", o.balance_ratio,
                    "No difficulty level keeps more than this times the rows of the smallest "
                    "(0: no balancing)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  c.rl = cmd->add_subcommand(
      "rl",
      "RL rows in verl's layout (prompt, data_source, ability, reward_model.ground_truth, "
      "extra_info) plus `label` for OpenRLHF.\nExit status: 0 written, 1 nothing kept or write "
      "error, 2 usage or input error.");
  AddCommon(c.rl, o);
  c.rl->add_option("--selection", o.selection,
                   "best: steps that made the run's new best; all: every LLM step with a "
                   "measured parent; initial: translations and revisions of the seed")
      ->capture_default_str()
      ->check(CLI::IsMember({"best", "all", "initial"}));
  c.rl->add_option("--data-source", o.data_source, "verl's data_source of every row")
      ->capture_default_str();
  return c;
}

int RunExportCommand(const ExportCommandOptions& o, const ExportCommands& c) {
  const std::string format = c.sft->parsed() ? "sft" : "rl";
  Result<std::vector<Trajectory>> trajectories = LoadTrajectories(o.run_dirs);
  if (!trajectories.ok()) return UsageError(format, trajectories.status().message());
  for (const Trajectory& t : *trajectories) {
    if (!t.warning.empty())
      fmt::print(stderr, "kernelsmith export {}: warning: {}\n", format, t.warning);
  }
  ExportRows rows;
  if (format == "sft") {
    SftOptions so;
    so.min_gain = o.min_gain;
    so.max_tokens = o.max_tokens;
    so.balance_ratio = o.balance_ratio;
    rows = BuildSftRows(*trajectories, so);
  } else {
    Result<RlSelection> selection = ParseRlSelection(o.selection);
    if (!selection.ok()) return UsageError(format, selection.status().message());
    RlOptions ro;
    ro.selection = *selection;
    ro.data_source = o.data_source;
    rows = BuildRlRows(*trajectories, ro);
  }
  fmt::print("{}", rows.summary.ToText());
  Status s = WriteSummary(o.output, rows.summary);
  if (!s.ok()) {
    fmt::print(stderr, "kernelsmith export {}: error: {}\n", format, s.message());
    return 1;
  }
  if (rows.rows.empty()) {
    fmt::print(stderr, "kernelsmith export {}: error: nothing to export: {} (summary: {})\n",
               format, rows.summary.WhyEmpty(), SummaryPathFor(o.output));
    return 1;
  }
  s = WriteJsonl(o.output, rows.rows);
  if (!s.ok()) {
    fmt::print(stderr, "kernelsmith export {}: error: {}\n", format, s.message());
    return 1;
  }
  fmt::print("wrote {} row(s) to {} (summary: {})\n", rows.rows.size(), o.output,
             SummaryPathFor(o.output));
  return 0;
}

}  // namespace ks
