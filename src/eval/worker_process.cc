#include "eval/worker_process.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "eval/build_cache.h"
#include "sandbox/processes.h"

namespace ks {
namespace {

using std::chrono::milliseconds;

// Max bytes taken from one fd per Pump, so a flood on one stream cannot starve the others.
constexpr size_t kReadChunk = size_t{4} << 20;
// How often the poll loop wakes to check for an exited worker whose pipes a grandchild holds.
constexpr milliseconds kPollInterval(50);
// While a worker waits for the lease, how often the loop retries the lease.
constexpr milliseconds kLeasePollInterval(5);
// How often the sandbox's process/memory watchdog looks at a busy worker.
constexpr milliseconds kWatchInterval(100);

std::string FormatSeconds(double s) { return fmt::format("{:g} s", s); }

std::chrono::steady_clock::duration Seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::max(0.0, s)));
}

std::string Excerpt(const std::string& line) {
  return SanitizeUtf8(line.size() <= 200 ? line : line.substr(0, 200));
}

void RemoveDir(const std::string& dir) {
  std::error_code ec;
  if (!dir.empty()) std::filesystem::remove_all(dir, ec);
}

}  // namespace

WorkerProcess::WorkerProcess(WorkerConfig config)
    : config_(std::move(config)), stdout_(config_.tail_bytes), stderr_(config_.tail_bytes) {}

WorkerProcess::~WorkerProcess() {
  if (proc_ != nullptr) proc_->KillAndReap();
  KillUserNamespace(userns_inode_);
  proc_.reset();
  RemoveDir(config_.scratch_dir);
}

Result<std::unique_ptr<WorkerProcess>> WorkerProcess::Start(WorkerConfig config,
                                                            std::string* stderr_tail) {
  std::unique_ptr<WorkerProcess> w(new WorkerProcess(std::move(config)));
  std::error_code ec;
  std::filesystem::create_directories(w->config_.scratch_dir, ec);
  if (ec) {
    return Status::IOError("cannot create the worker scratch directory '" + w->config_.scratch_dir +
                           "': " + ec.message());
  }
  SubprocessOptions options;
  options.argv = w->config_.argv;
  options.env = w->config_.env;
  options.env["KS_PROTO_IN"] = std::to_string(kProtoInFd);
  options.env["KS_PROTO_OUT"] = std::to_string(kProtoOutFd);
  options.env["TMPDIR"] = w->config_.scratch_dir;
  // The loader binds every library call at load and never writes a relocation slot again, so
  // the worker can tell a slot that candidate native code rewrote (got_guard.py).
  options.env["LD_BIND_NOW"] = "1";
  options.cwd = w->config_.scratch_dir;
  options.child_read_fds = {kProtoInFd};
  options.child_write_fds = {kProtoOutFd};
  std::unique_ptr<WorkerSandbox> sandbox;
  if (w->config_.sandbox != nullptr && w->config_.sandbox->options.enabled) {
    Result<std::unique_ptr<WorkerSandbox>> sb =
        WorkerSandbox::Prepare(*w->config_.sandbox, w->config_.scratch_dir);
    if (!sb.ok()) return Status::IOError("cannot sandbox the worker: " + sb.status().message());
    sandbox = std::move(*sb);
    options.child_setup = sandbox.get();
  }
  Result<std::unique_ptr<Subprocess>> proc = Subprocess::Spawn(options);
  if (!proc.ok()) return proc.status();  // names the program and why it cannot run
  w->proc_ = std::move(*proc);
  if (w->config_.sandbox != nullptr && w->config_.sandbox->options.network_namespace) {
    w->userns_inode_ = UserNamespaceInode(w->proc_->pid());
  }

  Status s = w->Handshake();
  if (!s.ok()) {
    if (stderr_tail != nullptr) *stderr_tail = SanitizeUtf8(w->stderr_.Tail(kResultTailBytes));
    return s;  // `w` goes out of scope: killed, scratch removed
  }
  return w;
}

Status WorkerProcess::Handshake() {
  const auto deadline = Clock::now() + Seconds(config_.handshake_timeout_s);
  std::string line;
  while (true) {
    Status s = Pump(std::min<Clock::duration>(deadline - Clock::now(), kPollInterval));
    bool ended = false;
    if (s.ok()) s = CheckEnded(&ended);
    if (!s.ok()) {
      KillAndDrain();
      return Status::Protocol("worker handshake failed: " + s.message());
    }
    if (lines_.Next(&line)) {
      Result<WorkerMessage> m = DecodeWorkerMessage(line);
      std::string problem;
      if (!m.ok()) {
        problem = "worker wrote an invalid protocol line before hello: " + Excerpt(line) + " (" +
                  m.status().message() + ")";
      } else if (m->type != WorkerMessage::Type::kHello) {
        problem = "worker sent a message other than hello first: " + Excerpt(line);
      } else if (m->protocol != kProtocolVersion) {
        problem = fmt::format(
            "worker speaks protocol version {} but this engine speaks version {}; the worker "
            "(python/kernelsmith_worker) and the engine must come from the same kernelsmith "
            "checkout",
            m->protocol, kProtocolVersion);
      } else {
        hello_ = std::move(m->body);
        return Status::Ok();
      }
      KillAndDrain();
      return Status::Protocol(problem);
    }
    if (ended) return Status::Protocol(CollectDeath() + " before saying hello");
    if (Clock::now() >= deadline) {
      KillAndDrain();
      return Status::Timeout("worker did not say hello within " +
                             FormatSeconds(config_.handshake_timeout_s) +
                             "; the worker was killed");
    }
  }
}

Status WorkerProcess::Pump(Clock::duration max_wait) {
  struct pollfd fds[4];
  int kinds[4];  // child fd each entry stands for
  int n = 0;
  for (int child_fd : {kProtoOutFd, 1, 2}) {
    int fd = proc_->ParentFd(child_fd);
    if (fd >= 0) {
      fds[n] = {fd, POLLIN, 0};
      kinds[n++] = child_fd;
    }
  }
  int in_fd = proc_->ParentFd(kProtoInFd);
  if (!outbox_.empty() && in_fd >= 0) {
    fds[n] = {in_fd, POLLOUT, 0};
    kinds[n++] = kProtoInFd;
  }
  auto ms = std::chrono::duration_cast<milliseconds>(max_wait).count();
  int ready = poll(fds, static_cast<nfds_t>(n), static_cast<int>(std::max<int64_t>(0, ms)));
  if (ready <= 0) return Status::Ok();  // timeout or EINTR: the caller loops

  for (int i = 0; i < n; ++i) {
    if (fds[i].revents == 0) continue;
    const int child_fd = kinds[i];
    if (child_fd == kProtoInFd) {
      Result<size_t> w = Subprocess::WriteAvailable(fds[i].fd, outbox_);
      if (w.ok()) {
        outbox_.erase(0, *w);
      } else {  // the worker closed its end: it is exiting or broken
        outbox_.clear();
        proc_->CloseParentFd(kProtoInFd);
        proto_eof_ = true;
      }
      continue;
    }
    std::string data;
    Result<ReadOutcome> r = Subprocess::ReadAvailable(fds[i].fd, &data, kReadChunk);
    if (child_fd == kProtoOutFd) {
      proto_bytes_read_ += data.size();
      Status s = lines_.Append(data);
      if (!s.ok()) return s;
    } else {
      (child_fd == 1 ? stdout_ : stderr_).Append(data);
    }
    if (!r.ok() || r->eof) {
      proc_->CloseParentFd(child_fd);
      if (child_fd == kProtoOutFd) proto_eof_ = true;
    }
  }
  return Status::Ok();
}

Status WorkerProcess::CheckEnded(bool* ended) {
  *ended = proto_eof_ || proc_->PollExit().has_value();
  // An exited worker's last messages may still sit in the pipe: read them all.
  for (int i = 0; *ended && !proto_eof_ && i < 64; ++i) {
    const uint64_t before = proto_bytes_read_;
    Status s = Pump(milliseconds(0));
    if (!s.ok()) return s;
    if (proto_bytes_read_ == before) break;
  }
  return Status::Ok();
}

void WorkerProcess::KillAndDrain() {
  proc_->KillAndReap();
  KillUserNamespace(userns_inode_);  // what left the process group (setsid) but not the sandbox
  proc_->CloseParentFd(kProtoInFd);
  proc_->CloseParentFd(kProtoOutFd);
  // The group is dead, so stdout/stderr reach EOF unless something outside the group holds
  // them; do not wait long for that.
  const auto deadline = Clock::now() + milliseconds(500);
  while ((proc_->stdout_fd() >= 0 || proc_->stderr_fd() >= 0) && Clock::now() < deadline) {
    Pump(milliseconds(20));
  }
  proc_->CloseParentFd(1);
  proc_->CloseParentFd(2);
  outbox_.clear();
  proto_eof_ = true;
}

std::string WorkerProcess::CollectDeath() {
  std::optional<ExitStatus> exit = proc_->WaitExitFor(milliseconds(1000));
  KillAndDrain();
  if (!exit.has_value()) return "worker closed its protocol channel and was killed";
  if (exit->signaled && exit->signal == SIGXCPU && config_.sandbox != nullptr) {
    return fmt::format("worker died with SIGXCPU (over the sandbox's CPU time limit of {} per "
                       "request)",
                       FormatSeconds(config_.sandbox->options.cpu_seconds_per_request));
  }
  if (exit->signaled) return "worker died with " + SignalName(exit->signal);
  return "worker exited with code " + std::to_string(exit->code);
}

double WorkerProcess::StageLimit(const std::string& stage) const {
  if (stage == "correctness") return config_.correctness_timeout_s;
  if (stage == "audit") return config_.audit_timeout_s;
  if (stage == "timing") return config_.timing_timeout_s;
  return config_.load_timeout_s;
}

std::string WorkerProcess::CheckLimits() {
  return SandboxLimitExceeded(config_.sandbox->options, proc_->pid(), userns_inode_, "worker");
}

bool WorkerProcess::Healthy() {
  if (proto_eof_ || proc_->PollExit().has_value()) return false;
  if (!Pump(milliseconds(0)).ok() || proto_eof_) return false;
  // Anything on the protocol channel between requests is a protocol violation.
  if (lines_.pending_bytes() > 0) return false;
  std::string line;
  return !lines_.Next(&line) && !proc_->PollExit().has_value();
}

WorkerProcess::Outcome WorkerProcess::Evaluate(const EvalRequest& request, const std::string& id,
                                               GpuLease* lease) {
  Outcome out;
  const uint64_t stdout_mark = stdout_.total();
  const uint64_t stderr_mark = stderr_.total();
  const auto sent = Clock::now();
  outbox_ += EncodeEvalRequest(request, id);
  const bool watch = config_.sandbox != nullptr && config_.sandbox->options.enabled;
  if (watch && config_.sandbox->options.cpu_seconds_per_request > 0) {
    // Best effort: a worker whose limit cannot be set still has its wall-clock deadlines.
    Status armed = ArmCpuLimit(proc_->pid(), config_.sandbox->options.cpu_seconds_per_request);
    (void)armed;
  }
  auto next_watch = sent + kWatchInterval;

  std::string stage = "load";
  std::string deadline_stage = "load";
  auto deadline = sent + Seconds(config_.load_timeout_s);
  std::optional<GpuLease::Ticket> ticket;
  bool granted = false;
  auto lease_deadline = Clock::time_point::max();
  Clock::time_point granted_at;
  double held_s = 0;  // seconds the device was held exclusively for this request
  auto release = [&] {
    if (!ticket.has_value()) return;
    if (granted) held_s += std::chrono::duration<double>(Clock::now() - granted_at).count();
    lease->Release(*ticket);
    ticket.reset();
    granted = false;
  };

  auto finish = [&](EvalResult r) {
    release();
    r.device_seconds = held_s;
    r.duration_s = std::chrono::duration<double>(Clock::now() - sent).count();
    r.stdout_tail = SanitizeUtf8(stdout_.TailSince(stdout_mark, kResultTailBytes));
    r.stderr_tail = SanitizeUtf8(stderr_.TailSince(stderr_mark, kResultTailBytes));
    if (r.backend.empty()) r.backend = request.backend;
    if (r.problem.path.empty()) r.problem.path = request.problem_path;
    if (r.candidate.path.empty()) r.candidate.path = request.candidate_path;
    out.result = std::move(r);
    return std::move(out);
  };
  // change times are coarse (a clock tick): a second early, so nothing written at the start
  // of the request is missed
  const auto sent_wall = std::chrono::system_clock::now() - std::chrono::seconds(1);
  auto fail = [&](EvalStatus status, const std::string& message) {
    release();  // before the (bounded) drain
    KillAndDrain();
    std::string why = message;
    if (!config_.build_cache.empty()) {
      // the worker's own end-of-request check did not run: what the candidate put in the
      // shared build cache must not reach the next worker
      std::vector<std::string> removed = RemoveReplacedBuilds(config_.build_cache, sent_wall);
      if (!removed.empty()) {
        why += "; the request replaced " + std::to_string(removed.size()) + " librar" +
               (removed.size() == 1 ? "y" : "ies") +
               " in the shared build cache (removed: " + removed.front() +
               (removed.size() > 1 ? ", ..." : "") + ")";
      }
    }
    return finish(EvalResult::Failure(status, why));
  };

  std::string line;
  while (true) {
    auto now = Clock::now();
    if (ticket.has_value() && !granted) {
      if (lease->TryAcquire(*ticket)) {
        granted = true;
        granted_at = now;
        outbox_ += EncodeLeaseGranted(id);
        deadline = now + Seconds(config_.timing_timeout_s);
        deadline_stage = "timing";
      } else if (now >= lease_deadline) {
        return fail(EvalStatus::kInfraError,
                    "worker waited more than " + FormatSeconds(config_.lease_wait_timeout_s) +
                        " for the GPU lease (other evaluations held it); the worker was killed");
      }
    }
    const bool waiting = ticket.has_value() && !granted;
    if (!waiting && now >= deadline) {
      return fail(EvalStatus::kTimeout, deadline_stage + " stage exceeded " +
                                            FormatSeconds(StageLimit(deadline_stage)) +
                                            "; the worker was killed");
    }
    auto wait = waiting ? Clock::duration(kLeasePollInterval)
                        : std::min<Clock::duration>(deadline - now, kPollInterval);
    Status s = Pump(wait);
    bool ended = false;
    if (s.ok()) s = CheckEnded(&ended);
    if (!s.ok()) {
      return fail(EvalStatus::kCrash, "worker wrote an invalid protocol line: " + s.message());
    }
    if (watch && !ended && Clock::now() >= next_watch) {
      next_watch = Clock::now() + kWatchInterval;
      std::string over = CheckLimits();
      if (!over.empty()) return fail(EvalStatus::kCrash, over);
    }
    while (lines_.Next(&line)) {
      Result<WorkerMessage> m = DecodeWorkerMessage(line);
      std::string problem;
      if (!m.ok()) {
        problem = m.status().message();
      } else if (m->type == WorkerMessage::Type::kHello) {
        problem = "unexpected hello";
      } else if (m->id != id) {
        problem = "id '" + m->id + "' but the request in flight is '" + id + "'";
      }
      if (!problem.empty()) {
        return fail(EvalStatus::kCrash, "worker wrote an invalid protocol line: " + Excerpt(line) +
                                            " (" + problem + ")");
      }
      out.started = true;
      now = Clock::now();
      switch (m->type) {
        case WorkerMessage::Type::kStage:
          stage = m->stage;
          if (!ticket.has_value() || granted) {
            deadline = now + Seconds(StageLimit(stage));
            deadline_stage = stage;
          }
          break;
        case WorkerMessage::Type::kLease:
          if (m->lease_acquire) {
            if (granted) {
              outbox_ += EncodeLeaseGranted(id);  // already held: grant again
            } else if (!ticket.has_value()) {
              ticket = lease->Enqueue();
              lease_deadline = now + Seconds(config_.lease_wait_timeout_s);
            }
          } else if (ticket.has_value()) {
            release();
            if (deadline_stage == "timing" && stage != "timing") {
              deadline = now + Seconds(StageLimit(stage));
              deadline_stage = stage;
            }
          }
          break;
        case WorkerMessage::Type::kResult: {
          release();
          Result<EvalResult> r = Status::Internal("unparsed");
          try {
            r = EvalResult::FromJson(m->result);
          } catch (const std::exception& e) {
            r = Status::Protocol(e.what());
          }
          if (!r.ok()) {
            return fail(EvalStatus::kCrash,
                        "worker sent a malformed result: " + r.status().message());
          }
          // Output printed just before the result may still sit in the pipes.
          for (int i = 0; i < 8; ++i) {
            uint64_t before = stdout_.total() + stderr_.total();
            if (!Pump(milliseconds(0)).ok()) break;
            if (stdout_.total() + stderr_.total() == before) break;
          }
          out.replace = m->worker_poisoned;
          return finish(std::move(*r));
        }
        case WorkerMessage::Type::kHello:
          break;
      }
    }
    if (ended) return fail(EvalStatus::kCrash, CollectDeath() + " during stage " + stage);
  }
}

void WorkerProcess::Shutdown(std::chrono::milliseconds grace) {
  if (proto_eof_) {
    KillAndDrain();
    return;
  }
  outbox_ += EncodeShutdown();
  const auto deadline = Clock::now() + grace;
  std::string line;
  while (Clock::now() < deadline && !proc_->PollExit().has_value()) {
    if (!Pump(std::min<Clock::duration>(deadline - Clock::now(), kPollInterval)).ok()) break;
    while (lines_.Next(&line)) {
    }
  }
  KillAndDrain();
}

}  // namespace ks
