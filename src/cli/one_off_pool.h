// The worker pool of a one-off command (eval, verify): the interpreter from --python or
// $KS_PYTHON, one worker started and greeted, and the backend resolved against what it sees.
// Thread-safety: called from the command's thread.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/status.h"
#include "eval/worker_pool.h"

namespace ks {

struct OneOffPool {
  std::unique_ptr<WorkerPool> pool;
  std::string backend;  // resolved: triton, cuda or cpu
};

// InvalidArgument with a message that says what to do when the worker does not start or the
// requested backend cannot run on its device.
Result<OneOffPool> StartOneOffPool(const std::string& python_flag, std::optional<int> gpu,
                                   const std::string& backend);

}  // namespace ks
