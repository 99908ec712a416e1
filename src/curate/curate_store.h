// CurateStore: the stage state of one `kernelsmith curate` output directory, in SQLite
// (OUT_DIR/curate.db, WAL). Every batch's results are committed in one transaction together
// with the mark that says the batch is done, so a run killed at any point (kill -9 included)
// resumes with nothing completed lost and nothing done twice.
//
// Tables: meta (key/value: the run's configuration), files (every file extracted, with its
// source directory), extracted (the raw `extract` records, per file), inputs (the `inputs`
// result per module id, from deduction), llm (per module id: the LLM's reply, or the error
// that stopped it, and the `inputs` verification of its answer).
// Thread-safety: all methods may be called from any thread (one connection behind a mutex).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "store/sqlite_db.h"

namespace ks {

struct ExtractedRow {
  std::string path;  // the absolute file path the record came from
  int root_index = 0;
  nlohmann::json record;
};

struct LlmRow {
  std::string reply;    // the completion ("" when the call failed)
  std::string error;    // why no answer could be verified ("" when verified)
  nlohmann::json verified;  // the `inputs` result of the answer; null when none
};

class CurateStore {
 public:
  // Opens or creates `path`. IOError names the file and the reason.
  static Result<std::unique_ptr<CurateStore>> Open(const std::string& path);

  Result<std::optional<std::string>> GetMeta(const std::string& key);
  Status SetMeta(const std::string& key, const std::string& value);

  // Paths of the files whose extraction is committed.
  Result<std::set<std::string>> DoneFiles();
  // Commits the records of a batch and marks its files done, atomically.
  Status AddExtracted(const std::vector<std::pair<std::string, int>>& files,
                      const std::vector<ExtractedRow>& rows);
  Result<std::vector<ExtractedRow>> AllExtracted();

  Result<std::map<int64_t, nlohmann::json>> AllInputs();
  Status PutInputs(const std::vector<std::pair<int64_t, nlohmann::json>>& results);

  Result<std::map<int64_t, LlmRow>> AllLlm();
  Status PutLlm(int64_t id, const LlmRow& row);

 private:
  explicit CurateStore(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}
  std::mutex mu_;
  std::unique_ptr<SqliteDb> db_;
};

}  // namespace ks
