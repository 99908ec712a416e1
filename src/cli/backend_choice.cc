#include "cli/backend_choice.h"

namespace ks {

Result<std::string> ResolveBackend(const std::string& requested, const nlohmann::json& hello) {
  bool cuda = hello.value("cuda_available", false);
  bool interpret = hello.value("triton_interpret", false);
  if (requested.empty()) return std::string(cuda ? "triton" : "cpu");
  if (requested == "triton" && !cuda && !interpret) {
    return Status::InvalidArgument(
        "--backend triton needs a CUDA GPU, and the worker sees none. Use --backend cpu, or "
        "set TRITON_INTERPRET=1 to run Triton kernels in Triton's interpreter on the CPU "
        "(correctness only; its timings mean nothing).");
  }
  if (requested == "cuda" && !cuda) {
    return Status::InvalidArgument(
        "--backend cuda needs a CUDA GPU, and the worker sees none. Use --backend cpu.");
  }
  return requested;
}

}  // namespace ks
