#include "core/subprocess.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

namespace ks {
namespace {

using std::chrono::milliseconds;

// Reads `fd` until EOF (or 10 s), returning everything read.
std::string ReadToEof(int fd) {
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    struct pollfd p = {fd, POLLIN, 0};
    poll(&p, 1, 100);
    Result<ReadOutcome> r = Subprocess::ReadAvailable(fd, &out, 1 << 20);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok() || r->eof) break;
  }
  return out;
}

// Options running `argv` with extra child fds the child reads (`in`) and writes (`out`).
SubprocessOptions Opts(std::vector<std::string> argv, std::vector<int> in = {},
                       std::vector<int> out = {}) {
  SubprocessOptions o;
  o.argv = std::move(argv);
  o.child_read_fds = std::move(in);
  o.child_write_fds = std::move(out);
  return o;
}

std::unique_ptr<Subprocess> MustSpawn(SubprocessOptions options) {
  Result<std::unique_ptr<Subprocess>> p = Subprocess::Spawn(options);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? std::move(*p) : nullptr;
}

// True once `pid` no longer exists or is a zombie awaiting its new parent.
bool ProcessGone(pid_t pid) {
  if (kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z';
}

TEST(SubprocessTest, CapturesStdoutStderrAndExitCode) {
  auto p = MustSpawn(Opts({"sh", "-c", "echo out; echo err >&2; exit 3"}));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(ReadToEof(p->stdout_fd()), "out\n");
  EXPECT_EQ(ReadToEof(p->stderr_fd()), "err\n");
  ExitStatus e = p->KillAndReap();
  EXPECT_FALSE(e.signaled);
  EXPECT_EQ(e.code, 3);
  EXPECT_EQ(e.ToString(), "exit code 3");
}

TEST(SubprocessTest, StdinIsDevNull) {
  auto p = MustSpawn(Opts({"cat"}));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(ReadToEof(p->stdout_fd()), "");
  EXPECT_TRUE(p->WaitExitFor(milliseconds(5000)).value_or(ExitStatus{true, 0, 9}).success());
}

TEST(SubprocessTest, EnvironmentAndWorkingDirectory) {
  SubprocessOptions o = Opts({"sh", "-c", "echo \"$KS_TEST_VAR\"; pwd"});
  o.env = {{"KS_TEST_VAR", "forty two"}};
  o.cwd = "/";
  auto p = MustSpawn(o);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(ReadToEof(p->stdout_fd()), "forty two\n/\n");
}

TEST(SubprocessTest, ExtraPipesMapToChildFds) {
  auto p = MustSpawn(Opts({"sh", "-c", "read line <&3; echo \"got $line\" >&4"}, {3}, {4}));
  ASSERT_NE(p, nullptr);
  Result<size_t> w = Subprocess::WriteAvailable(p->ParentFd(3), "ping\n");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(*w, 5u);
  EXPECT_EQ(ReadToEof(p->ParentFd(4)), "got ping\n");
  EXPECT_TRUE(p->KillAndReap().success());
}

TEST(SubprocessTest, ChildInheritsOnlyItsOwnFds) {
  // Another child's pipes exist while this one starts, and the parent holds an fd opened
  // without O_CLOEXEC (as third-party code may); none of them may leak into the child.
  auto other = MustSpawn(Opts({"sleep", "30"}, {3}));
  ASSERT_NE(other, nullptr);
  int leaky = open("/dev/null", O_RDONLY);
  ASSERT_GE(leaky, 0);
  auto p = MustSpawn(Opts({"sh", "-c", "ls /proc/$$/fd"}, {}, {4}));
  close(leaky);
  ASSERT_NE(p, nullptr);
  std::istringstream fds(ReadToEof(p->stdout_fd()));
  std::string fd;
  while (fds >> fd) EXPECT_TRUE(fd == "0" || fd == "1" || fd == "2" || fd == "4") << fd;
}

TEST(SubprocessTest, MissingProgramIsAnIOError) {
  Result<std::unique_ptr<Subprocess>> p =
      Subprocess::Spawn(Opts({"ks-no-such-program-xyz", "--version"}));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Status::Code::kIOError);
  EXPECT_NE(p.status().message().find("ks-no-such-program-xyz"), std::string::npos);
  EXPECT_NE(p.status().message().find("No such file"), std::string::npos);
}

TEST(SubprocessTest, ReportsSignal) {
  auto p = MustSpawn(Opts({"sh", "-c", "kill -SEGV $$"}));
  ASSERT_NE(p, nullptr);
  std::optional<ExitStatus> e = p->WaitExitFor(milliseconds(5000));
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(e->signaled);
  EXPECT_EQ(e->signal, SIGSEGV);
  EXPECT_EQ(e->ToString(), "signal SIGSEGV");
  // PollExit does not reap, KillAndReap keeps the real status.
  EXPECT_EQ(p->KillAndReap().signal, SIGSEGV);
}

TEST(SubprocessTest, KillAndReapKillsTheWholeGroup) {
  auto p = MustSpawn(Opts({"sh", "-c", "sleep 100 & echo $!; wait"}));
  ASSERT_NE(p, nullptr);
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    struct pollfd pfd = {p->stdout_fd(), POLLIN, 0};
    poll(&pfd, 1, 100);
    ASSERT_TRUE(Subprocess::ReadAvailable(p->stdout_fd(), &line, 1024).ok());
  }
  pid_t grandchild = std::stoi(line);
  ASSERT_GT(grandchild, 0);
  EXPECT_FALSE(ProcessGone(grandchild));
  EXPECT_FALSE(p->PollExit().has_value());
  ExitStatus e = p->KillAndReap();
  EXPECT_TRUE(e.signaled);
  EXPECT_EQ(e.signal, SIGKILL);
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = ProcessGone(grandchild);
    if (!gone) std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_TRUE(gone);
  EXPECT_EQ(p->KillAndReap().signal, SIGKILL);  // idempotent
}

TEST(SubprocessTest, WriteToClosedReaderFailsWithoutSigpipe) {
  auto p = MustSpawn(Opts({"true"}, {3}));
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->WaitExitFor(milliseconds(5000)).has_value());
  Result<size_t> w = Subprocess::WriteAvailable(p->ParentFd(3), "data\n");
  EXPECT_FALSE(w.ok());  // and the test process is still alive
  EXPECT_EQ(w.status().code(), Status::Code::kIOError);
}

TEST(SubprocessTest, WriteStopsWhenThePipeIsFull) {
  auto p = MustSpawn(Opts({"sleep", "30"}, {3}));
  ASSERT_NE(p, nullptr);
  std::string big(4 << 20, 'x');
  Result<size_t> w = Subprocess::WriteAvailable(p->ParentFd(3), big);
  ASSERT_TRUE(w.ok());
  EXPECT_GT(*w, 0u);
  EXPECT_LT(*w, big.size());
}

TEST(SubprocessTest, RejectsBadFdMaps) {
  EXPECT_FALSE(Subprocess::Spawn(Opts({"true"}, {1})).ok());
  EXPECT_FALSE(Subprocess::Spawn(Opts({"true"}, {3}, {3})).ok());
  EXPECT_FALSE(Subprocess::Spawn(Opts({})).ok());
}

// A ChildSetup that lowers RLIMIT_NOFILE, or fails with `err` at a named step.
class TestSetup : public ChildSetup {
 public:
  explicit TestSetup(int err) : err_(err) {}
  int Apply(const char** step) const noexcept override {
    if (err_ != 0) {
      *step = "test step";
      return err_;
    }
    struct rlimit rl = {77, 77};
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
      *step = "setrlimit";
      return errno;
    }
    return 0;
  }

 private:
  int err_;
};

TEST(SubprocessTest, ChildSetupRunsBeforeExecWithTheSameFdsAndGroup) {
  TestSetup setup(0);
  SubprocessOptions o = Opts({"sh", "-c",
                              "read line <&3; echo \"$line $(ulimit -n)\" >&4; ls /proc/$$/fd; "
                              "sleep 100 & echo pid $!; wait"},
                             {3}, {4});
  o.child_setup = &setup;
  auto p = MustSpawn(o);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(getpgid(p->pid()), p->pid());  // its own process group
  ASSERT_TRUE(Subprocess::WriteAvailable(p->ParentFd(3), "ping\n").ok());
  std::string line, out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (out.find("pid ") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    struct pollfd pfd[2] = {{p->ParentFd(4), POLLIN, 0}, {p->stdout_fd(), POLLIN, 0}};
    poll(pfd, 2, 100);
    ASSERT_TRUE(Subprocess::ReadAvailable(p->ParentFd(4), &line, 1024).ok());
    ASSERT_TRUE(Subprocess::ReadAvailable(p->stdout_fd(), &out, 1024).ok());
  }
  EXPECT_EQ(line, "ping 77\n");  // the setup ran before exec (RLIMIT_NOFILE 77)
  std::istringstream fds(out.substr(0, out.find("pid ")));
  std::string fd;
  while (fds >> fd) EXPECT_TRUE(fd == "0" || fd == "1" || fd == "2" || fd == "3" || fd == "4") << fd;
  const pid_t grandchild = std::stoi(out.substr(out.find("pid ") + 4));
  EXPECT_TRUE(p->KillAndReap().signaled);
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = ProcessGone(grandchild);
    if (!gone) std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_TRUE(gone);
}

TEST(SubprocessTest, ChildSetupFailureIsAnIOErrorNamingTheStep) {
  TestSetup setup(EPERM);
  SubprocessOptions o = Opts({"true"});
  o.child_setup = &setup;
  Result<std::unique_ptr<Subprocess>> p = Subprocess::Spawn(o);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Status::Code::kIOError);
  EXPECT_NE(p.status().message().find("test step failed: Operation not permitted"),
            std::string::npos)
      << p.status().message();
  TestSetup ok(0);
  SubprocessOptions missing = Opts({"ks-no-such-program-xyz"});
  missing.child_setup = &ok;
  p = Subprocess::Spawn(missing);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("No such file"), std::string::npos);
}

}  // namespace
}  // namespace ks
