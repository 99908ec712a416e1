// WorkerPool with several slots: GPU lease serialization and exactly-one-result delivery.
#include <gtest/gtest.h>

#include <cstdlib>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "eval/worker_pool.h"

namespace ks {
namespace {

using nlohmann::json;

constexpr char kFakeWorker[] = KS_SOURCE_DIR "/src/eval/testdata/fake_worker.py";

WorkerPoolOptions FakeOptions() {
  WorkerPoolOptions o;
  o.worker_args = {kFakeWorker};
  o.handshake_timeout_s = 10;
  o.load_timeout_s = 10;
  o.correctness_timeout_s = 10;
  o.audit_timeout_s = 10;
  o.timing_timeout_s = 10;
  // The fake worker is trusted test code that leaves marker files in the test's directory
  // under $TMPDIR: keep the sandbox on, with that directory writable too.
  o.sandbox.writable_paths = DefaultWritablePaths();
  const char* tmp = std::getenv("TMPDIR");
  o.sandbox.writable_paths.push_back(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp");
  return o;
}

EvalRequest Script(json script) {
  EvalRequest r;
  r.candidate_path = "candidate.py";
  r.candidate_source = script.dump();
  return r;
}

// Collects results delivered by callbacks, by request index.
class Collector {
 public:
  Runner::Callback For(int index) {
    return [this, index](EvalResult r) {
      std::lock_guard<std::mutex> lock(mu_);
      results_[index].push_back(std::move(r));
      ++delivered_;
      cv_.notify_all();
    };
  }
  // Waits until `n` results arrived (or 20 s passed); true if they did.
  bool WaitFor(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(20), [&] { return delivered_ >= n; });
  }
  std::map<int, std::vector<EvalResult>> results() {
    std::lock_guard<std::mutex> lock(mu_);
    return results_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int delivered_ = 0;
  std::map<int, std::vector<EvalResult>> results_;
};

TEST(WorkerPoolConcurrencyTest, LeaseSerializesTimingOnOneGpu) {
  std::string log_dir = (std::filesystem::temp_directory_path() / "ks-lease-XXXXXX").string();
  ASSERT_NE(mkdtemp(log_dir.data()), nullptr);
  WorkerPoolOptions o = FakeOptions();
  o.gpus = {0};
  o.slots_per_gpu = 2;
  o.env["FAKE_LEASE_LOG_DIR"] = log_dir;
  Result<std::unique_ptr<WorkerPool>> pool = WorkerPool::Create(o);
  ASSERT_TRUE(pool.ok()) << pool.status().ToString();
  ASSERT_EQ((*pool)->slot_count(), 2u);
  Collector c;
  const int kRequests = 4;
  for (int i = 0; i < kRequests; ++i) {
    (*pool)->Submit(Script({{"timing_sleep", 0.3}}), c.For(i));
  }
  ASSERT_TRUE(c.WaitFor(kRequests));
  std::set<int> pids;
  for (auto& [index, results] : c.results()) {
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].status, EvalStatus::kOk) << results[0].message;
    EXPECT_EQ(results[0].device["cuda_visible_devices"], "0");
    // the lease was held through the fake's 0.3 s of timing, and only within the request
    EXPECT_GE(results[0].device_seconds, 0.29);
    EXPECT_LE(results[0].device_seconds, results[0].duration_s);
    pids.insert(results[0].device["pid"].get<int>());
  }
  EXPECT_EQ(pids.size(), 2u);  // both slots worked, so timing could have overlapped

  std::vector<std::pair<double, double>> spans;
  for (const auto& entry : std::filesystem::directory_iterator(log_dir)) {
    std::ifstream f(entry.path());
    double acquired = 0, released = 0;
    f >> acquired >> released;
    spans.emplace_back(acquired, released);
  }
  std::filesystem::remove_all(log_dir);
  ASSERT_EQ(spans.size(), static_cast<size_t>(kRequests));
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i) {
    EXPECT_LE(spans[i - 1].second, spans[i].first) << "timing spans overlap at " << i;
  }
}

TEST(WorkerPoolConcurrencyTest, LeaseWaitTimeoutIsInfraError) {
  WorkerPoolOptions o = FakeOptions();
  o.slots_per_gpu = 2;  // CPU-only: one lease for the pool
  o.lease_wait_timeout_s = 0.3;
  Result<std::unique_ptr<WorkerPool>> pool = WorkerPool::Create(o);
  ASSERT_TRUE(pool.ok()) << pool.status().ToString();
  Collector c;
  (*pool)->Submit(Script({{"timing_sleep", 1.0}}), c.For(0));
  (*pool)->Submit(Script({{"timing_sleep", 1.0}}), c.For(1));
  ASSERT_TRUE(c.WaitFor(2));
  int ok = 0, waited = 0;
  for (auto& [index, results] : c.results()) {
    ASSERT_EQ(results.size(), 1u);
    if (results[0].status == EvalStatus::kOk) ++ok;
    if (results[0].status == EvalStatus::kInfraError &&
        results[0].message.find("for the GPU lease") != std::string::npos) {
      ++waited;
    }
  }
  EXPECT_EQ(ok, 1);
  EXPECT_EQ(waited, 1);
}

TEST(WorkerPoolConcurrencyTest, ExactlyOneResultPerRequestUnderFailures) {
  WorkerPoolOptions o = FakeOptions();
  o.slots_per_gpu = 3;
  o.correctness_timeout_s = 1;
  Result<std::unique_ptr<WorkerPool>> pool = WorkerPool::Create(o);
  ASSERT_TRUE(pool.ok()) << pool.status().ToString();
  const std::vector<std::pair<std::string, EvalStatus>> plan = {
      {"ok", EvalStatus::kOk},          {"crash", EvalStatus::kCrash},
      {"hang", EvalStatus::kTimeout},   {"garbage", EvalStatus::kCrash},
      {"poison", EvalStatus::kOk},      {"exit", EvalStatus::kCrash},
      {"wrong_id", EvalStatus::kCrash}, {"ok", EvalStatus::kOk},
      {"close", EvalStatus::kCrash},    {"malformed", EvalStatus::kCrash},
      {"hang", EvalStatus::kTimeout},   {"ok", EvalStatus::kOk},
      {"crash", EvalStatus::kCrash},    {"ok", EvalStatus::kOk},
  };
  Collector c;
  for (size_t i = 0; i < plan.size(); ++i) {
    (*pool)->Submit(Script({{"mode", plan[i].first}}), c.For(static_cast<int>(i)));
  }
  // Shutdown finishes the queued work before it returns.
  (*pool)->Shutdown();
  ASSERT_TRUE(c.WaitFor(static_cast<int>(plan.size())));
  std::map<int, std::vector<EvalResult>> results = c.results();
  ASSERT_EQ(results.size(), plan.size());
  for (size_t i = 0; i < plan.size(); ++i) {
    ASSERT_EQ(results[static_cast<int>(i)].size(), 1u) << "request " << i;
    const EvalResult& r = results[static_cast<int>(i)][0];
    EXPECT_EQ(r.status, plan[i].second)
        << "request " << i << " (" << plan[i].first << "): " << r.message;
  }
}

}  // namespace
}  // namespace ks
