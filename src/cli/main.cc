// kernelsmith: evolutionary, LLM-driven GPU kernel optimization.
#include <CLI/CLI.hpp>

#include "cli/bench_command.h"
#include "cli/curate_command.h"
#include "cli/eval_command.h"
#include "cli/evolve_command.h"
#include "cli/export_command.h"
#include "cli/report_command.h"
#include "cli/serve_command.h"
#include "cli/verify_command.h"
#include "cli/worker_command.h"

int main(int argc, char** argv) {
  CLI::App app("kernelsmith " KS_VERSION
               " - evolve faster GPU kernels from PyTorch reference modules.\n"
               "Run `kernelsmith <command> --help` for a command's options.");
  app.require_subcommand(1);
  app.set_version_flag("--version", KS_VERSION);

  ks::EvalCommandOptions eval_options;
  CLI::App* eval = ks::AddEvalCommand(app, eval_options);
  ks::EvolveCommandOptions evolve_options;
  CLI::App* evolve = ks::AddEvolveCommand(app, evolve_options);
  ks::BenchCommandOptions bench_options;
  CLI::App* bench = ks::AddBenchCommand(app, bench_options);
  ks::ReportCommandOptions report_options;
  CLI::App* report = ks::AddReportCommand(app, report_options);
  ks::ExportCommandOptions export_options;
  ks::ExportCommands export_commands = ks::AddExportCommand(app, export_options);
  ks::CurateCommandOptions curate_options;
  CLI::App* curate = ks::AddCurateCommand(app, curate_options);
  ks::ServeCommandOptions serve_options;
  CLI::App* serve = ks::AddServeCommand(app, serve_options);
  ks::VerifyCommandOptions verify_options;
  CLI::App* verify = ks::AddVerifyCommand(app, verify_options);
  ks::WorkerCommandOptions worker_options;
  CLI::App* worker = ks::AddWorkerCommand(app, worker_options);
  ks::ClusterCommandOptions cluster_options;
  CLI::App* cluster = ks::AddClusterCommand(app, cluster_options);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;  // usage errors exit 2
  }
  if (eval->parsed()) return ks::RunEvalCommand(eval_options);
  if (evolve->parsed()) return ks::RunEvolveCommand(evolve_options, *evolve);
  if (bench->parsed()) return ks::RunBenchCommand(bench_options, *bench);
  if (report->parsed()) return ks::RunReportCommand(report_options);
  if (serve->parsed()) return ks::RunServeCommand(serve_options);
  if (curate->parsed()) return ks::RunCurateCommand(curate_options);
  if (verify->parsed()) return ks::RunVerifyCommand(verify_options);
  if (worker->parsed()) return ks::RunWorkerCommand(worker_options);
  if (cluster->parsed()) return ks::RunClusterCommand(cluster_options);
  if (export_commands.sft->parsed() || export_commands.rl->parsed()) {
    return ks::RunExportCommand(export_options, export_commands);
  }
  return 2;
}
