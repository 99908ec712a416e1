#include "eval/runner.h"

#include <future>
#include <memory>

namespace ks {

EvalResult Runner::Evaluate(EvalRequest request) {
  auto promise = std::make_shared<std::promise<EvalResult>>();
  std::future<EvalResult> future = promise->get_future();
  Submit(std::move(request), [promise](EvalResult r) { promise->set_value(std::move(r)); });
  return future.get();
}

}  // namespace ks
