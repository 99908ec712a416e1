// Store: the durable record of evolution runs — every candidate program, its one evaluation,
// every LLM call (exact request and completion) and the engine's resumable state. The engine
// holds a Store; export (SFT/RL datasets) and reports read it later. The implementation is
// SQLite (sqlite_store.h); tests may fake this interface.
//
// Contracts every implementation keeps:
// - Each write method is atomic: after a crash (kill -9 included) it is either fully present
//   or absent, and what a method returned OK for stays present.
// - A program has at most one evaluation, never overwritten (every candidate that
//   enters the runner gets exactly one stored result).
// - Errors are Status values whose message names the database and the row that failed;
//   methods never throw.
// Thread-safety: implementations are safe to call from any number of threads at once.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "eval/eval_result.h"

namespace ks {

enum class RunStatus { kRunning, kFinished, kWaiting, kFailed };
const char* RunStatusName(RunStatus s);  // "running", "finished", "waiting", "failed"
Result<RunStatus> ParseRunStatus(const std::string& name);

// Who wrote a program.
enum class ProposerKind { kSeed, kLlm, kTuner, kCommand, kFiles };
const char* ProposerKindName(ProposerKind p);  // "seed", "llm", "tuner", "command", "files"
Result<ProposerKind> ParseProposerKind(const std::string& name);

// What step produced it: the given seed, a PyTorch → kernel translation, or a kernel → kernel
// revision of `parent_id`.
enum class ProgramKind { kSeed, kTranslation, kEvolution };
const char* ProgramKindName(ProgramKind k);  // "seed", "translation", "evolution"
Result<ProgramKind> ParseProgramKind(const std::string& name);

struct RunRecord {
  std::string id;          // chosen by the caller, unique in the database; required
  std::string created_at;  // ISO-8601 UTC, set by the store (ignored on CreateRun)
  nlohmann::json config = nlohmann::json::object();  // the effective configuration
  std::string problem_path;
  std::string problem_sha256;
  // The problem file's text when the run was created (its SHA-256 is problem_sha256), so a
  // run directory copied elsewhere still has its reference. Empty for runs made before sources
  // were stored, until SetProblemSource adds it.
  std::string problem_source;
  std::string backend;  // "triton", "cuda", "cpu"
  RunStatus status = RunStatus::kRunning;
  nlohmann::json summary = nlohmann::json::object();  // best speedup, counts, ... (engine's)
};

struct ProgramRecord {
  std::string id;         // unique in the database; required
  std::string run_id;     // an existing run; required
  std::string parent_id;  // empty for none; otherwise an existing program
  std::string code;       // the full candidate source
  std::string code_hash;  // hash of the normalized code (propose/normalize.h CodeHash); required
  int island = 0;
  int generation = 0;
  ProposerKind proposer = ProposerKind::kSeed;
  ProgramKind kind = ProgramKind::kSeed;
  std::optional<int64_t> llm_call_id;  // the call whose completion produced it, if any
  std::string created_at;              // set by the store (ignored on insert)
  nlohmann::json metrics = nlohmann::json::object();  // feature values and other figures
};

struct EvaluationRecord {
  std::string program_id;
  EvalResult result;       // the full result, as recorded
  std::string created_at;  // set by the store
};

struct EvaluatedProgram {
  ProgramRecord program;
  EvaluationRecord evaluation;
};

struct LlmCallRecord {
  int64_t id = 0;  // assigned by RecordLlmCall (ignored on insert)
  std::string run_id;
  std::string model;
  std::string endpoint;  // base URL, or "command:<argv0>" / "files:<dir>" for other proposers
  nlohmann::json request = nlohmann::json::object();  // {"messages": [...], "params": {...}}
  std::string completion;                             // the exact text returned; "" on error
  std::optional<int64_t> prompt_tokens;               // as reported by the endpoint
  std::optional<int64_t> completion_tokens;
  double latency_s = 0;
  std::string error;       // empty on success
  int attempt = 1;         // 1 for the first try, 2.. for retries
  std::string created_at;  // set by the store
};

class Store {
 public:
  virtual ~Store() = default;

  // --- runs ---
  // Stores a new run. InvalidArgument if `run.id` is empty or already exists.
  virtual Status CreateRun(const RunRecord& run) = 0;
  // NotFound if there is no run `run_id`.
  virtual Result<RunRecord> GetRun(const std::string& run_id) = 0;
  virtual Status UpdateRunStatus(const std::string& run_id, RunStatus status) = 0;
  virtual Status UpdateRunSummary(const std::string& run_id, const nlohmann::json& summary) = 0;
  // Adds the problem source to a run stored without one (made before sources were stored).
  // InvalidArgument if its SHA-256 is not the run's problem_sha256 or the run has a source
  // already; NotFound for an unknown run.
  virtual Status SetProblemSource(const std::string& run_id, const std::string& source) = 0;
  // Every run of the database, in creation order (a run directory's run.db holds one).
  virtual Result<std::vector<RunRecord>> ListRuns() = 0;

  // --- programs and evaluations ---
  // Stores a new program. InvalidArgument if the id, run id or code hash is empty or the id
  // exists; NotFound if its run, parent or LLM call does not exist.
  virtual Status AddProgram(const ProgramRecord& program) = 0;
  // NotFound if there is no program `program_id`.
  virtual Result<ProgramRecord> GetProgram(const std::string& program_id) = 0;
  // The run's programs in insertion order (empty for an unknown run).
  virtual Result<std::vector<ProgramRecord>> ProgramsOfRun(const std::string& run_id) = 0;
  // Records the one evaluation of an existing program. NotFound if the program does not
  // exist; InvalidArgument if it already has an evaluation (the stored one is kept).
  virtual Status RecordEvaluation(const std::string& program_id, const EvalResult& result) = 0;
  // AddProgram and RecordEvaluation in one transaction: both are stored or neither.
  virtual Status AddProgramWithEvaluation(const ProgramRecord& program,
                                          const EvalResult& result) = 0;
  // NotFound if the program has no evaluation (or does not exist).
  virtual Result<EvaluationRecord> GetEvaluation(const std::string& program_id) = 0;
  // The earliest-inserted program of the run with this normalized-code hash that has an
  // evaluation, with it; nullopt if none (dedup before the GPU).
  virtual Result<std::optional<EvaluatedProgram>> FindEvaluatedByCodeHash(
      const std::string& run_id, const std::string& code_hash) = 0;
  // The run's programs without an evaluation, in insertion order: what a resumed run must
  // evaluate.
  virtual Result<std::vector<ProgramRecord>> PendingPrograms(const std::string& run_id) = 0;
  // Number of the run's evaluations per status; statuses with none are absent.
  virtual Result<std::map<EvalStatus, int64_t>> CountEvaluationsByStatus(
      const std::string& run_id) = 0;

  // --- LLM calls ---
  // Stores a call (failed ones included) and returns its id. NotFound for an unknown run.
  virtual Result<int64_t> RecordLlmCall(const LlmCallRecord& call) = 0;
  // The run's calls in the order they were recorded.
  virtual Result<std::vector<LlmCallRecord>> LlmCallsOfRun(const std::string& run_id) = 0;

  // --- resumable engine state (the only values that are overwritten) ---
  // Sets `key` of the run to `value`, replacing any earlier value. NotFound for an unknown run.
  virtual Status PutState(const std::string& run_id, const std::string& key,
                          const nlohmann::json& value) = 0;
  // NotFound if the key was never put.
  virtual Result<nlohmann::json> GetState(const std::string& run_id, const std::string& key) = 0;

  // --- maintenance ---
  // OK if the database passes SQLite's integrity and foreign-key checks; otherwise IOError
  // with the first problems reported.
  virtual Status IntegrityCheck() = 0;
};

}  // namespace ks
