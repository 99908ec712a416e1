#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>

#include "sandbox/processes.h"

namespace ks {
namespace {

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* v = getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

// Writes `text` to `path` (async-signal-safe). 0 or errno.
int WriteProcFile(const char* path, const char* text, size_t len) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  ssize_t n = write(fd, text, len);
  int err = n == static_cast<ssize_t>(len) ? 0 : (n < 0 ? errno : EIO);
  close(fd);
  return err;
}

// New user + network namespace for the calling (single-threaded) process, mapping its uid and
// gid to themselves. Async-signal-safe. 0 or errno with *step.
int EnterNamespaces(const std::string& uid_map, const std::string& gid_map, const char** step) {
  if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
    *step = "unshare(CLONE_NEWUSER|CLONE_NEWNET)";
    return errno;
  }
  int err = WriteProcFile("/proc/self/setgroups", "deny", 4);
  if (err != 0 && err != ENOENT) {
    *step = "write /proc/self/setgroups";
    return err;
  }
  err = WriteProcFile("/proc/self/uid_map", uid_map.data(), uid_map.size());
  if (err != 0) {
    *step = "write /proc/self/uid_map";
    return err;
  }
  err = WriteProcFile("/proc/self/gid_map", gid_map.data(), gid_map.size());
  if (err != 0) *step = "write /proc/self/gid_map";
  return err;
}

std::string IdMap(unsigned id) { return fmt::format("{} {} 1\n", id, id); }

SandboxSupport Probe() {
  SandboxSupport s;
  s.landlock_abi = LandlockAbi();
  const std::string uid_map = IdMap(getuid()), gid_map = IdMap(getgid());
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    s.namespaces_error = std::string("pipe: ") + strerror(errno);
    return s;
  }
  pid_t pid = fork();
  if (pid == 0) {
    const char* step = "";
    int err = EnterNamespaces(uid_map, gid_map, &step);
    if (err != 0) {
      char msg[160];
      int n = snprintf(msg, sizeof(msg), "%s: %s", step, strerror(err));
      ssize_t ignored = write(fds[1], msg, n > 0 ? static_cast<size_t>(n) : 0);
      (void)ignored;
    }
    _exit(err == 0 ? 0 : 1);
  }
  close(fds[1]);
  if (pid < 0) {
    s.namespaces_error = std::string("fork: ") + strerror(errno);
    close(fds[0]);
    return s;
  }
  char buf[200];
  ssize_t n;
  do {
    n = read(fds[0], buf, sizeof(buf) - 1);
  } while (n < 0 && errno == EINTR);
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  s.namespaces = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!s.namespaces) s.namespaces_error = n > 0 ? std::string(buf, n) : "probe child failed";
  return s;
}

std::string Bytes(uint64_t b) {
  if (b >= (uint64_t{1} << 30)) return fmt::format("{:.3g} GiB", b / double(uint64_t{1} << 30));
  return fmt::format("{:.3g} MiB", b / double(uint64_t{1} << 20));
}

}  // namespace

Status ApplySandboxEnv(const char* value, SandboxOptions* options) {
  if (value == nullptr) return Status::Ok();
  std::string_view rest(value);
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string word(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
    if (word.empty() || word == "on") {
      options->enabled = true;
    } else if (word == "off") {
      options->enabled = false;
    } else if (word == "no-netns") {
      options->network_namespace = false;
    } else if (word == "no-landlock") {
      options->landlock = false;
    } else {
      return Status::InvalidArgument("KS_SANDBOX: unknown setting '" + word +
                                     "'; use a comma-separated list of on, off, no-netns, "
                                     "no-landlock (docs/security.md)");
    }
  }
  return Status::Ok();
}

std::vector<std::string> DefaultWritablePaths() {
  const std::string home = EnvOr("HOME", "/tmp");
  std::vector<std::string> paths = {
      "/dev",
      EnvOr("KS_CACHE_DIR", home + "/.cache/kernelsmith"),
      EnvOr("TRITON_CACHE_DIR", home + "/.triton"),
      EnvOr("TORCH_EXTENSIONS_DIR", home + "/.cache/torch_extensions"),
      home + "/.nv",
  };
  for (const std::string& p : paths) {
    std::error_code ec;
    std::filesystem::create_directories(p, ec);  // a rule needs the path to exist
  }
  return paths;
}

const SandboxSupport& ProbeSandboxSupport() {
  static std::once_flag once;
  static SandboxSupport support;
  std::call_once(once, [] { support = Probe(); });
  return support;
}

SandboxPlan PlanSandbox(const SandboxOptions& options) {
  SandboxPlan plan;
  plan.options = options;
  SandboxOptions& o = plan.options;
  if (!o.enabled) return plan;
  const SandboxSupport& support = ProbeSandboxSupport();
  if (o.network_namespace && !support.namespaces) {
    o.network_namespace = false;
    plan.warnings.push_back(
        "no network namespace for workers (" + support.namespaces_error + "); " +
        (o.landlock && support.landlock_abi >= 4
             ? "Landlock denies TCP instead (UDP and unix sockets stay open)"
             : "workers can reach the network") +
        " — see docs/security.md");
  }
  if (o.landlock && support.landlock_abi < 1) {
    o.landlock = false;
    plan.warnings.push_back(
        "Landlock is not available on this kernel: workers can write wherever the engine's "
        "user can, including the run directory — see docs/security.md");
  }
  plan.landlock_denies_tcp = o.landlock && !o.network_namespace && support.landlock_abi >= 4;
  if (o.writable_paths.empty()) o.writable_paths = DefaultWritablePaths();
  if (o.max_rss_bytes == 0) o.max_rss_bytes = PhysicalMemoryBytes() / 2;
  return plan;
}

Result<SandboxPlan> PlanSandboxFromEnv(SandboxOptions options) {
  Status env = ApplySandboxEnv(getenv("KS_SANDBOX"), &options);
  if (!env.ok()) return env;
  return PlanSandbox(options);
}

std::string SandboxLimitExceeded(const SandboxOptions& o, pid_t pgid, uint64_t userns_inode,
                                 const std::string& who) {
  ProcessUsage u = MeasureProcesses(pgid, userns_inode);
  if (o.max_processes > 0 && u.processes > o.max_processes) {
    return fmt::format(
        "{} ran {} processes, over the sandbox's limit of {} (a fork bomb?); the {} and its "
        "processes were killed",
        who, u.processes, o.max_processes, who);
  }
  if (o.max_rss_bytes > 0 && u.rss_bytes > o.max_rss_bytes) {
    return fmt::format(
        "{} used {:.2f} GiB of host memory, over the sandbox's limit of {:.2f} GiB; "
        "the {} was killed",
        who, static_cast<double>(u.rss_bytes) / double(uint64_t{1} << 30),
        static_cast<double>(o.max_rss_bytes) / double(uint64_t{1} << 30), who);
  }
  return "";
}

std::string SandboxPlan::Describe() const {
  const SandboxOptions& o = options;
  if (!o.enabled) return "sandbox off (KS_SANDBOX=off)";
  std::vector<std::string> parts;
  parts.push_back(o.network_namespace ? "user+network namespace (no network)"
                                      : "no network namespace");
  if (o.landlock) {
    std::string w;
    for (const std::string& p : o.writable_paths) w += (w.empty() ? "" : ", ") + p;
    parts.push_back(fmt::format("Landlock ABI {} (writable: scratch, {}){}",
                                ProbeSandboxSupport().landlock_abi, w,
                                landlock_denies_tcp ? ", TCP denied" : ""));
  } else {
    parts.push_back("no Landlock");
  }
  parts.push_back(fmt::format("files <= {}, tasks <= {}, processes <= {}, RSS <= {}",
                              o.max_file_bytes ? Bytes(o.max_file_bytes) : "unlimited",
                              o.max_tasks, o.max_processes, Bytes(o.max_rss_bytes)));
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

Result<std::unique_ptr<WorkerSandbox>> WorkerSandbox::Prepare(const SandboxPlan& plan,
                                                              const std::string& scratch_dir) {
  std::unique_ptr<WorkerSandbox> sb(new WorkerSandbox());
  const SandboxOptions& o = plan.options;
  if (!o.enabled) return sb;
  if (o.max_file_bytes > 0) sb->limits_.push_back({RLIMIT_FSIZE, o.max_file_bytes, "RLIMIT_FSIZE"});
  if (o.max_tasks > 0) sb->limits_.push_back({RLIMIT_NPROC, o.max_tasks, "RLIMIT_NPROC"});
  if (o.max_address_space_bytes > 0) {
    sb->limits_.push_back({RLIMIT_AS, o.max_address_space_bytes, "RLIMIT_AS"});
  }
  sb->namespaces_ = o.network_namespace;
  sb->uid_map_ = IdMap(getuid());
  sb->gid_map_ = IdMap(getgid());
  if (o.landlock) {
    LandlockPolicy policy;
    policy.writable_paths = o.writable_paths;
    policy.writable_paths.push_back(scratch_dir);
    policy.deny_tcp = plan.landlock_denies_tcp;
    Result<LandlockRuleset> rs = LandlockRuleset::Build(policy);
    if (!rs.ok()) return rs.status();
    sb->landlock_ = std::move(*rs);
  }
  return sb;
}

int WorkerSandbox::Apply(const char** step) const noexcept {
  for (const Limit& l : limits_) {
    struct rlimit rl = {static_cast<rlim_t>(l.value), static_cast<rlim_t>(l.value)};
    struct rlimit cur;
    if (getrlimit(l.resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY &&
        cur.rlim_max < rl.rlim_max) {
      rl.rlim_cur = rl.rlim_max = cur.rlim_max;  // an unprivileged engine cannot raise it
    }
    if (setrlimit(l.resource, &rl) != 0) {
      *step = l.name;
      return errno;
    }
  }
  if (namespaces_) {
    int err = EnterNamespaces(uid_map_, gid_map_, step);
    if (err != 0) return err;
  }
  if (landlock_.valid()) return landlock_.RestrictSelf(step);
  return 0;
}

}  // namespace ks
