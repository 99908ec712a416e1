// Subprocess: one child process started from an argv array (no shell), in its own process
// group, with stdin from /dev/null, stdout and stderr on pipes, and optional extra pipes mapped
// to chosen child fd numbers (the worker protocol uses child fds 3 and 4).
//
// Every parent-side fd is non-blocking and close-on-exec, so it is never inherited by this or
// any other child; the child additionally gets every fd above its highest mapped fd closed.
// Reads and writes are non-blocking and meant for a poll(2) loop; writes never raise SIGPIPE.
//
// Thread-safety: a Subprocess is used by one thread at a time. Spawning from several threads
// at once is safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace ks {

// How a child ended.
struct ExitStatus {
  bool signaled = false;  // true: killed by `signal`; false: exited with `code`
  int code = 0;
  int signal = 0;

  bool success() const { return !signaled && code == 0; }
  // "exit code 3" or "signal SIGSEGV".
  std::string ToString() const;
};

// "SIGSEGV", "SIGKILL", ...; "signal 42" for one without a name.
std::string SignalName(int sig);

// Work done in the child between fork and exec, e.g. sandboxing (src/sandbox). Prepared in the
// parent; Apply runs in the forked child, which may only make async-signal-safe calls there (no
// allocation, no locks, no stdio).
class ChildSetup {
 public:
  virtual ~ChildSetup() = default;
  // Runs in the child after its fds, process group and working directory are in place and
  // before exec. Returns 0, or an errno value with *step set to a string literal naming what
  // failed (e.g. "setrlimit RLIMIT_CPU"); Spawn then fails with an IOError that names both.
  virtual int Apply(const char** step) const noexcept = 0;
};

struct SubprocessOptions {
  // Program and arguments. argv[0] is looked up in the parent's PATH unless it contains '/'.
  std::vector<std::string> argv;
  // Variables added to (or overriding) the parent's environment.
  std::map<std::string, std::string> env;
  // Working directory of the child; empty: the parent's.
  std::string cwd;
  // Child fd numbers (>= 3) the child reads from; the parent writes the other end.
  std::vector<int> child_read_fds;
  // Child fd numbers (>= 3) the child writes to; the parent reads the other end.
  std::vector<int> child_write_fds;
  // Optional pre-exec work in the child (not owned; used only during Spawn). When set, the child
  // is started with fork+exec instead of posix_spawn.
  const ChildSetup* child_setup = nullptr;
};

// What a non-blocking read got: `bytes` appended, and whether the writer side is closed.
// bytes == 0 && !eof means nothing is available right now.
struct ReadOutcome {
  size_t bytes = 0;
  bool eof = false;
};

class Subprocess {
 public:
  // Starts the child. IOError if a pipe cannot be made or the program cannot be executed
  // (not found, not executable), naming the program and the reason.
  static Result<std::unique_ptr<Subprocess>> Spawn(const SubprocessOptions& options);

  // Kills the process group and reaps the child unless that already happened.
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }

  // Parent ends: -1 once closed. For extra pipes, `child_fd` is the number the child sees
  // (1 and 2 give stdout and stderr).
  int stdout_fd() const { return ParentFd(1); }
  int stderr_fd() const { return ParentFd(2); }
  int ParentFd(int child_fd) const;
  // Closes the parent end mapped to `child_fd` (e.g. after EOF); no-op if already closed.
  void CloseParentFd(int child_fd);

  // Appends up to `max_bytes` available bytes of `fd` to *out without blocking. IOError on a
  // read error other than EAGAIN/EINTR.
  static Result<ReadOutcome> ReadAvailable(int fd, std::string* out, size_t max_bytes);
  // Writes as much of `data` as fits without blocking; returns the byte count (0 if the pipe is
  // full). IOError (without SIGPIPE) when the reader has gone away.
  static Result<size_t> WriteAvailable(int fd, std::string_view data);

  // The child's status once it has exited, without reaping it (its process group id stays
  // reserved, so KillGroup stays safe); nullopt while it runs.
  std::optional<ExitStatus> PollExit();
  // As PollExit, waiting up to `timeout` for the exit.
  std::optional<ExitStatus> WaitExitFor(std::chrono::milliseconds timeout);
  // SIGKILL to the whole process group (the child and everything it spawned that stayed in
  // the group). No-op once the child has been reaped.
  void KillGroup();
  // KillGroup, then reaps the child (waitpid retried on EINTR). Idempotent. Returns the
  // child's status: its own exit if it had exited before, SIGKILL otherwise.
  ExitStatus KillAndReap();

 private:
  struct Pipe {
    int child_fd;
    int parent_fd;
  };
  Subprocess() = default;
  void CloseAll();
  // Spawn's path when options.child_setup is set: fork, RunChild, exec; the child's pid.
  static Result<pid_t> ForkExec(const SubprocessOptions& options,
                                const std::vector<std::pair<int, int>>& child_ends,
                                int first_free, char* const* argv, char* const* envp);

  pid_t pid_ = -1;
  bool reaped_ = false;
  std::optional<ExitStatus> exit_;
  std::vector<Pipe> pipes_;
};

}  // namespace ks
