// Test-only helpers shared by the store tests: a scratch directory and record builders.
// Thread-safety: none needed (tests).
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "eval/eval_result.h"
#include "propose/normalize.h"
#include "store/store.h"

namespace ks::store_testing {

// A fresh directory, removed with everything in it at the end of the test.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ks-store-test-XXXXXX").string();
    if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline RunRecord MakeRun(const std::string& id) {
  RunRecord run;
  run.id = id;
  run.config = {{"rounds", 40}, {"islands", 2}};
  run.problem_path = "suites/level1/1_Softmax.py";
  run.problem_sha256 = "ab12";
  run.backend = "cpu";
  return run;
}

inline ProgramRecord MakeProgram(const std::string& run_id, const std::string& id,
                                 const std::string& code, const std::string& parent_id = "") {
  ProgramRecord p;
  p.id = id;
  p.run_id = run_id;
  p.parent_id = parent_id;
  p.code = code;
  p.code_hash = CodeHash(code);
  p.proposer = parent_id.empty() ? ProposerKind::kSeed : ProposerKind::kTuner;
  p.kind = parent_id.empty() ? ProgramKind::kSeed : ProgramKind::kEvolution;
  p.generation = parent_id.empty() ? 0 : 1;
  p.metrics = {{"complexity", 12.5}};
  return p;
}

inline LlmCallRecord MakeLlmCall(const std::string& run_id) {
  LlmCallRecord call;
  call.run_id = run_id;
  call.model = "test-model";
  call.endpoint = "http://127.0.0.1:8000/v1";
  call.request = {{"messages", nlohmann::json::array()}, {"params", nlohmann::json::object()}};
  call.completion = "```python\nx = 1\n```";
  return call;
}

inline EvalResult MakeResult(EvalStatus status, double speedup) {
  EvalResult r;
  r.status = status;
  r.backend = "cpu";
  if (status == EvalStatus::kOk) {
    r.speedup = speedup;
    r.ref_us = 100.0;
    r.cand_us = 100.0 / speedup;
  } else {
    r.message = "wrong output";
  }
  r.feedback = "feedback text";
  return r;
}

}  // namespace ks::store_testing
