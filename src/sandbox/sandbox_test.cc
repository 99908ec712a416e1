#include "sandbox/sandbox.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "core/subprocess.h"
#include "sandbox/processes.h"

namespace ks {
namespace {

using std::chrono::milliseconds;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ks-sandbox-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs `script` under sh with `plan` applied for a worker whose scratch directory is `scratch`
// (cwd); returns its exit status and stdout+stderr.
struct ChildRun {
  ExitStatus exit;
  std::string output;
};
ChildRun RunSandboxed(const SandboxPlan& plan, const std::string& scratch, const std::string& script) {
  Result<std::unique_ptr<WorkerSandbox>> sb = WorkerSandbox::Prepare(plan, scratch);
  EXPECT_TRUE(sb.ok()) << sb.status().ToString();
  SubprocessOptions o;
  o.argv = {"bash", "-c", script};
  o.cwd = scratch;
  o.child_setup = sb.ok() ? sb->get() : nullptr;
  Result<std::unique_ptr<Subprocess>> p = Subprocess::Spawn(o);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  ChildRun run;
  if (!p.ok()) return run;
  std::unique_ptr<Subprocess> proc = std::move(*p);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline &&
         (proc->stdout_fd() >= 0 || proc->stderr_fd() >= 0)) {
    for (int fd : {1, 2}) {
      if (proc->ParentFd(fd) < 0) continue;
      struct pollfd pfd = {proc->ParentFd(fd), POLLIN, 0};
      poll(&pfd, 1, 20);
      Result<ReadOutcome> r = Subprocess::ReadAvailable(proc->ParentFd(fd), &run.output, 1 << 20);
      if (!r.ok() || r->eof) proc->CloseParentFd(fd);
    }
  }
  std::optional<ExitStatus> e = proc->WaitExitFor(milliseconds(10000));
  run.exit = e.has_value() ? *e : proc->KillAndReap();
  return run;
}

SandboxPlan Plan(SandboxOptions o) {
  o.writable_paths = {"/dev"};
  return PlanSandbox(o);
}

// A loopback TCP listener; port() is where to connect.
class Listener {
 public:
  Listener() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
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

 private:
  int fd_ = -1;
  int port_ = 0;
};

TEST(SandboxTest, ParsesTheEnvironmentSwitch) {
  SandboxOptions o;
  ASSERT_TRUE(ApplySandboxEnv("no-netns,no-landlock", &o).ok());
  EXPECT_TRUE(o.enabled);
  EXPECT_FALSE(o.network_namespace);
  EXPECT_FALSE(o.landlock);
  ASSERT_TRUE(ApplySandboxEnv("off", &o).ok());
  EXPECT_FALSE(o.enabled);
  Status bad = ApplySandboxEnv("on,nonet", &o);
  EXPECT_EQ(bad.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(bad.message().find("'nonet'"), std::string::npos) << bad.message();
  EXPECT_TRUE(ApplySandboxEnv(nullptr, &o).ok());
}

TEST(SandboxTest, PlanDropsWhatTheMachineLacksWithAWarning) {
  const SandboxSupport& s = ProbeSandboxSupport();
  SandboxPlan plan = Plan(SandboxOptions{});
  EXPECT_EQ(plan.options.network_namespace, s.namespaces);
  EXPECT_EQ(plan.options.landlock, s.landlock_abi >= 1);
  const size_t missing = (s.namespaces ? 0 : 1) + (s.landlock_abi >= 1 ? 0 : 1);
  EXPECT_EQ(plan.warnings.size(), missing);
  EXPECT_GT(plan.options.max_rss_bytes, 0u);
  SandboxOptions off;
  off.enabled = false;
  EXPECT_EQ(Plan(off).Describe(), "sandbox off (KS_SANDBOX=off)");
}

TEST(SandboxTest, NetworkNamespaceCutsTheNetworkOff) {
  if (!ProbeSandboxSupport().namespaces) GTEST_SKIP() << ProbeSandboxSupport().namespaces_error;
  TempDir scratch;
  Listener listener;
  const std::string connect =
      "exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(listener.port()) + " && echo connected";
  SandboxOptions off;
  off.enabled = false;
  ChildRun open_net = RunSandboxed(Plan(off), scratch.path(), connect);
  EXPECT_TRUE(open_net.exit.success()) << open_net.output;  // the test can fail: without it, it connects
  ChildRun cut = RunSandboxed(Plan(SandboxOptions{}), scratch.path(), connect);
  EXPECT_FALSE(cut.exit.success()) << cut.output;
  EXPECT_EQ(cut.output.find("connected"), std::string::npos) << cut.output;
}

TEST(SandboxTest, LandlockMakesEverythingButScratchReadOnly) {
  if (ProbeSandboxSupport().landlock_abi < 1) GTEST_SKIP() << "no Landlock on this kernel";
  TempDir scratch, outside;
  const std::string script = "echo in > inside.txt && echo ok-inside; echo out > '" +
                             outside.path() + "/run.db' && echo wrote-outside; mkdir '" +
                             outside.path() + "/d' && echo made-dir; echo > /dev/null && echo dev";
  ChildRun run = RunSandboxed(Plan(SandboxOptions{}), scratch.path(), script);
  EXPECT_NE(run.output.find("ok-inside"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("dev"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("wrote-outside"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("made-dir"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("Permission denied"), std::string::npos) << run.output;
  EXPECT_FALSE(std::filesystem::exists(outside.path() + "/run.db"));
  EXPECT_TRUE(std::filesystem::exists(scratch.path() + "/inside.txt"));
}

TEST(SandboxTest, FileSizeLimitStopsABigWrite) {
  TempDir scratch;
  SandboxOptions o;
  o.max_file_bytes = 1 << 20;
  ChildRun run = RunSandboxed(Plan(o), scratch.path(), "head -c 4000000 /dev/zero > big.bin");
  EXPECT_FALSE(run.exit.success());
  EXPECT_LE(std::filesystem::file_size(scratch.path() + "/big.bin"), uint64_t{1} << 20);
}

TEST(SandboxTest, CpuBudgetKillsABusyLoop) {
  SubprocessOptions o;
  o.argv = {"sh", "-c", "while :; do :; done"};
  Result<std::unique_ptr<Subprocess>> p = Subprocess::Spawn(o);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_TRUE(ArmCpuLimit((*p)->pid(), 1).ok());
  // On a loaded machine the loop gets a fraction of a core: wait on CPU time, not wall time.
  std::optional<ExitStatus> e = (*p)->WaitExitFor(milliseconds(60000));
  ASSERT_TRUE(e.has_value()) << "still running after 60 s with a 1 s CPU budget";
  EXPECT_TRUE(e->signaled);
  EXPECT_TRUE(e->signal == SIGXCPU || e->signal == SIGKILL) << e->ToString();
}

TEST(SandboxTest, CensusCountsTheGroupAndTheSweepCatchesEscapees) {
  if (!ProbeSandboxSupport().namespaces) GTEST_SKIP() << ProbeSandboxSupport().namespaces_error;
  TempDir scratch;
  SandboxOptions o;
  o.landlock = false;
  SandboxPlan plan = Plan(o);
  Result<std::unique_ptr<WorkerSandbox>> sb = WorkerSandbox::Prepare(plan, scratch.path());
  ASSERT_TRUE(sb.ok());
  SubprocessOptions so;
  // Two children in the group, one that leaves it (setsid) and reports its pid.
  so.argv = {"bash", "-c", "sleep 60 & sleep 60 & setsid sleep 61 & echo $!; wait"};
  so.child_setup = sb->get();
  Result<std::unique_ptr<Subprocess>> p = Subprocess::Spawn(so);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (out.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    struct pollfd pfd = {(*p)->stdout_fd(), POLLIN, 0};
    poll(&pfd, 1, 50);
    ASSERT_TRUE(Subprocess::ReadAvailable((*p)->stdout_fd(), &out, 1024).ok());
  }
  const pid_t escapee = std::stoi(out);
  const pid_t pid = (*p)->pid();
  const uint64_t ns = UserNamespaceInode(pid);
  ASSERT_NE(ns, 0u);
  EXPECT_NE(ns, UserNamespaceInode(getpid()));
  std::this_thread::sleep_for(milliseconds(200));  // let setsid run
  EXPECT_EQ(MeasureProcesses(pid, 0).processes, 3);   // bash + 2 sleeps
  ProcessUsage all = MeasureProcesses(pid, ns);
  EXPECT_EQ(all.processes, 4);
  EXPECT_GT(all.rss_bytes, 0u);
  EXPECT_LT(all.rss_bytes, uint64_t{1} << 30);  // four shells and sleeps: megabytes
  (*p)->KillAndReap();
  EXPECT_EQ(kill(escapee, 0), 0) << "the escapee should survive the group kill";
  EXPECT_GE(KillUserNamespace(ns), 1);
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    std::ifstream stat("/proc/" + std::to_string(escapee) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    gone = text.empty() || text.find(") Z") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_TRUE(gone);
  EXPECT_EQ(KillUserNamespace(UserNamespaceInode(getpid())), 0);  // never our own
}

}  // namespace
}  // namespace ks
