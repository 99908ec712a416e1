#include "cli/curate_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "cli/python_choice.h"
#include "core/file.h"
#include "curate/llm_inputs.h"
#include "curate/pipeline.h"
#include "llm/llm_client.h"

namespace ks {
namespace {

constexpr int kExitDone = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

int UsageError(const std::string& message) {
  fmt::print(stderr, "kernelsmith curate: error: {}\n", message);
  return kExitUsage;
}

}  // namespace

CLI::App* AddCurateCommand(CLI::App& app, CurateCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "curate",
      "Extract nn.Module classes from Python sources, make them self-contained, deduplicate "
      "(AST hash, MinHash LSH), deduce and verify inputs on the CPU, cluster, and write a "
      "KernelBench-format problem set to OUT_DIR/problems/<family>/ (docs/curate.md).\nExit "
      "status: 0 done, 1 stopped on an error (rerun with --resume), 2 usage error.");
  cmd->add_option("sources", o.sources, "Directories of Python source (one repository each)")
      ->required();
  cmd->add_option("-o,--out", o.out_dir, "Output directory")->required();
  cmd->add_option("--jobs", o.jobs, "Python tool processes at once (parallel over files)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_flag("--resume", o.resume, "Continue the run in OUT_DIR, skipping finished work");
  cmd->add_option("--near-dup-threshold", o.near_dup_threshold,
                  "MinHash Jaccard estimate (token 5-grams) at which modules merge")
      ->check(CLI::Range(0.01, 1.0))
      ->capture_default_str();
  cmd->add_flag("--embed", o.embed,
                "Cluster with a locally installed sentence-embedding model (else TF-IDF)");
  cmd->add_option("--min-cluster-size", o.min_cluster_size,
                  "HDBSCAN min_cluster_size (default: the cluster tool's, 5)")
      ->check(CLI::Range(2, 100000));
  cmd->add_option("--llm-url", o.llm_url,
                  "OpenAI-compatible base URL: ask it for inputs where deduction failed");
  cmd->add_option("--model", o.model, "Model name for --llm-url");
  cmd->add_option("--api-key-env", o.api_key_env, "Environment variable holding the API key");
  cmd->add_option("--python", o.python,
                  "Python with torch and scikit-learn (default: "
                  "$KS_PYTHON or python3)");
  cmd->add_option("--timeout", o.timeout_s, "Seconds per module run by `inputs`")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed of input generation")->capture_default_str();
  cmd->add_flag("--include-tests", o.include_tests,
                "Also read test directories and test_*.py files (left out by default)");
  cmd->add_option("--extract-batch", o.extract_batch, "Files per extract call")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd->add_option("--inputs-batch", o.inputs_batch, "Modules per inputs call")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  return cmd;
}

int RunCurateCommand(const CurateCommandOptions& o) {
  CurateOptions co;
  co.sources = o.sources;
  co.out_dir = o.out_dir;
  co.jobs = o.jobs;
  co.resume = o.resume;
  co.near_dup_threshold = o.near_dup_threshold;
  co.embed = o.embed;
  co.min_cluster_size = o.min_cluster_size;
  co.timeout_s = o.timeout_s;
  co.seed = o.seed;
  co.skip_tests = !o.include_tests;
  co.extract_batch = o.extract_batch;
  co.inputs_batch = o.inputs_batch;
  ChoosePython(o.python, &co.tool.python);
  for (const std::string& s : o.sources) {
    std::error_code ec;
    if (!std::filesystem::is_directory(s, ec)) {
      return UsageError(s + ": not a directory (give directories of Python source)");
    }
  }
  if (!o.llm_url.empty() || !o.model.empty()) {
    if (o.llm_url.empty() || o.model.empty()) {
      return UsageError("LLM repair needs both --llm-url URL and --model NAME");
    }
    OpenAiClientOptions lo;
    lo.base_url = o.llm_url;
    lo.model = o.model;
    lo.api_key_env = o.api_key_env;
    lo.max_in_flight = o.jobs;
    lo.request_timeout_s = 300;
    Result<std::unique_ptr<OpenAiClient>> client = OpenAiClient::Create(lo);
    if (!client.ok()) return UsageError(client.status().message());
    co.llm = std::move(*client);
    Result<std::string> tmpl_path = DefaultInputsTemplatePath();
    if (!tmpl_path.ok()) return UsageError(tmpl_path.status().message());
    Result<std::string> tmpl = ReadFile(*tmpl_path);
    if (!tmpl.ok()) return UsageError(tmpl.status().message());
    co.llm_template = *tmpl;
  }
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) return UsageError("cannot create " + o.out_dir + ": " + ec.message());

  Result<nlohmann::json> summary = Status::Internal("curate did not run");
  {
    Progress progress(stdout, isatty(fileno(stdout)) != 0, o.out_dir + "/curate.log", 5.0);
    progress.Log(fmt::format("{} curate of {} source dir(s) into {}, {} job(s)",
                             o.resume ? "resuming" : "starting", o.sources.size(), o.out_dir,
                             o.jobs));
    summary = RunCurate(co, &progress);
    progress.Finish();
  }
  if (!summary.ok()) {
    const Status& s = summary.status();
    if (s.code() == Status::Code::kInvalidArgument || s.code() == Status::Code::kNotFound) {
      return UsageError(s.message());
    }
    fmt::print(stderr, "kernelsmith curate: error: {}\n(state kept in {}; rerun with --resume)\n",
               s.message(), o.out_dir);
    return kExitFailed;
  }
  const nlohmann::json& j = *summary;
  fmt::print(
      "files scanned {}  modules found {}  self-contained {}  unique {} ({} exact, {} near "
      "duplicates merged)  executable {}{}  families {}  clusters {}  wall {:.1f} s\n",
      j["files_scanned"].get<int>(), j["modules_found"].get<int>(), j["self_contained"].get<int>(),
      j["unique"].get<int>(), j["exact_duplicates"].get<int>(), j["near_duplicates"].get<int>(),
      j["executable"].get<int>(),
      j["executable_via_llm"].get<int>() > 0
          ? fmt::format(" ({} via LLM)", j["executable_via_llm"].get<int>())
          : "",
      j["family_count"].get<int>(), j["clusters"].get<int>(), j["wall_time_s"].get<double>());
  fmt::print("problems: {}/problems  modules: {}/modules.jsonl  clusters: {}/clusters.json\n",
             o.out_dir, o.out_dir, o.out_dir);
  return kExitDone;
}

}  // namespace ks
