// The fault corpus (tests/faults/manifest.json) through one real WorkerPool: real Python
// workers, cpu backend, the sandbox on. Every fault must produce exactly one result with the
// status the manifest names, crashed or hung workers must be replaced, the pool must keep
// serving (an honest candidate after every fault), and the engine's memory must stay bounded.
// GPU-only entries run through the CLI: tests/faults/run.sh BINARY --gpu.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>

#include "core/file.h"
#include "eval/worker_pool.h"

namespace ks {
namespace {

using nlohmann::json;
const std::string kCorpus = KS_SOURCE_DIR "/tests/faults";

// The engine's resident memory (VmRSS of /proc/self/status), in bytes.
uint64_t SelfRssBytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

// The pid the honest candidate printed ("worker-pid=N"), or -1.
int HonestPid(const EvalResult& r) {
  std::smatch m;
  static const std::regex re("worker-pid=([0-9]+)");
  return std::regex_search(r.stdout_tail, m, re) ? std::stoi(m[1]) : -1;
}

// A loopback TCP listener that counts the connections it accepted.
class Listener {
 public:
  Listener() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in a = {};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    listen(fd_, 8);
    socklen_t len = sizeof(a);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~Listener() { close(fd_); }
  int port() const { return port_; }
  int Accepted() {
    int n = 0;
    for (int c; (c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC)) >= 0; ++n) close(c);
    return n;
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Submits and waits, counting how often each request's callback ran.
class CountingRunner {
 public:
  explicit CountingRunner(WorkerPool* pool) : pool_(pool) {}
  EvalResult Evaluate(EvalRequest r) {
    auto calls = std::make_shared<std::atomic<int>>(0);
    calls_.push_back(calls);
    std::mutex mu;
    std::condition_variable cv;
    std::optional<EvalResult> out;
    pool_->Submit(std::move(r), [&, calls](EvalResult res) {
      calls->fetch_add(1);
      std::lock_guard<std::mutex> lock(mu);
      if (!out.has_value()) out = std::move(res);
      cv.notify_all();
    });
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return out.has_value(); });
    return std::move(*out);
  }
  // Every submitted request got exactly one callback.
  bool EachExactlyOnce() const {
    for (const auto& c : calls_) {
      if (c->load() != 1) return false;
    }
    return !calls_.empty();
  }

 private:
  WorkerPool* pool_;
  std::vector<std::shared_ptr<std::atomic<int>>> calls_;
};

EvalRequest Request(const std::string& candidate, const std::string& backend) {
  EvalRequest r;
  r.problem_path = kCorpus + "/problem.py";
  r.problem_source = *ReadFile(r.problem_path);
  r.candidate_path = kCorpus + "/" + candidate;
  Result<std::string> source = ReadFile(r.candidate_path);
  EXPECT_TRUE(source.ok()) << source.status().ToString();
  r.candidate_source = source.ok() ? *source : "";
  r.backend = backend;
  r.trials = 2;
  r.timing = false;
  return r;
}

bool Gone(pid_t pid) {
  for (int i = 0; i < 300; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    if (text.empty() || text.find(") Z") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(WorkerPoolFaultsTest, CorpusSurvivesOnePool) {
  Result<std::string> text = ReadFile(kCorpus + "/manifest.json");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  const json manifest = json::parse(*text);

  char outside_tmpl[] = "/tmp/ks-fault-outside-XXXXXX";  // stands in for the run directory
  ASSERT_NE(mkdtemp(outside_tmpl), nullptr);
  const std::string outside = outside_tmpl;
  Listener listener;

  WorkerPoolOptions o;
  o.handshake_timeout_s = 120;
  o.load_timeout_s = 60;  // cold cpu_ext compiles on a busy 2-core machine
  o.correctness_timeout_s = 10;  // generous: CI machines are shared and slow
  o.audit_timeout_s = 30;
  o.timing_timeout_s = 30;
  // A torch worker starts at ~0.6 GiB, and a forked child counts its shared pages again
  // (setsid_escape): 2 GiB leaves room for both; the memory blow-up still reaches it.
  o.sandbox.max_rss_bytes = uint64_t{2} << 30;
  o.sandbox.max_processes = 64;
  o.sandbox.max_file_bytes = uint64_t{64} << 20;
  o.env["KS_FAULT_OUTSIDE"] = outside;
  o.env["KS_FAULT_PORT"] = std::to_string(listener.port());
  Result<std::unique_ptr<WorkerPool>> created = WorkerPool::Create(o);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  std::unique_ptr<WorkerPool> pool = std::move(*created);
  const SandboxPlan& plan = pool->sandbox_plan();
  CountingRunner runner(pool.get());

  EvalResult warm = runner.Evaluate(Request(manifest["honest"], "cpu"));
  ASSERT_EQ(warm.status, EvalStatus::kOk) << warm.message << "\n" << warm.stderr_tail;
  int pid = HonestPid(warm);
  ASSERT_GT(pid, 0) << warm.stdout_tail;
  const uint64_t rss_before = SelfRssBytes();

  int survived = 0, total = 0;
  for (const json& f : manifest["faults"]) {
    if (f.value("gpu", false)) continue;
    const std::string file = f["file"];
    // What needs a sandbox mechanism this machine lacks is skipped, and said so.
    if ((file.find("network") != std::string::npos && !plan.options.network_namespace &&
         !plan.landlock_denies_tcp) ||
        (file.find("outside") != std::string::npos && !plan.options.landlock)) {
      std::cout << "skipped " << file << ": the sandbox cannot block it here\n";
      continue;
    }
    ++total;
    SCOPED_TRACE(file);
    EvalResult r = runner.Evaluate(Request(file, f["backend"]));
    std::vector<std::string> expect = f["expect"];
    const std::string status = EvalStatusName(r.status);
    bool right = std::find(expect.begin(), expect.end(), status) != expect.end();
    EXPECT_TRUE(right) << status << ": " << r.message << "\n" << r.stderr_tail.substr(0, 2000);
    const std::string message = f.value("message", "");
    EXPECT_NE(r.message.find(message), std::string::npos) << r.message;
    right = right && r.message.find(message) != std::string::npos;
    EXPECT_LE(r.stdout_tail.size(), 4096u);
    EXPECT_LE(r.stderr_tail.size(), 4096u);

    EvalResult honest = runner.Evaluate(Request(manifest["honest"], "cpu"));
    EXPECT_EQ(honest.status, EvalStatus::kOk) << "pool no longer serves: " << honest.message;
    const int next_pid = HonestPid(honest);
    if (f.value("replaced", false)) {
      EXPECT_NE(next_pid, pid) << "worker not replaced";
      EXPECT_TRUE(Gone(pid)) << "old worker " << pid << " still alive";
    }
    right = right && honest.status == EvalStatus::kOk;
    pid = next_pid;
    if (file.find("setsid") != std::string::npos) {
      std::smatch m;
      std::regex re("escapee-pid=([0-9]+)");
      ASSERT_TRUE(std::regex_search(r.stderr_tail, m, re)) << r.stderr_tail;
      EXPECT_TRUE(Gone(std::stoi(m[1])) || !plan.options.network_namespace)
          << "a process that left the group outlived its worker";
    }
    if (right) ++survived;
  }
  EXPECT_FALSE(std::filesystem::exists(outside + "/run.db")) << "a candidate wrote outside";
  EXPECT_EQ(listener.Accepted(), 0) << "a candidate reached the network";
  const uint64_t rss_after = SelfRssBytes();
  // Gigabytes went through the pipes; the engine keeps tails only.
  EXPECT_LT(rss_after, rss_before + (uint64_t{64} << 20))
      << "engine RSS grew from " << rss_before << " to " << rss_after;
  pool->Shutdown();
  EXPECT_TRUE(runner.EachExactlyOnce());
  std::cout << "faults survived " << survived << "/" << total << " (sandbox: " << plan.Describe()
            << "; engine RSS " << (rss_before >> 20) << " -> " << (rss_after >> 20) << " MiB)\n";
  EXPECT_EQ(survived, total);
  std::error_code ec;
  std::filesystem::remove_all(outside, ec);
}

}  // namespace
}  // namespace ks
