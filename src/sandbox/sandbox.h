// Sandbox: what confines an evaluation worker (untrusted candidate code) — applied in the child
// between fork and exec (core/subprocess.h ChildSetup), on top of the worker's own process
// group and private scratch directory:
//   - resource limits: RLIMIT_FSIZE, RLIMIT_NPROC, optional RLIMIT_AS; RLIMIT_CPU is re-armed
//     per request by the pool (ArmCpuLimit in sandbox/processes.h);
//   - a user + network namespace: the worker sees only a loopback interface that is down;
//   - Landlock: every path read-only except the scratch directory, the compile caches and /dev;
//     TCP denied as well when no network namespace could be had; no signals to processes
//     outside the sandbox.
// What is detected at startup and what each fallback means: docs/security.md.
//
// Thread-safety: PlanSandbox may be called from any thread (the probe runs once per process).
// A WorkerSandbox is immutable after Prepare.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/subprocess.h"
#include "sandbox/landlock.h"

namespace ks {

struct SandboxOptions {
  // Master switch. false: no limits, no namespaces, no Landlock (the process group, scratch
  // directory and stage deadlines remain). KS_SANDBOX=off sets it.
  bool enabled = true;
  // Run the worker in a new user + network namespace (no network). KS_SANDBOX=no-netns clears it,
  // e.g. when a GPU driver setup misbehaves inside namespaces.
  bool network_namespace = true;
  // Make everything but the scratch directory and `writable_paths` read-only with Landlock.
  // KS_SANDBOX=no-landlock clears it.
  bool landlock = true;
  // Paths that stay writable besides the scratch directory. Empty: DefaultWritablePaths().
  std::vector<std::string> writable_paths;
  // RLIMIT_FSIZE: the largest file a worker may write, in bytes (0: unlimited). Default 8 GiB.
  uint64_t max_file_bytes = uint64_t{8} << 30;
  // RLIMIT_NPROC: tasks (processes and threads) of the worker's uid in its user namespace
  // (0: unlimited). The kernel does not apply it to root; the pool's process watchdog
  // (max_processes) applies to everyone.
  uint64_t max_tasks = 4096;
  // Processes in the worker's process group or user namespace before the pool kills it
  // (checked about every 100 ms while a request runs; 0: unlimited).
  int max_processes = 128;
  // Resident memory (sum over the worker's processes) before the pool kills it (0: half of the
  // machine's physical memory).
  uint64_t max_rss_bytes = 0;
  // RLIMIT_AS in bytes (0: unlimited, the default: CUDA reserves far more address space than it
  // uses, so any useful value breaks GPU workers; use it on CPU-only machines).
  uint64_t max_address_space_bytes = 0;
  // CPU seconds (all threads) one request may use before the kernel kills the worker with
  // SIGXCPU (0: unlimited). Default 3600.
  double cpu_seconds_per_request = 3600;
};

// Applies KS_SANDBOX (comma-separated: on, off, no-netns, no-landlock) to *options.
// InvalidArgument naming an unknown word.
Status ApplySandboxEnv(const char* value, SandboxOptions* options);

// The caches and devices a worker writes to: /dev, $KS_CACHE_DIR (or ~/.cache/kernelsmith),
// $TRITON_CACHE_DIR (or ~/.triton), $TORCH_EXTENSIONS_DIR (or ~/.cache/torch_extensions),
// ~/.nv (the CUDA JIT cache). Directories are created if missing.
std::vector<std::string> DefaultWritablePaths();

// What this machine supports, probed once per process.
struct SandboxSupport {
  bool namespaces = false;       // unshare(CLONE_NEWUSER | CLONE_NEWNET) works in a child
  std::string namespaces_error;  // why not
  int landlock_abi = 0;          // 0: no Landlock
};
const SandboxSupport& ProbeSandboxSupport();

// The options as they will be applied on this machine, with a warning per requested mechanism
// that is not available (the fallback it gets instead).
struct SandboxPlan {
  SandboxOptions options;  // disabled mechanisms cleared, writable_paths and max_rss filled in
  bool landlock_denies_tcp = false;  // no namespace, so Landlock denies TCP instead
  std::vector<std::string> warnings;
  // One line for diagnostics: "user+net namespace, Landlock ABI 7 (writes: ...), ...".
  std::string Describe() const;
};
SandboxPlan PlanSandbox(const SandboxOptions& options);

// The one set-up of every sandboxed child (evaluation workers, the curate tool): KS_SANDBOX
// applied to `options`, then PlanSandbox. InvalidArgument for a bad KS_SANDBOX.
Result<SandboxPlan> PlanSandboxFromEnv(SandboxOptions options);

// The process and memory watchdog of a sandboxed child: "" while the processes of process
// group `pgid` and user namespace `userns_inode` (0: none) are within `options`' max_processes
// and max_rss_bytes, else why not, naming `who` ("worker", "curate tool"). The caller kills.
std::string SandboxLimitExceeded(const SandboxOptions& options, pid_t pgid, uint64_t userns_inode,
                                 const std::string& who);

// The per-worker child setup: limits, namespaces, Landlock with the worker's scratch directory
// writable.
class WorkerSandbox : public ChildSetup {
 public:
  // IOError when the Landlock ruleset cannot be built (naming the path).
  static Result<std::unique_ptr<WorkerSandbox>> Prepare(const SandboxPlan& plan,
                                                        const std::string& scratch_dir);
  int Apply(const char** step) const noexcept override;

 private:
  WorkerSandbox() = default;
  struct Limit {
    int resource;
    uint64_t value;
    const char* name;
  };
  std::vector<Limit> limits_;
  bool namespaces_ = false;
  std::string uid_map_;  // "<uid> <uid> 1\n"
  std::string gid_map_;
  LandlockRuleset landlock_;
};

}  // namespace ks
