// SqliteStore: programs and evaluations.
#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "store/sqlite_store_impl.h"

namespace ks {
namespace {

// Columns ReadProgram expects, in order, from `programs p`.
constexpr std::string_view kProgramColumns =
    "p.id, p.run_id, p.parent_id, p.code, p.code_hash, p.island, p.generation, p.proposer, "
    "p.kind, p.llm_call_id, p.created_at, p.metrics";
constexpr int kProgramColumnCount = 12;
// Columns ReadEvaluation expects, in order, from `evaluations e`.
constexpr std::string_view kEvaluationColumns = "e.program_id, e.result, e.created_at";

// The program in the columns starting at `first`; InvalidArgument for a malformed row.
Result<ProgramRecord> ReadProgram(const SqliteStatement& st, int first) {
  ProgramRecord p;
  p.id = st.ColumnText(first + 0);
  p.run_id = st.ColumnText(first + 1);
  p.parent_id = st.ColumnText(first + 2);
  p.code = st.ColumnText(first + 3);
  p.code_hash = st.ColumnText(first + 4);
  p.island = static_cast<int>(st.ColumnInt64(first + 5));
  p.generation = static_cast<int>(st.ColumnInt64(first + 6));
  Result<ProposerKind> proposer = ParseProposerKind(st.ColumnText(first + 7));
  if (!proposer.ok()) return proposer.status();
  p.proposer = *proposer;
  Result<ProgramKind> kind = ParseProgramKind(st.ColumnText(first + 8));
  if (!kind.ok()) return kind.status();
  p.kind = *kind;
  p.llm_call_id = st.ColumnOptionalInt64(first + 9);
  p.created_at = st.ColumnText(first + 10);
  Result<nlohmann::json> metrics = ParseJsonColumn(st.ColumnText(first + 11), "programs.metrics");
  if (!metrics.ok()) return metrics.status();
  p.metrics = std::move(*metrics);
  return p;
}

Result<EvaluationRecord> ReadEvaluation(const SqliteStatement& st, int first) {
  EvaluationRecord e;
  e.program_id = st.ColumnText(first + 0);
  Result<nlohmann::json> json = ParseJsonColumn(st.ColumnText(first + 1), "evaluations.result");
  if (!json.ok()) return json.status();
  Result<EvalResult> result = EvalResult::FromJson(*json);
  if (!result.ok()) return result.status();
  e.result = std::move(*result);
  e.created_at = st.ColumnText(first + 2);
  return e;
}

}  // namespace

Status SqliteStore::InsertProgramLocked(const ProgramRecord& p) {
  std::string what = fmt::format("add program '{}'", p.id);
  if (p.id.empty() || p.run_id.empty() || p.code_hash.empty()) {
    return Status::InvalidArgument(fmt::format(
        "{}: {}: id, run id and code hash are required (got id '{}', run '{}', hash '{}')",
        db_->path(), what, p.id, p.run_id, p.code_hash));
  }
  Result<bool> exists = ExistsLocked("SELECT 1 FROM programs WHERE id = ?", p.id, what);
  if (!exists.ok()) return exists.status();
  if (*exists) {
    return Status::InvalidArgument(
        fmt::format("{}: {}: a program with this id already exists", db_->path(), what));
  }
  Status s = CheckRunExistsLocked(p.run_id, what);
  if (!s.ok()) return s;
  if (!p.parent_id.empty()) {
    exists = ExistsLocked("SELECT 1 FROM programs WHERE id = ?", p.parent_id, what);
    if (!exists.ok()) return exists.status();
    if (!*exists) {
      return Status::NotFound(
          fmt::format("{}: {}: parent program '{}' is not stored", db_->path(), what, p.parent_id));
    }
  }
  if (p.llm_call_id.has_value()) {
    Result<SqliteStatement> check = db_->Prepare("SELECT 1 FROM llm_calls WHERE id = ?", what);
    if (!check.ok()) return check.status();
    check->BindInt64(1, *p.llm_call_id);
    exists = check->Step();
    if (!exists.ok()) return exists.status();
    if (!*exists) {
      return Status::NotFound(
          fmt::format("{}: {}: LLM call {} is not stored", db_->path(), what, *p.llm_call_id));
    }
  }
  Result<SqliteStatement> st = db_->Prepare(
      "INSERT INTO programs (id, seq, run_id, parent_id, code, code_hash, island, generation, "
      "proposer, kind, llm_call_id, metrics) "
      "VALUES (?, (SELECT coalesce(max(seq), 0) + 1 FROM programs), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      what);
  if (!st.ok()) return st.status();
  st->BindText(1, p.id)
      .BindText(2, p.run_id)
      .BindTextOrNull(3, p.parent_id)
      .BindText(4, p.code)
      .BindText(5, p.code_hash)
      .BindInt64(6, p.island)
      .BindInt64(7, p.generation)
      .BindText(8, ProposerKindName(p.proposer))
      .BindText(9, ProgramKindName(p.kind))
      .BindOptionalInt64(10, p.llm_call_id)
      .BindText(11, DumpJsonColumn(p.metrics));
  return st->Run();
}

Status SqliteStore::InsertEvaluationLocked(const std::string& program_id,
                                           const EvalResult& result) {
  std::string what = fmt::format("record evaluation of program '{}'", program_id);
  Result<bool> exists = ExistsLocked("SELECT 1 FROM programs WHERE id = ?", program_id, what);
  if (!exists.ok()) return exists.status();
  if (!*exists) {
    return Status::NotFound(
        fmt::format("{}: {}: the program is not stored (add it first)", db_->path(), what));
  }
  exists = ExistsLocked("SELECT 1 FROM evaluations WHERE program_id = ?", program_id, what);
  if (!exists.ok()) return exists.status();
  if (*exists) {
    return Status::InvalidArgument(fmt::format(
        "{}: {}: the program already has an evaluation; evaluations are never overwritten",
        db_->path(), what));
  }
  Result<SqliteStatement> st = db_->Prepare(
      "INSERT INTO evaluations (program_id, status, speedup, ref_us, cand_us, correct, result) "
      "VALUES (?, ?, ?, ?, ?, ?, ?)",
      what);
  if (!st.ok()) return st.status();
  st->BindText(1, program_id)
      .BindText(2, EvalStatusName(result.status))
      .BindOptionalDouble(3, result.speedup)
      .BindOptionalDouble(4, result.ref_us)
      .BindOptionalDouble(5, result.cand_us)
      .BindInt64(6, result.correct_and_clean() ? 1 : 0)
      .BindText(7, DumpJsonColumn(result.ToJson()));
  return st->Run();
}

Status SqliteStore::AddProgram(const ProgramRecord& program) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<SqliteTransaction> txn =
      SqliteTransaction::Begin(db_.get(), fmt::format("add program '{}'", program.id));
  if (!txn.ok()) return txn.status();
  Status s = InsertProgramLocked(program);
  if (!s.ok()) return s;
  return txn->Commit();
}

Status SqliteStore::RecordEvaluation(const std::string& program_id, const EvalResult& result) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<SqliteTransaction> txn = SqliteTransaction::Begin(
      db_.get(), fmt::format("record evaluation of program '{}'", program_id));
  if (!txn.ok()) return txn.status();
  Status s = InsertEvaluationLocked(program_id, result);
  if (!s.ok()) return s;
  return txn->Commit();
}

Status SqliteStore::AddProgramWithEvaluation(const ProgramRecord& program,
                                             const EvalResult& result) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<SqliteTransaction> txn =
      SqliteTransaction::Begin(db_.get(), fmt::format("add evaluated program '{}'", program.id));
  if (!txn.ok()) return txn.status();
  Status s = InsertProgramLocked(program);
  if (!s.ok()) return s;
  s = InsertEvaluationLocked(program.id, result);
  if (!s.ok()) return s;
  return txn->Commit();
}

Result<ProgramRecord> SqliteStore::GetProgram(const std::string& program_id) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string what = fmt::format("read program '{}'", program_id);
  Result<SqliteStatement> st =
      db_->Prepare(fmt::format("SELECT {} FROM programs p WHERE p.id = ?", kProgramColumns), what);
  if (!st.ok()) return st.status();
  st->BindText(1, program_id);
  Result<bool> row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::NotFound(fmt::format("{}: no program '{}'", db_->path(), program_id));
  Result<ProgramRecord> p = ReadProgram(*st, 0);
  if (!p.ok()) return CorruptRow(what, p.status());
  return p;
}

Result<std::vector<ProgramRecord>> SqliteStore::QueryProgramsLocked(std::string_view sql,
                                                                    const std::string& run_id,
                                                                    std::string_view what) {
  Result<SqliteStatement> st = db_->Prepare(sql, what);
  if (!st.ok()) return st.status();
  st->BindText(1, run_id);
  std::vector<ProgramRecord> programs;
  while (true) {
    Result<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    Result<ProgramRecord> p = ReadProgram(*st, 0);
    if (!p.ok()) return CorruptRow(what, p.status());
    programs.push_back(std::move(*p));
  }
  return programs;
}

Result<std::vector<ProgramRecord>> SqliteStore::ProgramsOfRun(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  return QueryProgramsLocked(
      fmt::format("SELECT {} FROM programs p WHERE p.run_id = ? ORDER BY p.seq", kProgramColumns),
      run_id, fmt::format("read programs of run '{}'", run_id));
}

Result<std::vector<ProgramRecord>> SqliteStore::PendingPrograms(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  return QueryProgramsLocked(
      fmt::format("SELECT {} FROM programs p WHERE p.run_id = ? AND NOT EXISTS "
                  "(SELECT 1 FROM evaluations e WHERE e.program_id = p.id) ORDER BY p.seq",
                  kProgramColumns),
      run_id, fmt::format("read pending programs of run '{}'", run_id));
}

Result<EvaluationRecord> SqliteStore::GetEvaluation(const std::string& program_id) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string what = fmt::format("read evaluation of program '{}'", program_id);
  Result<SqliteStatement> st = db_->Prepare(
      fmt::format("SELECT {} FROM evaluations e WHERE e.program_id = ?", kEvaluationColumns), what);
  if (!st.ok()) return st.status();
  st->BindText(1, program_id);
  Result<bool> row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row) {
    return Status::NotFound(
        fmt::format("{}: program '{}' has no evaluation", db_->path(), program_id));
  }
  Result<EvaluationRecord> e = ReadEvaluation(*st, 0);
  if (!e.ok()) return CorruptRow(what, e.status());
  return e;
}

Result<std::optional<EvaluatedProgram>> SqliteStore::FindEvaluatedByCodeHash(
    const std::string& run_id, const std::string& code_hash) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string what = fmt::format("look up code hash {} in run '{}'", code_hash, run_id);
  Result<SqliteStatement> st = db_->Prepare(
      fmt::format("SELECT {}, {} FROM programs p JOIN evaluations e ON e.program_id = p.id "
                  "WHERE p.run_id = ? AND p.code_hash = ? ORDER BY p.seq LIMIT 1",
                  kProgramColumns, kEvaluationColumns),
      what);
  if (!st.ok()) return st.status();
  st->BindText(1, run_id).BindText(2, code_hash);
  Result<bool> row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<EvaluatedProgram>();
  Result<ProgramRecord> p = ReadProgram(*st, 0);
  if (!p.ok()) return CorruptRow(what, p.status());
  Result<EvaluationRecord> e = ReadEvaluation(*st, kProgramColumnCount);
  if (!e.ok()) return CorruptRow(what, e.status());
  return std::optional<EvaluatedProgram>(EvaluatedProgram{std::move(*p), std::move(*e)});
}

Result<std::map<EvalStatus, int64_t>> SqliteStore::CountEvaluationsByStatus(
    const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string what = fmt::format("count evaluations of run '{}'", run_id);
  Result<SqliteStatement> st = db_->Prepare(
      "SELECT e.status, count(*) FROM evaluations e JOIN programs p ON p.id = e.program_id "
      "WHERE p.run_id = ? GROUP BY e.status",
      what);
  if (!st.ok()) return st.status();
  st->BindText(1, run_id);
  std::map<EvalStatus, int64_t> counts;
  while (true) {
    Result<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    Result<EvalStatus> status = ParseEvalStatus(st->ColumnText(0));
    if (!status.ok()) return CorruptRow(what, status.status());
    counts[*status] = st->ColumnInt64(1);
  }
  return counts;
}

}  // namespace ks
