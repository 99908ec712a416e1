// WorkerProcess: one supervised evaluation worker (docs/protocol.md) — spawned in its own
// process group with a private scratch directory, handshaken, fed one request at a time, its
// stdout/stderr drained into capped tails, each stage held to its deadline, and killed (whole
// group) on any failure.
//
// Thread-safety: not thread-safe; one owner (a pool slot, or the pool while it holds a spare).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/subprocess.h"
#include "eval/eval_result.h"
#include "eval/gpu_lease.h"
#include "eval/protocol.h"
#include "eval/runner.h"
#include "eval/tail_buffer.h"
#include "sandbox/sandbox.h"

namespace ks {

// The child fds of the protocol channel (docs/protocol.md).
inline constexpr int kProtoInFd = 3;   // the worker reads requests here
inline constexpr int kProtoOutFd = 4;  // the worker writes replies here
// Bytes of stdout/stderr a result carries (per request).
inline constexpr size_t kResultTailBytes = 4096;

struct WorkerConfig {
  // Program and arguments, e.g. {"python3", "-m", "kernelsmith_worker"}.
  std::vector<std::string> argv;
  // Environment added to the engine's. The worker also always gets KS_PROTO_IN=3,
  // KS_PROTO_OUT=4 and TMPDIR=<scratch_dir>, overriding these.
  std::map<std::string, std::string> env;
  // Private working directory; Start creates it, the WorkerProcess removes it when it ends.
  std::string scratch_dir;
  // stdout/stderr bytes kept (each).
  size_t tail_bytes = 64 * 1024;
  // Deadlines in seconds. A stage's deadline runs from its `stage` message (the load deadline
  // from the request, until the first stage message); the timing deadline runs from the lease
  // grant; while a worker waits for the lease only lease_wait_timeout_s applies.
  double handshake_timeout_s = 120;
  double load_timeout_s = 300;
  double correctness_timeout_s = 180;
  double audit_timeout_s = 120;
  double timing_timeout_s = 300;
  double lease_wait_timeout_s = 1800;
  // Confinement applied to the worker (sandbox/sandbox.h): limits, namespaces and Landlock at
  // spawn; while a request runs, the CPU budget and the process/memory watchdog. Null: none
  // beyond the process group and the scratch directory.
  std::shared_ptr<const SandboxPlan> sandbox;
  // The cpu_ext build cache the worker loads libraries from (build_cache.h): a request that
  // ends without a result leaves no library replaced in it. Empty: not looked at.
  std::string build_cache;
};

class WorkerProcess {
 public:
  // Creates the scratch directory, spawns the worker and waits for its hello. On failure
  // returns why (IOError: could not start; Timeout: no hello in time; Protocol: bad hello,
  // protocol mismatch, exit before hello), the worker killed and its scratch directory gone,
  // and stores the last 4 KiB of the worker's stderr in *stderr_tail if non-null.
  static Result<std::unique_ptr<WorkerProcess>> Start(WorkerConfig config,
                                                      std::string* stderr_tail);
  // Kills the process group and removes the scratch directory.
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // The worker's hello message.
  const nlohmann::json& hello() const { return hello_; }
  pid_t pid() const { return proc_->pid(); }

  // False if the worker must not be given another request: it has exited, closed its protocol
  // channel, or written protocol lines while idle. Does not block.
  bool Healthy();

  struct Outcome {
    EvalResult result;
    bool replace = true;   // the worker must not be reused (it was killed, or is poisoned)
    bool started = false;  // the worker sent at least one message for the request
  };
  // Runs one request and returns its result, failures included (timeout, crash, infra_error for
  // a lease that never came). Fills duration_s (since the request was sent), stdout_tail and
  // stderr_tail (this request's output, last 4 KiB each), and backend and file paths where the
  // worker left them empty. `lease` is the GPU lease the worker's timing stage must hold.
  Outcome Evaluate(const EvalRequest& request, const std::string& id, GpuLease* lease);

  // Sends shutdown, waits up to `grace` for the worker to exit, then kills the group.
  void Shutdown(std::chrono::milliseconds grace);

 private:
  using Clock = std::chrono::steady_clock;
  explicit WorkerProcess(WorkerConfig config);

  Status Handshake();
  // Waits up to `max_wait` for I/O, then reads what is available (stdout/stderr into the
  // tails, protocol bytes into lines_) and writes what it can of outbox_. Non-ok on a
  // protocol line over the size limit.
  Status Pump(Clock::duration max_wait);
  // Sets *ended once the worker can send nothing more (protocol channel closed, or process
  // exited); for an exited worker, first reads what it wrote before it exited. Non-ok as Pump.
  Status CheckEnded(bool* ended);
  // Kills the group and reaps the worker, then collects its remaining output (bounded wait).
  void KillAndDrain();
  // For a worker that closed its protocol channel or exited: gives it a moment to exit by
  // itself, kills it, and says how it ended ("died with SIGSEGV", "exited with code 1", ...).
  std::string CollectDeath();
  double StageLimit(const std::string& stage) const;
  // Empty while the worker's processes are within the sandbox's process and memory limits;
  // otherwise why it must be killed.
  std::string CheckLimits();

  WorkerConfig config_;
  std::unique_ptr<Subprocess> proc_;
  LineSplitter lines_;
  TailBuffer stdout_;
  TailBuffer stderr_;
  std::string outbox_;      // protocol bytes not yet written
  bool proto_eof_ = false;  // the worker's protocol channel is closed (EOF or write failure)
  uint64_t proto_bytes_read_ = 0;
  uint64_t userns_inode_ = 0;  // the worker's own user namespace (0: it shares the engine's)
  nlohmann::json hello_;
};

}  // namespace ks
