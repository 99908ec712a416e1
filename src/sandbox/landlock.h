// Landlock (Linux >= 5.13): an unprivileged process restricts itself, and everything it later
// starts, to a set of filesystem (and, from ABI 4, TCP) accesses. kernelsmith uses it to make
// everything read-only for a worker except its scratch directory and a few caches, to deny TCP
// where no network namespace can be had, and (ABI 6) to keep the worker from signalling
// processes outside its sandbox.
//
// Thread-safety: free functions, no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace ks {

// The kernel's Landlock ABI version; 0 when Landlock is unavailable (old kernel, disabled at
// boot, or blocked by a seccomp filter).
int LandlockAbi();

struct LandlockPolicy {
  // Paths (files or directories) beneath which writes stay allowed; everything else becomes
  // read-only. Paths that do not exist are skipped.
  std::vector<std::string> writable_paths;
  // Deny TCP connect and bind (needs ABI >= 4; ignored below).
  bool deny_tcp = false;
  // Deny signals to, and abstract unix sockets of, processes outside the sandbox (ABI >= 6).
  bool scope_ipc = true;
};

// A ruleset ready to be enforced in a child: its close-on-exec fd (numbered >= 64, clear of the
// fds a child maps), owned. What it enforces is
// described for the documentation and diagnostics.
class LandlockRuleset {
 public:
  // Builds the ruleset for `policy` on this kernel's ABI. IOError naming the path or step that
  // failed; InvalidArgument when Landlock is unavailable.
  static Result<LandlockRuleset> Build(const LandlockPolicy& policy);
  LandlockRuleset() = default;
  LandlockRuleset(LandlockRuleset&& other) noexcept;
  LandlockRuleset& operator=(LandlockRuleset&& other) noexcept;
  ~LandlockRuleset();

  bool valid() const { return fd_ >= 0; }
  int abi() const { return abi_; }
  bool denies_tcp() const { return denies_tcp_; }
  // Enforces the ruleset on the calling thread (in the child: the whole process after exec).
  // Async-signal-safe. Returns 0 or an errno value, *step naming the call that failed.
  int RestrictSelf(const char** step) const noexcept;

 private:
  int fd_ = -1;
  int abi_ = 0;
  bool denies_tcp_ = false;
  uint64_t handled_fs_ = 0;  // the write rights the ruleset handles (granted on /proc/self)
};

}  // namespace ks
