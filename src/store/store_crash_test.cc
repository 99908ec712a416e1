// kill -9 at random moments while a child process writes programs, evaluations, LLM calls and
// state; the parent then reopens the database and checks what a resumed run relies on.
#include <errno.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include "store/sqlite_db.h"
#include "store/sqlite_store.h"
#include "store/test_util.h"

namespace ks {
namespace {

using store_testing::MakeLlmCall;
using store_testing::MakeProgram;
using store_testing::MakeResult;
using store_testing::MakeRun;
using store_testing::ScratchDir;

constexpr char kRun[] = "r";

void Report(int fd, const std::string& line) {
  std::string text = line + "\n";
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(4);
    p += n;
    left -= static_cast<size_t>(n);
  }
}

// The child: resumes like an engine (evaluates pending programs first), then writes forever
// in the three shapes the engine uses. After each committed evaluation it reports "E <id>" on
// `fd`. Exits non-zero on any error; it is normally SIGKILLed.
[[noreturn]] void ChildWriteLoop(const std::string& path, int iteration, int fd) {
  Result<std::unique_ptr<Store>> opened = OpenSqliteStore(path);
  if (!opened.ok()) _exit(2);
  Store& store = **opened;
  Result<std::vector<ProgramRecord>> pending = store.PendingPrograms(kRun);
  if (!pending.ok()) _exit(3);
  for (const ProgramRecord& p : *pending) {
    if (!store.RecordEvaluation(p.id, MakeResult(EvalStatus::kOk, 1.0)).ok()) _exit(3);
    Report(fd, "E " + p.id);
  }
  std::string parent;
  for (int k = 0;; ++k) {
    std::string id = "i" + std::to_string(iteration) + "-" + std::to_string(k);
    ProgramRecord p = MakeProgram(kRun, id, "x = " + id + "\n", parent);
    EvalResult r = MakeResult(k % 5 == 0 ? EvalStatus::kIncorrect : EvalStatus::kOk, 1.0 + k);
    Status s;
    switch (k % 3) {
      case 0:  // program first, evaluation later (the runner path)
        s = store.AddProgram(p);
        if (s.ok()) s = store.RecordEvaluation(id, r);
        break;
      case 1:  // dedup hit: program and reused result at once
        s = store.AddProgramWithEvaluation(p, r);
        break;
      default: {  // an LLM proposal, then engine state
        Result<int64_t> call = store.RecordLlmCall(MakeLlmCall(kRun));
        if (!call.ok()) _exit(3);
        p.llm_call_id = *call;
        s = store.AddProgramWithEvaluation(p, r);
        if (s.ok()) s = store.PutState(kRun, "round", k);
        break;
      }
    }
    if (!s.ok()) _exit(3);
    Report(fd, "E " + id);
    parent = id;
  }
}

// Reads what the child reported until `deadline`, then returns.
void ReadUntil(int fd, std::chrono::steady_clock::time_point deadline, std::string* out) {
  char buf[4096];
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return;
    pollfd pfd{fd, POLLIN, 0};
    int rc = poll(&pfd, 1, static_cast<int>(left.count()));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) return;
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    out->append(buf, static_cast<size_t>(n));
  }
}

void ReadToEnd(int fd, std::string* out) {
  char buf[4096];
  while (true) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    out->append(buf, static_cast<size_t>(n));
  }
}

int64_t QueryCount(const std::string& path, const std::string& sql) {
  Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path);
  EXPECT_TRUE(db.ok());
  if (!db.ok()) return -1;
  Result<SqliteStatement> st = (*db)->Prepare(sql, "count");
  EXPECT_TRUE(st.ok()) << st.status().ToString();
  if (!st.ok()) return -1;
  Result<bool> row = st->Step();
  return row.ok() && *row ? st->ColumnInt64(0) : -1;
}

TEST(StoreCrashTest, KillNineAtRandomMomentsLosesNothingCommitted) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string path = dir.File("run.db");
  {
    Result<std::unique_ptr<Store>> store = OpenSqliteStore(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE((*store)->CreateRun(MakeRun(kRun)).ok());
  }
  const unsigned seed = 20250131;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> delay_ms(1, 120);
  std::set<std::string> acknowledged;  // evaluations the child saw committed
  size_t prev_programs = 0;
  int64_t prev_evaluations = 0;
  constexpr int kIterations = 20;
  for (int iteration = 0; iteration < kIterations; ++iteration) {
    SCOPED_TRACE("iteration " + std::to_string(iteration) + ", seed " + std::to_string(seed));
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      ChildWriteLoop(path, iteration, fds[1]);
    }
    close(fds[1]);
    std::string reported;
    ReadUntil(fds[0], std::chrono::steady_clock::now() + std::chrono::milliseconds(delay_ms(rng)),
              &reported);
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int wstatus = 0;
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    ReadToEnd(fds[0], &reported);
    close(fds[0]);
    ASSERT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL)
        << "the writer stopped by itself (exit " << WEXITSTATUS(wstatus) << ")";
    std::istringstream lines(reported);
    std::string tag, id;
    while (lines >> tag >> id) acknowledged.insert(id);

    Result<std::unique_ptr<Store>> opened = OpenSqliteStore(path);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    Store& store = **opened;
    Status integrity = store.IntegrityCheck();
    ASSERT_TRUE(integrity.ok()) << integrity.ToString();
    Result<std::vector<ProgramRecord>> programs = store.ProgramsOfRun(kRun);
    ASSERT_TRUE(programs.ok());
    std::set<std::string> ids;
    for (const ProgramRecord& p : *programs) ids.insert(p.id);
    EXPECT_EQ(ids.size(), programs->size()) << "duplicate program rows";
    Result<std::map<EvalStatus, int64_t>> counts = store.CountEvaluationsByStatus(kRun);
    ASSERT_TRUE(counts.ok());
    int64_t evaluations = 0;
    for (const auto& [status, n] : *counts) evaluations += n;
    EXPECT_GE(programs->size(), prev_programs);
    EXPECT_GE(evaluations, prev_evaluations);
    prev_programs = programs->size();
    prev_evaluations = evaluations;
    // Every acknowledged evaluation survived, exactly once, for a stored program.
    for (const std::string& acked : acknowledged) {
      EXPECT_TRUE(store.GetEvaluation(acked).ok()) << "lost evaluation of " << acked;
    }
    // At most the one program between AddProgram and RecordEvaluation is left to resume.
    Result<std::vector<ProgramRecord>> pending = store.PendingPrograms(kRun);
    ASSERT_TRUE(pending.ok());
    EXPECT_LE(pending->size(), 1u);
    EXPECT_EQ(static_cast<int64_t>(programs->size()) - evaluations,
              static_cast<int64_t>(pending->size()));
  }
  EXPECT_EQ(QueryCount(path,
                       "SELECT count(*) FROM evaluations e LEFT JOIN programs p "
                       "ON p.id = e.program_id WHERE p.id IS NULL"),
            0);
  EXPECT_EQ(QueryCount(path, "SELECT count(*) - count(DISTINCT program_id) FROM evaluations"), 0);
  EXPECT_GT(prev_evaluations, int64_t{kIterations});  // the children did real work
}

}  // namespace
}  // namespace ks
