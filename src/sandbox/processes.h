// The processes of one worker, as the pool watches them: a census of its process group and
// user namespace (count and resident memory, from /proc), a sweep that kills what escaped the
// group (setsid) but not the namespace, and the per-request CPU budget (RLIMIT_CPU via
// prlimit).
//
// Thread-safety: free functions, no shared state.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "core/status.h"

namespace ks {

struct ProcessUsage {
  int processes = 0;       // processes (not threads)
  uint64_t rss_bytes = 0;  // summed resident set sizes
};

// Processes whose process group is `pgid`, or, when `userns_inode` is non-zero, that live in
// that user namespace. Processes that vanish during the scan are skipped.
ProcessUsage MeasureProcesses(pid_t pgid, uint64_t userns_inode);

// The inode of `pid`'s user namespace (/proc/PID/ns/user); 0 if it cannot be read.
uint64_t UserNamespaceInode(pid_t pid);

// SIGKILLs every process in user namespace `inode`; returns how many. Does nothing (returns 0)
// for 0 or for the caller's own namespace.
int KillUserNamespace(uint64_t inode);

// Sets `pid`'s RLIMIT_CPU so it may use `seconds` more CPU time (all its threads): soft limit
// (SIGXCPU, which kills) at used + seconds, hard limit (SIGKILL) 2 s later. IOError when the
// usage cannot be read or prlimit fails.
Status ArmCpuLimit(pid_t pid, double seconds);

// The machine's physical memory in bytes.
uint64_t PhysicalMemoryBytes();

}  // namespace ks
