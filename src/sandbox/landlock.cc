#include "sandbox/landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

namespace ks {
namespace {

// The uapi as of ABI 7 (the system header may be older): ruleset attribute and rule types.
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;  // ABI >= 4
  uint64_t scoped;              // ABI >= 6
};
struct PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

constexpr unsigned kCreateRulesetVersion = 1U << 0;
constexpr int kRulePathBeneath = 1;
constexpr int kMinRulesetFd = 64;

constexpr uint64_t kWriteFile = 1ULL << 1;
constexpr uint64_t kRemoveDir = 1ULL << 4;
constexpr uint64_t kRemoveFile = 1ULL << 5;
constexpr uint64_t kMakeChar = 1ULL << 6;
constexpr uint64_t kMakeDir = 1ULL << 7;
constexpr uint64_t kMakeReg = 1ULL << 8;
constexpr uint64_t kMakeSock = 1ULL << 9;
constexpr uint64_t kMakeFifo = 1ULL << 10;
constexpr uint64_t kMakeBlock = 1ULL << 11;
constexpr uint64_t kMakeSym = 1ULL << 12;
constexpr uint64_t kRefer = 1ULL << 13;     // ABI >= 2
constexpr uint64_t kTruncate = 1ULL << 14;  // ABI >= 3
// Rights that apply to a file (not a directory) in a path-beneath rule.
constexpr uint64_t kFileRights = kWriteFile | kTruncate;

constexpr uint64_t kNetBindTcp = 1ULL << 0;     // ABI >= 4
constexpr uint64_t kNetConnectTcp = 1ULL << 1;  // ABI >= 4
constexpr uint64_t kScopeAbstractUnix = 1ULL << 0;  // ABI >= 6
constexpr uint64_t kScopeSignal = 1ULL << 1;        // ABI >= 6

// Every write-like filesystem right the ABI knows. IOCTL_DEV (ABI 5) is deliberately not
// handled: GPU drivers are driven by ioctls on /dev/nvidia*.
uint64_t WriteRights(int abi) {
  uint64_t r = kWriteFile | kRemoveDir | kRemoveFile | kMakeChar | kMakeDir | kMakeReg |
               kMakeSock | kMakeFifo | kMakeBlock | kMakeSym;
  if (abi >= 2) r |= kRefer;
  if (abi >= 3) r |= kTruncate;
  return r;
}

std::string ErrnoText(int err) { return std::string(strerror(err)); }

}  // namespace

int LandlockAbi() {
  long v = syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  return v < 0 ? 0 : static_cast<int>(v);
}

Result<LandlockRuleset> LandlockRuleset::Build(const LandlockPolicy& policy) {
  const int abi = LandlockAbi();
  if (abi < 1) {
    return Status::InvalidArgument(
        "Landlock is not available on this kernel (needs Linux >= 5.13 with Landlock enabled)");
  }
  RulesetAttr attr = {};
  attr.handled_access_fs = WriteRights(abi);
  const bool deny_tcp = policy.deny_tcp && abi >= 4;
  if (deny_tcp) attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
  if (policy.scope_ipc && abi >= 6) attr.scoped = kScopeAbstractUnix | kScopeSignal;
  const size_t size = abi >= 6 ? sizeof(RulesetAttr) : abi >= 4 ? 16 : 8;
  long fd = syscall(SYS_landlock_create_ruleset, &attr, size, 0);
  if (fd < 0) {
    return Status::IOError("landlock_create_ruleset failed: " + ErrnoText(errno));
  }
  // Above the low numbers a child maps its pipes onto (dup2 there would clobber it).
  int high = fcntl(static_cast<int>(fd), F_DUPFD_CLOEXEC, kMinRulesetFd);
  int dup_err = errno;
  close(static_cast<int>(fd));
  if (high < 0) return Status::IOError("cannot move the Landlock ruleset fd: " + ErrnoText(dup_err));
  LandlockRuleset ruleset;
  ruleset.fd_ = high;
  ruleset.abi_ = abi;
  ruleset.denies_tcp_ = deny_tcp;
  ruleset.handled_fs_ = attr.handled_access_fs;
  for (const std::string& path : policy.writable_paths) {
    int pfd = open(path.c_str(), O_PATH | O_CLOEXEC);
    if (pfd < 0) {
      if (errno == ENOENT) continue;
      return Status::IOError("cannot open '" + path + "' for a Landlock rule: " +
                             ErrnoText(errno));
    }
    struct stat st;
    uint64_t rights = attr.handled_access_fs;
    if (fstat(pfd, &st) == 0 && !S_ISDIR(st.st_mode)) rights &= kFileRights;
    PathBeneathAttr rule = {rights, pfd};
    long r = syscall(SYS_landlock_add_rule, ruleset.fd_, kRulePathBeneath, &rule, 0);
    int err = errno;
    close(pfd);
    if (r < 0) {
      return Status::IOError("landlock_add_rule for '" + path + "' failed: " + ErrnoText(err));
    }
  }
  return ruleset;
}

LandlockRuleset::LandlockRuleset(LandlockRuleset&& other) noexcept
    : fd_(other.fd_), abi_(other.abi_), denies_tcp_(other.denies_tcp_),
      handled_fs_(other.handled_fs_) {
  other.fd_ = -1;
}

LandlockRuleset& LandlockRuleset::operator=(LandlockRuleset&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.fd_;
    abi_ = other.abi_;
    denies_tcp_ = other.denies_tcp_;
    handled_fs_ = other.handled_fs_;
    other.fd_ = -1;
  }
  return *this;
}

LandlockRuleset::~LandlockRuleset() {
  if (fd_ >= 0) close(fd_);
}

int LandlockRuleset::RestrictSelf(const char** step) const noexcept {
  // The worker's own /proc/<pid> stays writable: the CUDA driver writes there when it
  // initializes (measured on H100: cuInit fails with error 304 otherwise). Added here, in the
  // child, so that "/proc/self" resolves to the worker; the ruleset is this worker's own
  // (WorkerSandbox::Prepare builds one per spawn). Only syscalls: safe between fork and exec.
  int self = open("/proc/self", O_PATH | O_CLOEXEC);
  if (self >= 0) {
    PathBeneathAttr rule = {handled_fs_, self};
    long r = syscall(SYS_landlock_add_rule, fd_, kRulePathBeneath, &rule, 0);
    int err = errno;
    close(self);
    if (r < 0) {
      *step = "landlock_add_rule /proc/self";
      return err;
    }
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    *step = "prctl PR_SET_NO_NEW_PRIVS";
    return errno;
  }
  if (syscall(SYS_landlock_restrict_self, fd_, 0) != 0) {
    *step = "landlock_restrict_self";
    return errno;
  }
  return 0;
}

}  // namespace ks
