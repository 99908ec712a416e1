#include "cli/one_off_pool.h"

#include <cstdlib>

#include "cli/backend_choice.h"
#include "cli/python_choice.h"

namespace ks {

Result<OneOffPool> StartOneOffPool(const std::string& python_flag, std::optional<int> gpu,
                                   const std::string& backend) {
  WorkerPoolOptions options;
  ChoosePython(python_flag, &options.python);
  if (gpu) options.gpus = {*gpu};
  Result<std::unique_ptr<WorkerPool>> pool = WorkerPool::Create(options);
  if (!pool.ok()) return Status::InvalidArgument(pool.status().message());
  Result<nlohmann::json> hello = (*pool)->Hello();
  if (!hello.ok()) {
    return Status::InvalidArgument(
        "the evaluation worker did not start: " + hello.status().message() +
        "\n(Is torch installed for " + options.python + "? scripts/install-deps installs it.)");
  }
  Result<std::string> resolved = ResolveBackend(backend, *hello);
  if (!resolved.ok()) return Status::InvalidArgument(resolved.status().message());
  return OneOffPool{std::move(*pool), *resolved};
}

}  // namespace ks
