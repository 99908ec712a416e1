#include "core/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <thread>

extern char** environ;

namespace ks {
namespace {

std::string ErrnoText(int err) { return std::string(strerror(err)); }

void CloseFd(int* fd) {
  if (*fd >= 0) {
    close(*fd);
    *fd = -1;
  }
}

// Returns `fd` moved to a number >= `min_fd` (close-on-exec), closing the original.
Result<int> MoveAbove(int fd, int min_fd) {
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, min_fd);
  int err = errno;
  close(fd);
  if (moved < 0) return Status::IOError("cannot duplicate a pipe fd: " + ErrnoText(err));
  return moved;
}

Status SetNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return Status::IOError("cannot make a pipe non-blocking: " + ErrnoText(errno));
  }
  return Status::Ok();
}

// The parent's environment with `overrides` applied, as "K=V" strings.
std::vector<std::string> BuildEnvironment(const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    size_t eq = entry.find('=');
    std::string key(entry.substr(0, eq));
    if (overrides.count(key) == 0) env.emplace_back(entry);
  }
  for (const auto& [key, value] : overrides) env.push_back(key + "=" + value);
  return env;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// RAII holders for the posix_spawn attribute objects.
struct SpawnAttr {
  posix_spawnattr_t attr;
  SpawnAttr() { posix_spawnattr_init(&attr); }
  ~SpawnAttr() { posix_spawnattr_destroy(&attr); }
};
struct FileActions {
  posix_spawn_file_actions_t actions;
  FileActions() { posix_spawn_file_actions_init(&actions); }
  ~FileActions() { posix_spawn_file_actions_destroy(&actions); }
};

ExitStatus FromWaitStatus(int status) {
  ExitStatus e;
  if (WIFSIGNALED(status)) {
    e.signaled = true;
    e.signal = WTERMSIG(status);
  } else if (WIFEXITED(status)) {
    e.code = WEXITSTATUS(status);
  }
  return e;
}

// The program `argv0` names: itself if it contains '/', else the first executable match in
// $PATH. Empty when there is none.
std::string ResolveProgram(const std::string& argv0) {
  if (argv0.find('/') != std::string::npos) return argv0;
  const char* path = getenv("PATH");
  std::string_view dirs = path != nullptr && *path != '\0' ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    std::string candidate = (dir.empty() ? "." : dir) + "/" + argv0;
    struct stat st;
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string_view::npos) return "";
    dirs.remove_prefix(colon + 1);
  }
}

// What a child that failed between fork and exec reports through its error pipe.
struct ChildFailure {
  int err = 0;
  char step[96] = {};
};

// The forked child: fds, signals, process group, cwd, `setup`, then exec. Never returns.
// Only async-signal-safe calls.
[[noreturn]] void RunChild(const std::vector<std::pair<int, int>>& child_ends, const char* cwd,
                           const ChildSetup* setup, int first_free, int error_fd,
                           const char* program, char* const* argv, char* const* envp) {
  ChildFailure failure;
  auto fail = [&](const char* step) {
    failure.err = errno;
    size_t n = 0;
    for (; step[n] != '\0' && n + 1 < sizeof(failure.step); ++n) failure.step[n] = step[n];
    ssize_t ignored = write(error_fd, &failure, sizeof(failure));
    (void)ignored;
    _exit(127);
  };
  setpgid(0, 0);
  struct sigaction dfl;
  memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);  // fails for KILL/STOP
  sigset_t empty_mask;
  sigemptyset(&empty_mask);
  sigprocmask(SIG_SETMASK, &empty_mask, nullptr);
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull < 0) fail("open /dev/null");
  if (devnull != 0) {
    if (dup2(devnull, 0) < 0) fail("dup2 stdin");
    close(devnull);
  }
  for (const auto& [target, fd] : child_ends) {
    if (dup2(fd, target) < 0) fail("dup2");
  }
  if (cwd[0] != '\0' && chdir(cwd) != 0) fail("chdir");
  if (setup != nullptr) {
    const char* step = "setup";
    int err = setup->Apply(&step);
    if (err != 0) {
      errno = err;
      fail(step);
    }
  }
  // Everything above the mapped fds goes, except the error pipe (close-on-exec).
  if (error_fd > first_free) close_range(static_cast<unsigned>(first_free),
                                         static_cast<unsigned>(error_fd - 1), 0);
  close_range(static_cast<unsigned>(error_fd + 1), ~0U, 0);
  execve(program, argv, envp);
  fail("exec");
  _exit(127);  // not reached
}

}  // namespace

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  if (abbrev == nullptr) return "signal " + std::to_string(sig);
  return std::string("SIG") + abbrev;
}

std::string ExitStatus::ToString() const {
  if (signaled) return "signal " + SignalName(signal);
  return "exit code " + std::to_string(code);
}

Result<pid_t> Subprocess::ForkExec(const SubprocessOptions& options,
                                   const std::vector<std::pair<int, int>>& child_ends,
                                   int first_free, char* const* argv, char* const* envp) {
  const std::string where = options.cwd.empty() ? "" : " in directory '" + options.cwd + "'";
  const std::string program = ResolveProgram(options.argv[0]);
  if (program.empty()) {
    return Status::IOError("cannot start '" + options.argv[0] + "'" + where + ": " +
                           ErrnoText(ENOENT) + " (is it installed and on PATH?)");
  }
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) {
    return Status::IOError("cannot create a pipe for a subprocess: " + ErrnoText(errno));
  }
  // Above every fd the child maps, so its dup2 sequence cannot clobber it.
  Result<int> error_fd = MoveAbove(error_pipe[1], first_free);
  if (!error_fd.ok()) {
    close(error_pipe[0]);
    return error_fd.status();
  }
  const pid_t pid = fork();
  if (pid == 0) {
    RunChild(child_ends, options.cwd.c_str(), options.child_setup, first_free, *error_fd,
             program.c_str(), argv, envp);
  }
  const int fork_err = errno;
  close(*error_fd);
  if (pid < 0) {
    close(error_pipe[0]);
    return Status::IOError("cannot start '" + options.argv[0] + "': fork failed: " +
                           ErrnoText(fork_err));
  }
  setpgid(pid, pid);  // also in the child; whichever runs first wins, both agree
  ChildFailure failure;
  ssize_t n;
  do {
    n = read(error_pipe[0], &failure, sizeof(failure));
  } while (n < 0 && errno == EINTR);
  close(error_pipe[0]);
  if (n <= 0) return pid;  // EOF: exec succeeded
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  failure.step[sizeof(failure.step) - 1] = '\0';
  return Status::IOError("cannot start '" + options.argv[0] + "'" + where + ": " +
                         failure.step + " failed: " + ErrnoText(failure.err) +
                         (std::string_view(failure.step) == "exec"
                              ? " (is it installed and executable?)"
                              : ""));
}

Result<std::unique_ptr<Subprocess>> Subprocess::Spawn(const SubprocessOptions& options) {
  if (options.argv.empty() || options.argv[0].empty()) {
    return Status::InvalidArgument("cannot start a subprocess: empty command");
  }
  std::set<int> targets = {0, 1, 2};
  for (int fd : options.child_read_fds) targets.insert(fd);
  for (int fd : options.child_write_fds) targets.insert(fd);
  if (targets.size() != 3 + options.child_read_fds.size() + options.child_write_fds.size() ||
      *targets.begin() < 0) {
    return Status::InvalidArgument("subprocess extra fds must be distinct numbers >= 3");
  }
  const int first_free = *targets.rbegin() + 1;

  std::unique_ptr<Subprocess> proc(new Subprocess());
  // (child fd, child-side end) pairs to dup2 in the child. The child ends are closed in the
  // parent on every path out of this function.
  std::vector<std::pair<int, int>> child_ends;
  struct Closer {
    std::vector<std::pair<int, int>>* ends;
    ~Closer() {
      for (auto& [target, fd] : *ends) CloseFd(&fd);
    }
  } closer{&child_ends};

  auto make_pipe = [&](int child_fd, bool child_reads) -> Status {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      return Status::IOError("cannot create a pipe for a subprocess: " + ErrnoText(errno));
    }
    int child_end = child_reads ? fds[0] : fds[1];
    int parent_end = child_reads ? fds[1] : fds[0];
    proc->pipes_.push_back({child_fd, parent_end});
    // Move the child end above every target number so the dup2 sequence cannot clobber it.
    Result<int> moved = MoveAbove(child_end, first_free);
    if (!moved.ok()) return moved.status();
    child_ends.emplace_back(child_fd, *moved);
    return SetNonBlocking(parent_end);
  };
  Status s = make_pipe(1, false);
  if (s.ok()) s = make_pipe(2, false);
  for (int fd : options.child_read_fds) {
    if (s.ok()) s = make_pipe(fd, true);
  }
  for (int fd : options.child_write_fds) {
    if (s.ok()) s = make_pipe(fd, false);
  }
  if (!s.ok()) return s;

  std::vector<std::string> argv_storage = options.argv;
  std::vector<char*> argv = CStrings(argv_storage);
  std::vector<std::string> env_storage = BuildEnvironment(options.env);
  std::vector<char*> envp = CStrings(env_storage);
  if (options.child_setup != nullptr) {
    Result<pid_t> pid = ForkExec(options, child_ends, first_free, argv.data(), envp.data());
    if (!pid.ok()) return pid.status();
    proc->pid_ = *pid;
    return proc;
  }

  SpawnAttr attr;
  sigset_t empty_mask, default_signals;
  sigemptyset(&empty_mask);
  sigemptyset(&default_signals);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2}) {
    sigaddset(&default_signals, sig);
  }
  posix_spawnattr_setflags(&attr.attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr.attr, 0);
  posix_spawnattr_setsigmask(&attr.attr, &empty_mask);
  posix_spawnattr_setsigdefault(&attr.attr, &default_signals);

  FileActions actions;
  posix_spawn_file_actions_addopen(&actions.actions, 0, "/dev/null", O_RDONLY, 0);
  for (const auto& [target, fd] : child_ends) {
    posix_spawn_file_actions_adddup2(&actions.actions, fd, target);
  }
  if (!options.cwd.empty()) {
    posix_spawn_file_actions_addchdir_np(&actions.actions, options.cwd.c_str());
  }
  posix_spawn_file_actions_addclosefrom_np(&actions.actions, first_free);

  pid_t pid = -1;
  int err = posix_spawnp(&pid, argv[0], &actions.actions, &attr.attr, argv.data(), envp.data());
  if (err != 0) {
    std::string where = options.cwd.empty() ? "" : " in directory '" + options.cwd + "'";
    return Status::IOError("cannot start '" + options.argv[0] + "'" + where + ": " +
                           ErrnoText(err) + " (is it installed and on PATH?)");
  }
  proc->pid_ = pid;
  return proc;
}

Subprocess::~Subprocess() {
  if (pid_ > 0) KillAndReap();
  CloseAll();
}

int Subprocess::ParentFd(int child_fd) const {
  for (const Pipe& p : pipes_) {
    if (p.child_fd == child_fd) return p.parent_fd;
  }
  return -1;
}

void Subprocess::CloseParentFd(int child_fd) {
  for (Pipe& p : pipes_) {
    if (p.child_fd == child_fd) CloseFd(&p.parent_fd);
  }
}

void Subprocess::CloseAll() {
  for (Pipe& p : pipes_) CloseFd(&p.parent_fd);
}

Result<ReadOutcome> Subprocess::ReadAvailable(int fd, std::string* out, size_t max_bytes) {
  ReadOutcome outcome;
  char buf[64 * 1024];
  while (outcome.bytes < max_bytes) {
    size_t want = std::min(sizeof(buf), max_bytes - outcome.bytes);
    ssize_t n = read(fd, buf, want);
    if (n > 0) {
      out->append(buf, static_cast<size_t>(n));
      outcome.bytes += static_cast<size_t>(n);
      continue;
    }
    if (n == 0) {
      outcome.eof = true;
      break;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    return Status::IOError("cannot read from a subprocess pipe: " + ErrnoText(errno));
  }
  return outcome;
}

Result<size_t> Subprocess::WriteAvailable(int fd, std::string_view data) {
  // Block SIGPIPE in this thread for the write; a SIGPIPE the write raises is consumed here
  // so it never reaches the process.
  sigset_t pipe_set, old_mask, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;

  size_t written = 0;
  int err = 0;
  while (written < data.size()) {
    ssize_t n = write(fd, data.data() + written, data.size() - written);
    if (n > 0) {
      written += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    err = n < 0 ? errno : EIO;
    break;
  }
  if (err == EPIPE && !was_pending) {
    struct timespec zero = {0, 0};
    while (sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  if (err != 0) {
    if (err == EPIPE) return Status::IOError("the subprocess closed its end of the pipe");
    return Status::IOError("cannot write to a subprocess pipe: " + ErrnoText(err));
  }
  return written;
}

std::optional<ExitStatus> Subprocess::PollExit() {
  if (exit_.has_value()) return exit_;
  siginfo_t info;
  memset(&info, 0, sizeof(info));
  int r;
  do {
    r = waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
  } while (r < 0 && errno == EINTR);
  if (r < 0) {
    // ECHILD: someone else reaped it; its status is lost.
    exit_ = ExitStatus{false, -1, 0};
    reaped_ = true;
    return exit_;
  }
  if (info.si_pid != pid_) return std::nullopt;
  ExitStatus e;
  if (info.si_code == CLD_EXITED) {
    e.code = info.si_status;
  } else {
    e.signaled = true;
    e.signal = info.si_status;
  }
  exit_ = e;
  return exit_;
}

std::optional<ExitStatus> Subprocess::WaitExitFor(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    std::optional<ExitStatus> e = PollExit();
    if (e.has_value() || std::chrono::steady_clock::now() >= deadline) return e;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void Subprocess::KillGroup() {
  if (pid_ > 0 && !reaped_) kill(-pid_, SIGKILL);
}

ExitStatus Subprocess::KillAndReap() {
  if (reaped_) return exit_.value_or(ExitStatus{true, 0, SIGKILL});
  KillGroup();
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  reaped_ = true;
  if (!exit_.has_value()) {
    exit_ = r == pid_ ? FromWaitStatus(status) : ExitStatus{false, -1, 0};
  }
  return *exit_;
}

}  // namespace ks
