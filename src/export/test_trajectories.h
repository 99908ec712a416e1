// Test-only: crafted trajectories written straight into a real run database (SQLite), for the
// export tests. Thread-safety: none needed (tests).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/file.h"
#include "core/sha256.h"
#include "store/sqlite_store.h"
#include "store/test_util.h"

namespace ks::export_testing {

using store_testing::MakeLlmCall;
using store_testing::MakeProgram;
using store_testing::MakeResult;
using store_testing::MakeRun;
using store_testing::ScratchDir;

inline const char* kReference =
    "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
    "    def forward(self, x):\n        return torch.softmax(x, dim=1)\n\n\n"
    "def get_inputs():\n    return [torch.randn(8, 8)]\n\n\ndef get_init_inputs():\n"
    "    return []\n";

// Writes a run into `dir`/run.db step by step. The problem file is written to
// `dir`/../<problem_rel> (so its path shows a level when problem_rel does) unless
// `write_problem` is false; `store_source` stores the reference with the run (run.db).
class TrajectoryWriter {
 public:
  TrajectoryWriter(const std::string& dir, const std::string& run_id,
                   const std::string& problem_rel = "level1/1_Softmax.py",
                   bool write_problem = true, const std::string& reference = kReference,
                   bool store_source = false)
      : run_id_(run_id) {
    std::filesystem::create_directories(dir);
    Result<std::unique_ptr<Store>> store = OpenSqliteStore(dir + "/run.db");
    EXPECT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(*store);
    std::string problem = dir + "/../" + problem_rel;
    if (write_problem) {
      std::filesystem::create_directories(std::filesystem::path(problem).parent_path());
      EXPECT_TRUE(WriteFileAtomic(problem, reference).ok());
    }
    RunRecord run = MakeRun(run_id);
    run.problem_path = std::filesystem::path(problem).lexically_normal().string();
    run.problem_sha256 = Sha256Hex(reference);
    if (store_source) run.problem_source = reference;
    EXPECT_TRUE(store_->CreateRun(run).ok());
  }

  // A seed program evaluated ok at `speedup`.
  void Seed(const std::string& id, double speedup) {
    ProgramRecord p = MakeProgram(run_id_, id, "# seed " + id + "\nclass ModelNew: pass\n");
    Check(store_->AddProgramWithEvaluation(p, MakeResult(EvalStatus::kOk, speedup)));
  }

  // A program written by an LLM call (prompt "prompt of <prompt_key>", completion
  // `completion` or "completion of <id>"), evaluated with `status` / `speedup`. An empty
  // parent makes it a translation. Token counts stay unset (estimated) unless given.
  void LlmStep(const std::string& id, const std::string& parent, EvalStatus status,
               double speedup, const std::string& prompt_key = "",
               const std::string& completion = "",
               std::optional<int64_t> completion_tokens = std::nullopt) {
    LlmCallRecord call = MakeLlmCall(run_id_);
    std::string key = prompt_key.empty() ? id : prompt_key;
    call.request = {{"messages",
                     {{{"role", "system"}, {"content", "You write fast kernels."}},
                      {{"role", "user"}, {"content", "prompt of " + key}}}},
                    {"params", {{"temperature", 0.6}}}};
    call.completion = completion.empty() && prompt_key.empty() ? "completion of " + id
                      : completion.empty()                     ? "completion of " + key
                                                               : completion;
    call.completion_tokens = completion_tokens;
    if (completion_tokens) call.prompt_tokens = 10;
    Result<int64_t> call_id = store_->RecordLlmCall(call);
    ASSERT_TRUE(call_id.ok()) << call_id.status().message();
    ProgramRecord p = MakeProgram(run_id_, id, "# program " + id + "\nclass ModelNew: pass\n",
                                  parent);
    p.proposer = ProposerKind::kLlm;
    p.kind = parent.empty() ? ProgramKind::kTranslation : ProgramKind::kEvolution;
    p.llm_call_id = *call_id;
    Check(store_->AddProgramWithEvaluation(p, MakeResult(status, speedup)));
  }

  // A tuner revision (no LLM call).
  void TunerStep(const std::string& id, const std::string& parent, double speedup) {
    ProgramRecord p = MakeProgram(run_id_, id, "# tuned " + id + "\nclass ModelNew: pass\n",
                                  parent);
    Check(store_->AddProgramWithEvaluation(p, MakeResult(EvalStatus::kOk, speedup)));
  }

  Store& store() { return *store_; }

 private:
  static void Check(const Status& s) { EXPECT_TRUE(s.ok()) << s.message(); }
  std::string run_id_;
  std::unique_ptr<Store> store_;
};

// The crafted trajectory of the filter tests (run "r1" in `dir`):
//   s0 seed 1.0x; p1 LLM 2.0x (new best); p2 LLM 1.5x from p1 (slower); p3 LLM wrong;
//   p4 LLM hacked; p5 LLM translation 0.8x; p6 tuner 2.5x from p1 (new best, no prompt);
//   p7 LLM 3.0x from p6 (new best, gain 1.2); p8 LLM 2.2x from p1 repeating p1's prompt and
//   completion (duplicate); p9 LLM 4.0x from p7 with a 70000-token completion (over the cap).
inline void WriteCraftedRun(const std::string& dir, const std::string& run_id = "r1") {
  TrajectoryWriter w(dir, run_id);
  w.Seed("s0", 1.0);
  w.LlmStep("p1", "s0", EvalStatus::kOk, 2.0);
  w.LlmStep("p2", "p1", EvalStatus::kOk, 1.5);
  w.LlmStep("p3", "p1", EvalStatus::kIncorrect, 0);
  w.LlmStep("p4", "p1", EvalStatus::kHacked, 0);
  w.LlmStep("p5", "", EvalStatus::kOk, 0.8);
  w.TunerStep("p6", "p1", 2.5);
  w.LlmStep("p7", "p6", EvalStatus::kOk, 3.0);
  w.LlmStep("p8", "p1", EvalStatus::kOk, 2.2, "p1", "completion of p1");
  w.LlmStep("p9", "p7", EvalStatus::kOk, 4.0, "", "", 70000);
}

}  // namespace ks::export_testing
