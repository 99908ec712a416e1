// WorkerPool: the local Runner. Evaluates requests in Python worker processes
// (docs/protocol.md), one slot thread per worker, a FIFO queue shared by the slots, one GPU
// lease per GPU so timing never overlaps on a device.
//
// Every request gets exactly one EvalResult: a worker that crashes, hangs past a stage
// deadline or breaks the protocol is killed (whole process group), its request gets a
// crash/timeout result, and a fresh worker serves the next request.
//
// Thread-safety: all public methods may be called from any thread. Callbacks run on slot
// threads (or on the caller's thread for a Submit after Shutdown); they must not throw and
// must not call Shutdown or destroy the pool.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "eval/gpu_lease.h"
#include "eval/runner.h"
#include "eval/worker_process.h"
#include "sandbox/sandbox.h"

namespace ks {

struct WorkerPoolOptions {
  // Interpreter that runs the worker (looked up in PATH unless it contains '/').
  std::string python = "python3";
  // Directory holding kernelsmith_worker/, prepended to the worker's PYTHONPATH. Empty: the
  // resources' python/ (FindResources), or nothing when the worker is installed (pip).
  std::string worker_pythonpath;
  // Arguments after the interpreter. Empty: {"-m", "kernelsmith_worker"}.
  std::vector<std::string> worker_args;
  // GPUs to use. Empty: CPU-only; CUDA_VISIBLE_DEVICES is left as it is.
  std::vector<int> gpus;
  // Workers per GPU (total workers when `gpus` is empty). Must be >= 1.
  int slots_per_gpu = 1;
  // Deadlines in seconds (see WorkerConfig for when each runs). Must be > 0.
  double handshake_timeout_s = 120;
  double load_timeout_s = 300;
  double correctness_timeout_s = 180;
  double audit_timeout_s = 120;
  double timing_timeout_s = 300;
  // How long a worker may wait for the GPU lease before its request fails (infra_error).
  double lease_wait_timeout_s = 1800;
  // Where the pool's scratch directory ("kernelsmith-XXXXXX", one subdirectory per worker) is
  // created. Empty: $TMPDIR, or /tmp. The pool's directory is removed on Shutdown.
  std::string scratch_root;
  // Extra environment for workers; overrides the engine's environment and PYTHONPATH,
  // PYTHONUNBUFFERED, CUDA_VISIBLE_DEVICES (but not KS_PROTO_IN/KS_PROTO_OUT/TMPDIR).
  std::map<std::string, std::string> env;
  // stdout/stderr bytes kept per worker (each); results carry the last 4 KiB per request.
  size_t tail_bytes = 64 * 1024;
  // How workers are confined (sandbox/sandbox.h, docs/security.md). The environment variable
  // KS_SANDBOX (on, off, no-netns, no-landlock) is applied on top. Mechanisms this machine
  // lacks are dropped with a warning on stderr.
  SandboxOptions sandbox;
};

class WorkerPool : public Runner {
 public:
  // Validates `options` (InvalidArgument naming the bad field) and creates the scratch
  // directory (IOError). Starts the slot threads; workers start lazily.
  static Result<std::unique_ptr<WorkerPool>> Create(WorkerPoolOptions options);
  ~WorkerPool() override;  // Shutdown()

  // The hello message of a worker (docs/protocol.md), starting one if none has said hello
  // yet; it then serves the first request. An error says why no worker could start (program
  // not found, import error, protocol mismatch, no hello in time) and ends with the worker's
  // stderr tail (e.g. "No module named torch").
  Result<nlohmann::json> Hello();

  // Queues the request. After Shutdown, `done` runs at once with infra_error
  // "pool is shut down".
  void Submit(EvalRequest request, Callback done) override;
  // Stops accepting requests, finishes the queued ones, asks each worker to exit (killing it
  // after ~5 s), joins the slot threads and removes the scratch directory. Idempotent.
  void Shutdown() override;

  // Number of slots (workers that may run at once).
  size_t slot_count() const { return slots_.size(); }
  // Scratch directory of this pool (for tests and diagnostics).
  const std::string& scratch_dir() const { return scratch_dir_; }
  // The sandbox as applied on this machine (fallbacks and their warnings included).
  const SandboxPlan& sandbox_plan() const { return *sandbox_; }

 private:
  struct Job {
    EvalRequest request;
    Callback done;
  };
  struct Slot {
    size_t index = 0;
    int gpu = -1;               // -1: CPU-only
    GpuLease* lease = nullptr;  // shared by all slots of the same GPU
    std::thread thread;
  };

  explicit WorkerPool(WorkerPoolOptions options);
  void SlotLoop(Slot* slot);
  // Starts a worker for `gpu` (-1: CPU-only). On failure stores the stderr tail.
  Result<std::unique_ptr<WorkerProcess>> StartWorker(int gpu, std::string* stderr_tail);
  // A worker for `gpu`: the spare one Hello() started if it fits, else a new one (*fresh).
  Result<std::unique_ptr<WorkerProcess>> TakeOrStartWorker(int gpu, std::string* stderr_tail,
                                                           bool* fresh);

  const WorkerPoolOptions options_;
  std::string scratch_dir_;
  std::map<std::string, std::string> worker_env_;  // every worker's environment additions
  std::shared_ptr<const SandboxPlan> sandbox_;
  std::vector<std::unique_ptr<GpuLease>> leases_;
  std::vector<std::unique_ptr<Slot>> slots_;

  std::mutex mu_;  // guards everything below
  std::condition_variable work_cv_;
  std::deque<Job> queue_;
  bool stopping_ = false;
  std::unique_ptr<WorkerProcess> spare_;  // started by Hello(), not yet taken by a slot
  int spare_gpu_ = -1;
  std::optional<nlohmann::json> hello_;  // the first hello any worker sent
  uint64_t next_request_ = 1;
  uint64_t next_worker_ = 1;

  std::mutex hello_mu_;     // serializes Hello() so only one spare is started
  std::mutex shutdown_mu_;  // serializes Shutdown()
  bool shut_down_ = false;  // guarded by shutdown_mu_
};

}  // namespace ks
