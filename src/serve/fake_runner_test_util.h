// TEST ONLY: a Runner fake for the serve tests. Each submitted request waits until the test
// releases it (or, with auto_release, finishes at once) and gets a result the test composes
// from the candidate's source: "speedup=X" in the source gives status ok with that speedup,
// "status=NAME" another status, "device_seconds=X" that many seconds of exclusive device time,
// "gpu_seconds=X" that many seconds of work on the GPU.
// With a baseline (its own "speedup=X", default 1) the result is timed against it instead.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "eval/runner.h"

namespace ks {

class FakeRunner : public Runner {
 public:
  explicit FakeRunner(bool auto_release = true) : auto_release_(auto_release) {}
  ~FakeRunner() override { Shutdown(); }

  void Submit(EvalRequest request, Callback done) override {
    std::unique_lock<std::mutex> lock(mu_);
    submitted_.push_back(request);
    if (auto_release_) {
      lock.unlock();
      done(ResultFor(request));
      return;
    }
    pending_.push_back({std::move(request), std::move(done)});
    cv_.notify_all();
  }
  void Shutdown() override { ReleaseAll(); }

  // Finishes the oldest pending request; false if none is pending.
  bool ReleaseOne() {
    std::unique_lock<std::mutex> lock(mu_);
    if (pending_.empty()) return false;
    auto job = std::move(pending_.front());
    pending_.pop_front();
    lock.unlock();
    job.second(ResultFor(job.first));
    return true;
  }
  void ReleaseAll() {
    while (ReleaseOne()) {
    }
  }
  // Waits until `n` requests are pending (up to 5 s).
  bool WaitPending(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(5), [&] { return pending_.size() >= n; });
  }
  size_t pending() {
    std::lock_guard<std::mutex> lock(mu_);
    return pending_.size();
  }
  std::vector<EvalRequest> submitted() {
    std::lock_guard<std::mutex> lock(mu_);
    return submitted_;
  }

  static EvalResult ResultFor(const EvalRequest& r) {
    std::smatch m;
    EvalResult out;
    out.backend = r.backend;
    out.candidate.path = r.candidate_path;
    out.status = EvalStatus::kOk;
    if (std::regex_search(r.candidate_source, m, std::regex("status=([a-z_]+)"))) {
      Result<EvalStatus> s = ParseEvalStatus(m[1]);
      if (s.ok()) out.status = *s;
      out.message = "fake " + m[1].str();
    }
    if (std::regex_search(r.candidate_source, m, std::regex("speedup=([0-9.]+)"))) {
      out.speedup = std::stod(m[1]);
      out.ref_us = 100.0;
      out.cand_us = 100.0 / *out.speedup;
    }
    if (!r.baseline_source.empty() && out.speedup) {
      // timed against the baseline instead of the reference, as the worker does
      double base = 1.0;
      std::smatch b;
      if (std::regex_search(r.baseline_source, b, std::regex("speedup=([0-9.]+)"))) {
        base = std::stod(b[1]);
      }
      BaselineComparison vs;
      vs.path = r.baseline_path;
      vs.speedup = *out.speedup / base;
      vs.speedup_ci_lo = vs.speedup * 0.99;
      vs.speedup_ci_hi = vs.speedup * 1.01;
      out.vs_baseline = vs;
      out.speedup.reset();
      out.ref_us.reset();
      out.cand_us.reset();
    }
    if (std::regex_search(r.candidate_source, m, std::regex("device_seconds=([0-9.]+)"))) {
      out.device_seconds = std::stod(m[1]);
    }
    if (std::regex_search(r.candidate_source, m, std::regex("gpu_seconds=([0-9.]+)"))) {
      out.gpu_seconds = std::stod(m[1]);
    }
    return out;
  }

 private:
  const bool auto_release_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<EvalRequest, Callback>> pending_;
  std::vector<EvalRequest> submitted_;
};

}  // namespace ks
