// Unpredictable bytes from the operating system, for names that must not collide between
// processes and hosts (a cluster client's reply key). Not for the search: its draws come from
// seeded generators so that a run can be reproduced.
//
// The kernel's random source is read through getrandom(2) (glibc 2.25), or /dev/urandom where
// the kernel lacks that call. Not std::random_device: GCC 12's libstdc++, linked statically into
// the binary, implements it with glibc 2.36's arc4random. The binary is linked with
// -Wl,--wrap=arc4random (CMakeLists.txt) so that libstdc++'s reference (always linked in, through
// its exception classes) lands on __wrap_arc4random below, and the binary needs no glibc newer than
// 2.34 (docs/packaging.md).
// Thread-safety: functions; safe to call from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/status.h"

namespace ks {

// Fills out[0, n) with random bytes from the kernel. IOError names the source and the OS
// reason when it cannot be read.
Status ReadEntropy(void* out, size_t n);

// 2 * `bytes` lowercase hex digits from ReadEntropy.
Result<std::string> RandomHex(size_t bytes);

// glibc's arc4random for the binary's statically linked libstdc++ (std::random_device), through
// the linker's --wrap: ReadEntropy's bytes; aborts with a message when the kernel
// gives none (arc4random has no way to report a failure).
extern "C" uint32_t __wrap_arc4random();  // NOLINT: the name --wrap=arc4random resolves to

// Test-only: fills out[0, n) from the file at `path` (the fallback source, /dev/urandom).
// IOError naming the path when it cannot be opened or ends before n bytes.
Status ReadEntropyFromFileForTest(const std::string& path, void* out, size_t n);

}  // namespace ks
