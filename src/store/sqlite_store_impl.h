// Internal to src/store: the SqliteStore class, shared by sqlite_store.cc (runs, LLM calls,
// state, maintenance) and sqlite_store_programs.cc (programs, evaluations). Callers use
// OpenSqliteStore (sqlite_store.h) and hold a Store.
// Thread-safety: see sqlite_store.h; every public method locks `mu_`, the *Locked helpers
// expect it held.
#pragma once

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "store/sqlite_db.h"
#include "store/sqlite_store.h"
#include "store/store.h"

namespace ks {

class SqliteStore final : public Store {
 public:
  explicit SqliteStore(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}

  Status CreateRun(const RunRecord& run) override;
  Result<RunRecord> GetRun(const std::string& run_id) override;
  Status UpdateRunStatus(const std::string& run_id, RunStatus status) override;
  Status SetProblemSource(const std::string& run_id, const std::string& source) override;
  Status UpdateRunSummary(const std::string& run_id, const nlohmann::json& summary) override;
  Result<std::vector<RunRecord>> ListRuns() override;

  Status AddProgram(const ProgramRecord& program) override;
  Result<ProgramRecord> GetProgram(const std::string& program_id) override;
  Result<std::vector<ProgramRecord>> ProgramsOfRun(const std::string& run_id) override;
  Status RecordEvaluation(const std::string& program_id, const EvalResult& result) override;
  Status AddProgramWithEvaluation(const ProgramRecord& program, const EvalResult& result) override;
  Result<EvaluationRecord> GetEvaluation(const std::string& program_id) override;
  Result<std::optional<EvaluatedProgram>> FindEvaluatedByCodeHash(
      const std::string& run_id, const std::string& code_hash) override;
  Result<std::vector<ProgramRecord>> PendingPrograms(const std::string& run_id) override;
  Result<std::map<EvalStatus, int64_t>> CountEvaluationsByStatus(
      const std::string& run_id) override;

  Result<int64_t> RecordLlmCall(const LlmCallRecord& call) override;
  Result<std::vector<LlmCallRecord>> LlmCallsOfRun(const std::string& run_id) override;

  Status PutState(const std::string& run_id, const std::string& key,
                  const nlohmann::json& value) override;
  Result<nlohmann::json> GetState(const std::string& run_id, const std::string& key) override;

  Status IntegrityCheck() override;

 private:
  // Whether the one-parameter query `sql` (SELECT 1 ... WHERE x = ?) returns a row.
  Result<bool> ExistsLocked(std::string_view sql, std::string_view key, std::string_view what);
  // NotFound naming the run unless it exists.
  Status CheckRunExistsLocked(const std::string& run_id, std::string_view what);
  // run_state's value of `key` for the run; NotFound when never put. Caller holds mu_.
  Result<nlohmann::json> StateLocked(const std::string& run_id, const std::string& key,
                                     const std::string& what);
  // Inserts inside the caller's transaction.
  Status InsertProgramLocked(const ProgramRecord& program);
  Status InsertEvaluationLocked(const std::string& program_id, const EvalResult& result);
  Result<std::vector<ProgramRecord>> QueryProgramsLocked(std::string_view sql,
                                                         const std::string& run_id,
                                                         std::string_view what);
  // A Status for a problem with the stored data (bad JSON, unknown enum) in `what`.
  Status CorruptRow(std::string_view what, const Status& cause) const;

  std::mutex mu_;
  std::unique_ptr<SqliteDb> db_;
};

// JSON text for a column; invalid UTF-8 (e.g. in a captured stderr tail) is replaced, never
// thrown on.
std::string DumpJsonColumn(const nlohmann::json& value);
// Parses a JSON column; InvalidArgument naming `what` on malformed text.
Result<nlohmann::json> ParseJsonColumn(const std::string& text, std::string_view what);

}  // namespace ks
