// CurateTool: runs the Python side of `kernelsmith curate` (python/kernelsmith_curate) as
// subprocesses speaking the JSON-lines contract of docs/curate.md:
//   extract --root ROOT FILE...   -> one record per nn.Module class (or per unreadable file)
//   inputs [--timeout S] [--seed N] < records  -> one result per record
//   cluster [--embed] < records   -> one JSON object
// Each call is one child process (argv, own process group, killed at its deadline) in its own
// scratch directory (its working directory and TMPDIR), whose stdin is a file written there
// beforehand. With a sandbox plan the child is confined as evaluation workers are
// (sandbox/sandbox.h): no network, writes only to its scratch directory and the caches, and
// the process/memory watchdog, which kills the call (an IOError naming the limit).
// The tool exits 0 when it processed its input, records rejected or not; a non-zero exit or a
// deadline is an infrastructure error of that call.
// Thread-safety: calls may run from several threads at once (one child each).
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "sandbox/sandbox.h"

namespace ks {

struct CurateToolOptions {
  // The command that runs the package; the subcommand and its arguments are appended.
  // Default (empty): {python, "-m", "kernelsmith_curate"}.
  std::vector<std::string> command;
  std::string python = "python3";  // used when `command` is empty
  // PYTHONPATH given to the tool (inherited PYTHONPATH appended). Empty: the resources' python/
  // (FindResources), or nothing when the package is installed (pip).
  std::string pythonpath;
  std::string scratch_dir;  // where each call's scratch directory is made; required
  // How calls are confined (PlanSandboxFromEnv); null: not at all (process group and deadline
  // only).
  std::shared_ptr<const SandboxPlan> sandbox;
};

// What one call printed: the JSON objects of its stdout lines, and the lines that were not
// JSON objects (reported, never fatal), and the tail of its stderr.
struct CurateToolOutput {
  std::vector<nlohmann::json> records;
  std::vector<std::string> bad_lines;
  std::string stderr_tail;
};

class CurateTool {
 public:
  explicit CurateTool(CurateToolOptions options);

  // Checks that the package can be started (`... --help` exits 0). IOError says how to make it
  // importable.
  Status Probe() const;
  // extract over `files` (absolute paths below `root`).
  Result<CurateToolOutput> Extract(const std::string& root, const std::vector<std::string>& files,
                                   double deadline_s) const;
  // inputs over `records` (one JSON object per line on stdin).
  Result<CurateToolOutput> Inputs(const std::vector<nlohmann::json>& records, double timeout_s,
                                  uint64_t seed, double deadline_s) const;
  // cluster over `records`; the single object printed.
  // `min_cluster_size` 0: the tool's default.
  Result<nlohmann::json> Cluster(const std::vector<nlohmann::json>& records, bool embed,
                                 int min_cluster_size, double deadline_s,
                                 std::string* stderr_tail) const;

  // Runs `args` after the command with `stdin_text` on stdin. IOError on a failed start or a
  // non-zero exit (with the stderr tail), Timeout past `deadline_s`.
  Result<CurateToolOutput> Run(const std::vector<std::string>& args, const std::string& stdin_text,
                               double deadline_s) const;

 private:
  CurateToolOptions options_;
  std::map<std::string, std::string> env_;
};

}  // namespace ks
