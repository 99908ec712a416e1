// Runs an indexed loop on a few threads.
// Thread-safety: fn is called concurrently from `jobs` threads.
#pragma once

#include <cstddef>
#include <functional>

#include "core/status.h"

namespace ks {

// Runs fn(i) for i in [0, n) on `jobs` threads; stops handing out work after the first error,
// which it returns.
Status ParallelFor(size_t n, int jobs, const std::function<Status(size_t)>& fn);

}  // namespace ks
