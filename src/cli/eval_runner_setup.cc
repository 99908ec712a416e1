#include "cli/eval_runner_setup.h"

#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "cli/python_choice.h"
#include "eval/worker_pool.h"

namespace ks {

Result<EvalRunnerSetup> StartEvalRunner(const EvalRunnerSpec& spec) {
  EvalRunnerSetup out;
  if (!spec.queue.empty()) {
    Result<QueueUrl> url = ParseQueueUrl(spec.queue);
    if (!url.ok()) return Status::InvalidArgument(url.status().message());
    RedisOptions redis = RedisOptionsFor(*url);
    redis.who = spec.who;
    Result<std::unique_ptr<QueueRunner>> q = QueueRunner::Create(redis);
    if (!q.ok()) return Status::InvalidArgument(q.status().message());
    Result<nlohmann::json> worker = (*q)->WaitForWorker();
    if (!worker.ok()) return Status::InvalidArgument(worker.status().message());
    out.hello = worker->value("hello", nlohmann::json::object());
    out.slots = std::max<size_t>(1, (*q)->LiveSlots());
    out.queue = q->get();
    out.runner = std::move(*q);
    return out;
  }
  WorkerPoolOptions options;
  ChoosePython(spec.python, &options.python);
  options.gpus = spec.gpus;
  options.slots_per_gpu = spec.slots_per_gpu;
  Result<std::unique_ptr<WorkerPool>> pool = WorkerPool::Create(options);
  if (!pool.ok()) return Status::InvalidArgument(pool.status().message());
  Result<nlohmann::json> hello = (*pool)->Hello();
  if (!hello.ok()) {
    return Status::InvalidArgument(
        "the evaluation worker did not start: " + hello.status().message() +
        "\n(Is torch installed for " + options.python + "?)");
  }
  out.hello = *hello;
  out.slots = (*pool)->slot_count();
  out.runner = std::move(*pool);
  return out;
}

Result<std::vector<int>> GpusFor(const std::string& gpus_flag, const std::string& backend) {
  if (!gpus_flag.empty()) return ParseGpus(gpus_flag);
  if (backend == "cpu") return std::vector<int>{};
  Result<std::vector<int>> all = ParseGpus("all");
  return all.ok() ? all : Result<std::vector<int>>(std::vector<int>{});
}

int SlotsPerGpuFor(int workers, size_t gpu_count) {
  const int n = std::max(1, workers);
  if (gpu_count == 0) return n;
  const int g = static_cast<int>(gpu_count);
  return (n + g - 1) / g;
}

Result<std::vector<int>> ParseGpus(const std::string& spec) {
  std::vector<int> gpus;
  if (spec.empty()) return gpus;
  if (spec == "all") {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    if (visible != nullptr && *visible != '\0') {
      std::stringstream in(visible);
      std::string item;
      for (int i = 0; std::getline(in, item, ','); ++i) gpus.push_back(i);
    } else if (DIR* dir = opendir("/proc/driver/nvidia/gpus")) {
      int n = 0;
      while (dirent* e = readdir(dir)) n += e->d_name[0] != '.';
      closedir(dir);
      for (int i = 0; i < n; ++i) gpus.push_back(i);
    }
    if (gpus.empty()) {
      return Status::InvalidArgument(
          "--gpus all: no NVIDIA GPU found (/proc/driver/nvidia/gpus is empty or missing); "
          "leave --gpus out to run on the CPU");
    }
    return gpus;
  }
  std::stringstream in(spec);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 0) {
      return Status::InvalidArgument("--gpus: '" + item +
                                     "' is not a GPU index (use all or e.g. 0,1)");
    }
    gpus.push_back(static_cast<int>(v));
  }
  return gpus;
}

}  // namespace ks
