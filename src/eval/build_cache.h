// The cpu_ext build cache after a request that ended without a result.
//
// Workers share one cache of compiled libraries ($KS_CACHE_DIR/cpu_ext/<slot>/lib<name>.so),
// the evaluator's own native code (its CPU sampler, its kernel log) among them, which each
// worker loads at start. A builder never replaces a file in a slot: the first build of a slot
// stays. A request's candidate code can, though; the worker's own end-of-request check finds
// and removes such a file, but a request killed by a deadline, or a worker that died, never
// reaches that check, and the next worker would load what was put there. So the engine, when a
// request ends without a result, removes every library replaced during it.
//
// Thread-safety: functions; safe to call from several threads.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace ks {

// The cpu_ext cache of a worker whose $KS_CACHE_DIR is `worker_ks_cache_dir` (empty: the
// engine's $KS_CACHE_DIR, else $HOME/.cache/kernelsmith), with "/cpu_ext" appended.
std::string CpuExtCacheRoot(const std::string& worker_ks_cache_dir);

// Removes each shared library (a "*.so" file) in ROOT/<slot>/ whose change time is at or after
// `since` in a slot folder created before `since` (a file put in place of a build, or next to
// one, while the request ran); where the file system does not record creation times, every
// library changed since `since`. Returns the removed paths. A missing root is no error;
// entries that cannot be read or removed are skipped (best effort: the worker's own checks at
// its next request still compare what it loads).
std::vector<std::string> RemoveReplacedBuilds(const std::string& root,
                                              std::chrono::system_clock::time_point since);

}  // namespace ks
