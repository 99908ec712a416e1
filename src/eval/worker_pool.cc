#include "eval/worker_pool.h"

#include <errno.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/resources.h"
#include "core/sha256.h"
#include "eval/build_cache.h"
#include "eval/feedback.h"

namespace ks {
namespace {

constexpr std::chrono::milliseconds kShutdownGrace(5000);

// `status` with `message` in place of its message.
Status WithMessage(const Status& status, std::string message) {
  switch (status.code()) {
    case Status::Code::kInvalidArgument:
      return Status::InvalidArgument(std::move(message));
    case Status::Code::kNotFound:
      return Status::NotFound(std::move(message));
    case Status::Code::kIOError:
      return Status::IOError(std::move(message));
    case Status::Code::kTimeout:
      return Status::Timeout(std::move(message));
    case Status::Code::kProtocol:
      return Status::Protocol(std::move(message));
    case Status::Code::kOk:
    case Status::Code::kInternal:
      break;
  }
  return Status::Internal(std::move(message));
}

// The last non-blank line of `text`, trimmed.
std::string LastLine(const std::string& text) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  size_t start = text.rfind('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return text.substr(start, end + 1 - start);
}

// A failure result for `request` that never reached a worker.
EvalResult FailureFor(const EvalRequest& request, EvalStatus status, std::string message) {
  EvalResult r = EvalResult::Failure(status, std::move(message));
  r.backend = request.backend;
  r.problem.path = request.problem_path;
  r.candidate.path = request.candidate_path;
  return r;
}

std::string EnvOr(const char* name, std::string fallback) {
  const char* v = getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : std::move(fallback);
}

}  // namespace

Result<std::unique_ptr<WorkerPool>> WorkerPool::Create(WorkerPoolOptions options) {
  if (options.python.empty()) return Status::InvalidArgument("worker pool: python is empty");
  if (options.slots_per_gpu < 1) {
    return Status::InvalidArgument(
        fmt::format("worker pool: slots_per_gpu must be >= 1, got {}", options.slots_per_gpu));
  }
  for (int gpu : options.gpus) {
    if (gpu < 0) return Status::InvalidArgument(fmt::format("worker pool: bad GPU index {}", gpu));
  }
  const std::pair<const char*, double> timeouts[] = {
      {"handshake_timeout_s", options.handshake_timeout_s},
      {"load_timeout_s", options.load_timeout_s},
      {"correctness_timeout_s", options.correctness_timeout_s},
      {"audit_timeout_s", options.audit_timeout_s},
      {"timing_timeout_s", options.timing_timeout_s},
      {"lease_wait_timeout_s", options.lease_wait_timeout_s},
  };
  for (const auto& [name, value] : timeouts) {
    if (!(value > 0) || !std::isfinite(value)) {
      return Status::InvalidArgument(
          fmt::format("worker pool: {} must be a positive number of seconds, got {}", name, value));
    }
  }
  if (options.worker_pythonpath.empty()) {
    Result<Resources> resources = FindResources();
    if (!resources.ok()) return resources.status();
    options.worker_pythonpath = resources->python_dir;
  }
  if (options.worker_args.empty()) options.worker_args = {"-m", "kernelsmith_worker"};
  if (options.scratch_root.empty()) options.scratch_root = EnvOr("TMPDIR", "/tmp");
  Result<SandboxPlan> planned = PlanSandboxFromEnv(options.sandbox);
  if (!planned.ok()) return planned.status();
  auto plan = std::make_shared<SandboxPlan>(std::move(*planned));
  // Caches redirected for the workers only must stay writable for them.
  for (const char* var : {"KS_CACHE_DIR", "TRITON_CACHE_DIR", "TORCH_EXTENSIONS_DIR"}) {
    auto it = options.env.find(var);
    if (it == options.env.end() || it->second.empty()) continue;
    std::error_code ec;
    std::filesystem::create_directories(it->second, ec);
    plan->options.writable_paths.push_back(it->second);
  }
  for (const std::string& w : plan->warnings) fmt::print(stderr, "kernelsmith: warning: {}\n", w);

  std::string tmpl = options.scratch_root + "/kernelsmith-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    return Status::IOError("cannot create a scratch directory under '" + options.scratch_root +
                           "': " + std::string(strerror(errno)) +
                           " (set TMPDIR to a writable directory)");
  }

  std::unique_ptr<WorkerPool> pool(new WorkerPool(std::move(options)));
  pool->scratch_dir_ = tmpl;
  pool->sandbox_ = std::move(plan);
  std::map<std::string, std::string>& env = pool->worker_env_;
  std::string pythonpath = pool->options_.worker_pythonpath;
  std::string inherited = EnvOr("PYTHONPATH", "");
  if (!inherited.empty()) pythonpath += (pythonpath.empty() ? "" : ":") + inherited;
  if (!pythonpath.empty()) env["PYTHONPATH"] = pythonpath;
  env["PYTHONUNBUFFERED"] = "1";
  for (const auto& [key, value] : pool->options_.env) env[key] = value;
  const WorkerPoolOptions& o = pool->options_;
  std::map<int, GpuLease*> lease_of_gpu;
  if (o.gpus.empty()) pool->leases_.push_back(std::make_unique<GpuLease>());
  for (int gpu : o.gpus) {
    if (lease_of_gpu.count(gpu) == 0) {
      pool->leases_.push_back(std::make_unique<GpuLease>());
      lease_of_gpu[gpu] = pool->leases_.back().get();
    }
  }
  const size_t devices = std::max<size_t>(1, o.gpus.size());
  const size_t count = devices * static_cast<size_t>(o.slots_per_gpu);
  for (size_t i = 0; i < count; ++i) {
    auto slot = std::make_unique<Slot>();
    slot->index = i;
    slot->gpu = o.gpus.empty() ? -1 : o.gpus[i % o.gpus.size()];
    slot->lease = o.gpus.empty() ? pool->leases_[0].get() : lease_of_gpu[slot->gpu];
    pool->slots_.push_back(std::move(slot));
  }
  for (auto& slot : pool->slots_) {
    Slot* s = slot.get();
    WorkerPool* p = pool.get();
    s->thread = std::thread([p, s] { p->SlotLoop(s); });
  }
  return pool;
}

WorkerPool::WorkerPool(WorkerPoolOptions options) : options_(std::move(options)) {}

WorkerPool::~WorkerPool() { Shutdown(); }

Result<std::unique_ptr<WorkerProcess>> WorkerPool::StartWorker(int gpu, std::string* stderr_tail) {
  WorkerConfig c;
  c.argv.push_back(options_.python);
  c.argv.insert(c.argv.end(), options_.worker_args.begin(), options_.worker_args.end());
  c.env = worker_env_;
  if (gpu >= 0 && options_.env.count("CUDA_VISIBLE_DEVICES") == 0) {
    c.env["CUDA_VISIBLE_DEVICES"] = std::to_string(gpu);
  }
  uint64_t n;
  {
    std::lock_guard<std::mutex> lock(mu_);
    n = next_worker_++;
  }
  c.scratch_dir = scratch_dir_ + "/worker-" + std::to_string(n);
  c.tail_bytes = options_.tail_bytes;
  c.handshake_timeout_s = options_.handshake_timeout_s;
  c.load_timeout_s = options_.load_timeout_s;
  c.correctness_timeout_s = options_.correctness_timeout_s;
  c.audit_timeout_s = options_.audit_timeout_s;
  c.timing_timeout_s = options_.timing_timeout_s;
  c.lease_wait_timeout_s = options_.lease_wait_timeout_s;
  c.sandbox = sandbox_;
  auto cache = worker_env_.find("KS_CACHE_DIR");
  c.build_cache = CpuExtCacheRoot(cache == worker_env_.end() ? "" : cache->second);

  Result<std::unique_ptr<WorkerProcess>> w = WorkerProcess::Start(std::move(c), stderr_tail);
  if (w.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!hello_.has_value()) hello_ = (*w)->hello();
  }
  return w;
}

Result<std::unique_ptr<WorkerProcess>> WorkerPool::TakeOrStartWorker(int gpu,
                                                                     std::string* stderr_tail,
                                                                     bool* fresh) {
  *fresh = false;
  std::unique_ptr<WorkerProcess> spare;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (spare_ != nullptr && spare_gpu_ == gpu) spare = std::move(spare_);
  }
  if (spare != nullptr && spare->Healthy()) return spare;
  *fresh = true;
  return StartWorker(gpu, stderr_tail);
}

Result<nlohmann::json> WorkerPool::Hello() {
  std::lock_guard<std::mutex> hello_lock(hello_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return Status::InvalidArgument("pool is shut down");
    if (hello_.has_value()) return *hello_;
  }
  const int gpu = slots_[0]->gpu;
  std::string tail;
  Result<std::unique_ptr<WorkerProcess>> w = StartWorker(gpu, &tail);
  if (!w.ok()) {
    std::string message = w.status().message();
    if (!tail.empty()) message += "\nworker stderr (last lines):\n" + tail;
    return WithMessage(w.status(), std::move(message));
  }
  nlohmann::json hello = (*w)->hello();
  std::lock_guard<std::mutex> lock(mu_);
  if (!stopping_ && spare_ == nullptr) {
    spare_ = std::move(*w);
    spare_gpu_ = gpu;
  }
  return hello;
}

void WorkerPool::Submit(EvalRequest request, Callback done) {
  // Every result leaves the pool complete: file identities and the proposer's feedback.
  done = [problem_sha = Sha256Hex(request.problem_source),
          candidate_sha = Sha256Hex(request.candidate_source),
          inner = std::move(done)](EvalResult r) {
    r.problem.sha256 = problem_sha;
    r.candidate.sha256 = candidate_sha;
    r.feedback = BuildFeedback(r);
    inner(std::move(r));
  };
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_) {
      queue_.push_back(Job{std::move(request), std::move(done)});
      work_cv_.notify_one();
      return;
    }
  }
  done(FailureFor(request, EvalStatus::kInfraError, "pool is shut down"));
}

void WorkerPool::SlotLoop(Slot* slot) {
  std::unique_ptr<WorkerProcess> worker;
  while (true) {
    Job job;
    std::string id;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) break;
      job = std::move(queue_.front());
      queue_.pop_front();
      id = std::to_string(next_request_++);
    }
    // An idle worker may have died (or be dying) since its last request. If it ends before it
    // starts this one, that is not the candidate's doing: retry once on a fresh worker.
    for (int attempt = 0;; ++attempt) {
      bool fresh = false;
      if (worker != nullptr && !worker->Healthy()) worker.reset();
      if (worker == nullptr) {
        std::string tail;
        Result<std::unique_ptr<WorkerProcess>> w = TakeOrStartWorker(slot->gpu, &tail, &fresh);
        if (!w.ok()) {
          std::string message = w.status().message();
          std::string last = LastLine(tail);
          if (!last.empty()) message += ": " + last;
          EvalResult r = FailureFor(job.request, EvalStatus::kInfraError, std::move(message));
          r.stderr_tail = std::move(tail);
          job.done(std::move(r));
          break;
        }
        worker = std::move(*w);
      }
      WorkerProcess::Outcome out = worker->Evaluate(job.request, id, slot->lease);
      if (out.result.status == EvalStatus::kCrash && !out.started && !fresh && attempt == 0) {
        worker.reset();
        continue;
      }
      job.done(std::move(out.result));
      if (out.replace) worker.reset();
      break;
    }
  }
  if (worker != nullptr) worker->Shutdown(kShutdownGrace);
}

void WorkerPool::Shutdown() {
  std::lock_guard<std::mutex> shutdown_lock(shutdown_mu_);
  if (shut_down_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (auto& slot : slots_) {
    if (slot->thread.joinable()) slot->thread.join();
  }
  std::unique_ptr<WorkerProcess> spare;
  {
    std::lock_guard<std::mutex> lock(mu_);
    spare = std::move(spare_);
  }
  if (spare != nullptr) spare->Shutdown(kShutdownGrace);
  spare.reset();
  std::error_code ec;
  std::filesystem::remove_all(scratch_dir_, ec);
  shut_down_ = true;
}

}  // namespace ks
