#include "cli/final_verify.h"

#include "cli/one_off_pool.h"
#include "core/file.h"

namespace ks {

Result<VerifyOutcome> VerifyRunBest(const FinalVerifyInput& in) {
  Result<std::string> best = ReadFile(in.run_dir + "/best.py");
  if (!best.ok()) return best.status();
  Result<OneOffPool> started = StartOneOffPool(in.python, std::nullopt, in.backend);
  if (!started.ok()) return started.status();
  EvalRequest request;
  request.problem_path = in.problem_path;
  request.problem_source = in.problem_source;
  request.candidate_path = in.run_dir + "/best.py";
  request.candidate_source = *best;
  request.backend = started->backend;
  VerifyOutcome v = Verify(started->pool.get(), std::move(request));
  started->pool->Shutdown();
  if (v.result.status == EvalStatus::kInfraError) {
    return Status::Internal("the evaluation could not run: " + v.result.message);
  }
  nlohmann::json record = VerifyRecord(v, in.run_dir + "/best.py", in.recorded);
  record["program_id"] = in.best_program_id;
  Status written = WriteFileAtomic(in.run_dir + "/verify.json", record.dump(2) + "\n");
  if (!written.ok()) return written;
  return v;
}

}  // namespace ks
