// The `kernelsmith curate` pipeline (docs/curate.md): walk -> extract (parallel batches of
// files) -> dedup (exact AST hash, MinHash LSH) -> inputs (parallel batches of modules) ->
// LLM repair of failed deductions (optional) -> cluster -> outputs in OUT_DIR.
//
// Stage state lives in OUT_DIR/curate.db (CurateStore); a run with `resume` skips the files
// and modules already done. Everything derived (problems/, seeds/, modules.jsonl,
// clusters.json, summary.json) is rewritten at the end of every run.
// Thread-safety: RunCurate is called from one thread; it starts `jobs` worker threads.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "curate/curate_tool.h"
#include "curate/dedup.h"
#include "engine/progress.h"
#include "llm/llm_client.h"
#include "sandbox/sandbox.h"

namespace ks {

struct CurateOptions {
  std::vector<std::string> sources;  // repository roots / package directories
  std::string out_dir;               // required
  int jobs = 2;                      // tool processes (and LLM calls) at once
  bool resume = false;               // continue the run in out_dir
  double near_dup_threshold = 0.7;   // MinHash Jaccard estimate at which modules merge
  bool embed = false;                // cluster with a local sentence-embedding model
  int min_cluster_size = 0;          // HDBSCAN min_cluster_size; 0: the tool's default
  double timeout_s = 20;             // per module, for `inputs`
  uint64_t seed = 42;                // `inputs` seed
  int extract_batch = 16;            // files per `extract` call
  int inputs_batch = 8;              // modules per `inputs` call
  bool skip_tests = true;            // leave test directories/files out of the walk
  std::shared_ptr<LlmClient> llm;    // null: no LLM repair
  std::string llm_template;          // prompt template text (prompts/curate/inputs.md)
  CurateToolOptions tool;            // scratch_dir and sandbox are set by RunCurate
  // How the tool's processes are confined (KS_SANDBOX applies on top; docs/security.md).
  SandboxOptions sandbox;
};

// One module (or one unreadable file) and what became of it.
struct CurateModule {
  int64_t id = 0;
  int root_index = 0;
  nlohmann::json extract;  // the extract record
  std::string status;      // "ok" | "rejected" | "duplicate"
  std::string stage;       // stage that decided: extract | dedup | inputs | llm
  std::string reason;      // why rejected / merged; "" when ok
  std::optional<DedupVerdict> dup;
  nlohmann::json inputs;   // the final inputs record (null when not run)
  std::string inputs_via;  // "deduction" | "llm" | ""
  std::string llm_error;   // why the LLM repair did not help ("" when not tried or verified)
  std::string problem;     // problems/<family>/<id>_<Name>.py, relative to out_dir
  std::optional<int> cluster;
  bool central = false;

  std::string ClassName() const;  // "" for a file-level record
  std::string Family() const;     // sanitized; "other" when missing
};

// Runs the pipeline and writes the outputs; returns the summary (also in summary.json).
// InvalidArgument for a usage problem (out_dir holds a run and resume is off, sources differ
// on resume), IOError when the tool cannot run or the store cannot be written.
Result<nlohmann::json> RunCurate(CurateOptions options, Progress* progress);

// Writes problems/, seeds/, modules.jsonl, clusters.json and summary.json (pipeline_outputs.cc).
Status WriteCurateOutputs(const std::string& out_dir, std::vector<CurateModule>& modules,
                          const nlohmann::json& clusters, const nlohmann::json& summary);

}  // namespace ks
