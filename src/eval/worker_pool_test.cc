#include "eval/worker_pool.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "core/file.h"
#include "core/resources.h"

namespace ks {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr char kFakeWorker[] = KS_SOURCE_DIR "/src/eval/testdata/fake_worker.py";

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// A fresh directory for one test's files, removed at the end.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ks-pool-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

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

std::unique_ptr<WorkerPool> MustCreate(WorkerPoolOptions o) {
  Result<std::unique_ptr<WorkerPool>> pool = WorkerPool::Create(std::move(o));
  EXPECT_TRUE(pool.ok()) << pool.status().ToString();
  return pool.ok() ? std::move(*pool) : nullptr;
}

// A request whose candidate source scripts the fake worker.
EvalRequest Script(json script) {
  EvalRequest r;
  r.problem_path = "problem.py";
  r.candidate_path = "candidate.py";
  r.candidate_source = script.dump();
  r.backend = "cpu";
  return r;
}

int WorkerPid(const EvalResult& r) { return r.device.value("pid", -1); }

bool ProcessGone(pid_t pid) {
  if (kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z';
}

bool EventuallyGone(pid_t pid) {
  for (int i = 0; i < 300; ++i) {
    if (ProcessGone(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(WorkerPoolTest, WellBehavedWorkerServesRequestsAndIsReused) {
  auto pool = MustCreate(FakeOptions());
  ASSERT_NE(pool, nullptr);
  Result<json> hello = pool->Hello();
  ASSERT_TRUE(hello.ok()) << hello.status().ToString();
  EXPECT_EQ((*hello)["protocol"], 1);
  const int pid = (*hello)["pid"];

  EvalResult first = pool->Evaluate(Script({{"speedup", 2.5}, {"print", "first-output"}}));
  EXPECT_EQ(first.status, EvalStatus::kOk) << first.message;
  EXPECT_EQ(first.speedup, 2.5);
  EXPECT_EQ(first.message, "echo: cpu");
  EXPECT_EQ(first.backend, "cpu");
  EXPECT_EQ(first.candidate.path, "candidate.py");
  EXPECT_EQ(first.candidate.sha256.size(), 64u);
  EXPECT_NE(first.candidate.sha256, first.problem.sha256);
  EXPECT_TRUE(Contains(first.feedback, "2.500x")) << first.feedback;
  EXPECT_GT(first.duration_s, 0);
  EXPECT_EQ(WorkerPid(first), pid);
  EXPECT_TRUE(Contains(first.stdout_tail, "first-output"));
  EXPECT_TRUE(Contains(first.stderr_tail, "first-output"));
  // Environment: private scratch dir as cwd and TMPDIR, PYTHONPATH set, no GPU pinning.
  const std::string cwd = first.device["cwd"];
  EXPECT_EQ(cwd.rfind(pool->scratch_dir() + "/", 0), 0u) << cwd;
  EXPECT_EQ(first.device["tmpdir"], cwd);
  EXPECT_TRUE(first.device["cuda_visible_devices"].is_null() ||
              first.device["cuda_visible_devices"] == json(getenv("CUDA_VISIBLE_DEVICES")));
  const std::string pythonpath = first.device["pythonpath"];
  EXPECT_EQ(pythonpath.rfind(FindResources()->python_dir, 0), 0u) << pythonpath;

  EvalResult second = pool->Evaluate(Script({{"status", "incorrect"}, {"print", "second"}}));
  EXPECT_EQ(second.status, EvalStatus::kIncorrect);
  EXPECT_EQ(WorkerPid(second), pid);
  EXPECT_TRUE(Contains(second.stdout_tail, "second"));
  EXPECT_FALSE(Contains(second.stdout_tail, "first-output"));  // this request's output only

  EvalRequest untimed = Script({});
  untimed.timing = false;
  EXPECT_EQ(pool->Evaluate(untimed).status, EvalStatus::kOk);

  const std::string scratch = pool->scratch_dir();
  pool->Shutdown();
  EXPECT_TRUE(EventuallyGone(pid));
  EXPECT_FALSE(std::filesystem::exists(scratch));
  EvalResult late = pool->Evaluate(Script({}));
  EXPECT_EQ(late.status, EvalStatus::kInfraError);
  EXPECT_EQ(late.message, "pool is shut down");
}

TEST(WorkerPoolTest, CrashIsReportedAndWorkerReplaced) {
  auto pool = MustCreate(FakeOptions());
  ASSERT_NE(pool, nullptr);
  Result<json> hello = pool->Hello();
  ASSERT_TRUE(hello.ok()) << hello.status().ToString();
  const int crashed_pid = (*hello)["pid"];
  EvalResult crash = pool->Evaluate(Script({{"mode", "crash"}, {"print", "before-crash"}}));
  EXPECT_EQ(crash.status, EvalStatus::kCrash);
  EXPECT_EQ(crash.message, "worker died with SIGSEGV during stage correctness");
  EXPECT_TRUE(Contains(crash.stderr_tail, "before-crash"));
  EXPECT_TRUE(ProcessGone(crashed_pid));
  EvalResult next = pool->Evaluate(Script({}));
  EXPECT_EQ(next.status, EvalStatus::kOk);
  EXPECT_NE(WorkerPid(next), crashed_pid);

  EvalResult exited = pool->Evaluate(Script({{"mode", "exit"}}));
  EXPECT_EQ(exited.status, EvalStatus::kCrash);
  EXPECT_EQ(exited.message, "worker exited with code 3 during stage correctness");

  // A result written just before the worker exits still counts; the next request gets a new
  // worker without blame.
  EvalResult last_words = pool->Evaluate(Script({{"mode", "exit_after_result"}}));
  EXPECT_EQ(last_words.status, EvalStatus::kOk) << last_words.message;
  EXPECT_EQ(pool->Evaluate(Script({})).status, EvalStatus::kOk);

  EvalResult a = pool->Evaluate(Script({}));
  EvalResult poison = pool->Evaluate(Script({{"mode", "poison"}}));
  EvalResult b = pool->Evaluate(Script({}));
  EXPECT_EQ(a.status, EvalStatus::kOk);
  EXPECT_EQ(poison.status, EvalStatus::kOk);  // delivered as reported, then replaced
  EXPECT_EQ(WorkerPid(poison), WorkerPid(a));
  EXPECT_EQ(b.status, EvalStatus::kOk);
  EXPECT_NE(WorkerPid(b), WorkerPid(a));
  EXPECT_TRUE(EventuallyGone(WorkerPid(a)));
}

TEST(WorkerPoolTest, HangTimesOutAndKillsTheWholeGroup) {
  TempDir tmp;
  WorkerPoolOptions o = FakeOptions();
  o.correctness_timeout_s = 1;
  o.timing_timeout_s = 0.5;
  auto pool = MustCreate(o);
  ASSERT_NE(pool, nullptr);
  auto start = Clock::now();
  EvalResult hang =
      pool->Evaluate(Script({{"mode", "hang"}, {"child_pid_file", tmp.File("child.pid")}}));
  EXPECT_LT(SecondsSince(start), 4.0);
  EXPECT_EQ(hang.status, EvalStatus::kTimeout);
  EXPECT_EQ(hang.message, "correctness stage exceeded 1 s; the worker was killed");
  std::ifstream pid_file(tmp.File("child.pid"));
  int child = 0;
  pid_file >> child;
  ASSERT_GT(child, 0);
  EXPECT_TRUE(EventuallyGone(child));

  EvalResult timing = pool->Evaluate(Script({{"mode", "hang"}, {"hang_stage", "timing"}}));
  EXPECT_EQ(timing.status, EvalStatus::kTimeout);
  EXPECT_EQ(timing.message, "timing stage exceeded 0.5 s; the worker was killed");

  EXPECT_EQ(pool->Evaluate(Script({})).status, EvalStatus::kOk);
}

TEST(WorkerPoolTest, ALibraryReplacedInTheBuildCacheByAKilledRequestIsRemoved) {
  TempDir tmp;
  WorkerPoolOptions o = FakeOptions();
  o.correctness_timeout_s = 1;
  o.env["KS_CACHE_DIR"] = tmp.path();
  const std::string slot = tmp.File("cpu_ext/0123abcd");
  std::filesystem::create_directories(slot);
  const std::string lib = slot + "/libks_pc_sample.so";
  ASSERT_TRUE(WriteFileAtomic(lib, "built").ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // built before the requests
  auto pool = MustCreate(o);
  ASSERT_NE(pool, nullptr);
  // a request that ends with a result: the worker's own check is the one that looks
  EvalResult ok = pool->Evaluate(Script({{"replace_file", lib}}));
  EXPECT_EQ(ok.status, EvalStatus::kOk);
  EXPECT_TRUE(std::filesystem::exists(lib));
  // killed before any check of its own: the engine removes what was put in place
  EvalResult hang = pool->Evaluate(Script({{"mode", "hang"}, {"replace_file", lib}}));
  EXPECT_EQ(hang.status, EvalStatus::kTimeout);
  EXPECT_FALSE(std::filesystem::exists(lib));
  EXPECT_TRUE(Contains(hang.message, "replaced 1 library in the shared build cache"))
      << hang.message;
  EXPECT_EQ(pool->Evaluate(Script({})).status, EvalStatus::kOk);
}

TEST(WorkerPoolTest, ProtocolViolationsAreCrashes) {
  auto pool = MustCreate(FakeOptions());
  ASSERT_NE(pool, nullptr);
  EvalResult garbage = pool->Evaluate(Script({{"mode", "garbage"}}));
  EXPECT_EQ(garbage.status, EvalStatus::kCrash);
  EXPECT_TRUE(Contains(garbage.message, "worker wrote an invalid protocol line: this is not json"))
      << garbage.message;
  EvalResult wrong_id = pool->Evaluate(Script({{"mode", "wrong_id"}}));
  EXPECT_EQ(wrong_id.status, EvalStatus::kCrash);
  EXPECT_TRUE(Contains(wrong_id.message, "invalid protocol line")) << wrong_id.message;
  EvalResult malformed = pool->Evaluate(Script({{"mode", "malformed"}}));
  EXPECT_EQ(malformed.status, EvalStatus::kCrash);
  EXPECT_TRUE(Contains(malformed.message, "worker sent a malformed result")) << malformed.message;
  EvalResult closed = pool->Evaluate(Script({{"mode", "close"}}));
  EXPECT_EQ(closed.status, EvalStatus::kCrash);
  EXPECT_TRUE(Contains(closed.message, "closed its protocol channel")) << closed.message;
  EXPECT_EQ(pool->Evaluate(Script({})).status, EvalStatus::kOk);
}

TEST(WorkerPoolTest, SlowHandshakeIsInfraErrorAndPoolRecovers) {
  TempDir tmp;
  std::ofstream(tmp.File("slow-once")) << "x";
  WorkerPoolOptions o = FakeOptions();
  o.handshake_timeout_s = 1;
  o.env["FAKE_SLOW_HELLO_FILE"] = tmp.File("slow-once");
  auto pool = MustCreate(o);
  ASSERT_NE(pool, nullptr);
  auto start = Clock::now();
  EvalResult slow = pool->Evaluate(Script({}));
  EXPECT_LT(SecondsSince(start), 4.0);
  EXPECT_EQ(slow.status, EvalStatus::kInfraError);
  EXPECT_TRUE(Contains(slow.message, "did not say hello within 1 s")) << slow.message;
  EXPECT_EQ(pool->Evaluate(Script({})).status, EvalStatus::kOk);
}

TEST(WorkerPoolTest, HelloExplainsWhyNoWorkerStarts) {
  WorkerPoolOptions mismatch = FakeOptions();
  mismatch.env["FAKE_PROTOCOL"] = "2";
  auto pool = MustCreate(mismatch);
  ASSERT_NE(pool, nullptr);
  Result<json> hello = pool->Hello();
  ASSERT_FALSE(hello.ok());
  EXPECT_TRUE(Contains(hello.status().message(), "protocol version 2")) << hello.status().message();
  EvalResult r = pool->Evaluate(Script({}));
  EXPECT_EQ(r.status, EvalStatus::kInfraError);
  EXPECT_TRUE(Contains(r.message, "protocol version 2"));

  WorkerPoolOptions import_error = FakeOptions();
  import_error.worker_args = {"-c", "import no_such_module_for_ks_test"};
  pool = MustCreate(import_error);
  ASSERT_NE(pool, nullptr);
  hello = pool->Hello();
  ASSERT_FALSE(hello.ok());
  EXPECT_TRUE(Contains(hello.status().message(), "exited with code 1 before saying hello"));
  EXPECT_TRUE(Contains(hello.status().message(), "No module named 'no_such_module_for_ks_test'"))
      << hello.status().message();
  r = pool->Evaluate(Script({}));
  EXPECT_EQ(r.status, EvalStatus::kInfraError);
  EXPECT_TRUE(Contains(r.stderr_tail, "No module named")) << r.stderr_tail;

  WorkerPoolOptions missing = FakeOptions();
  missing.python = "ks-no-such-python-xyz";
  pool = MustCreate(missing);
  ASSERT_NE(pool, nullptr);
  hello = pool->Hello();
  ASSERT_FALSE(hello.ok());
  EXPECT_EQ(hello.status().code(), Status::Code::kIOError);
  EXPECT_TRUE(Contains(hello.status().message(), "ks-no-such-python-xyz"));
}

TEST(WorkerPoolTest, HugeOutputIsDrainedAndCapped) {
  auto pool = MustCreate(FakeOptions());
  ASSERT_NE(pool, nullptr);
  EvalResult r = pool->Evaluate(Script({{"mode", "spam"}, {"spam_mb", 200}}));
  EXPECT_EQ(r.status, EvalStatus::kOk) << r.message;
  EXPECT_LE(r.stdout_tail.size(), 4096u);
  EXPECT_LE(r.stderr_tail.size(), 4096u);
  EXPECT_TRUE(r.stdout_tail.ends_with("oooEND-OF-STDOUT\n")) << r.stdout_tail.substr(4000);
  EXPECT_TRUE(r.stderr_tail.ends_with("eeeEND-OF-STDERR\n"));
}

TEST(WorkerPoolTest, Validation) {
  WorkerPoolOptions o = FakeOptions();
  o.slots_per_gpu = 0;
  EXPECT_EQ(WorkerPool::Create(o).status().code(), Status::Code::kInvalidArgument);
  o = FakeOptions();
  o.timing_timeout_s = 0;
  EXPECT_EQ(WorkerPool::Create(o).status().code(), Status::Code::kInvalidArgument);
  o = FakeOptions();
  o.scratch_root = "/nonexistent-dir-for-ks-test";
  EXPECT_EQ(WorkerPool::Create(o).status().code(), Status::Code::kIOError);
}

}  // namespace
}  // namespace ks
