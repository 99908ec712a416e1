#include "serve/admission_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "serve/fake_runner_test_util.h"

namespace ks {
namespace {

struct Collected {
  std::mutex mu;
  std::vector<EvalResult> results;
  Runner::Callback Sink() {
    return [this](EvalResult r) {
      std::lock_guard<std::mutex> lock(mu);
      results.push_back(std::move(r));
    };
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mu);
    return results.size();
  }
};

AdmissionQueue::Job MakeJob(const std::string& source, Runner::Callback done,
                            CancelFlag cancel = nullptr) {
  AdmissionQueue::Job job;
  job.request.candidate_source = source;
  job.done = std::move(done);
  job.cancel = std::move(cancel);
  return job;
}

TEST(AdmissionQueueTest, HandsTheRunnerAtMostMaxInFlight) {
  FakeRunner runner(/*auto_release=*/false);
  AdmissionQueue q(&runner, {.max_queue = 10, .max_in_flight = 2});
  Collected c;
  std::vector<AdmissionQueue::Job> jobs;
  for (int i = 0; i < 5; ++i) jobs.push_back(MakeJob("speedup=2", c.Sink()));
  ASSERT_TRUE(q.TrySubmit(std::move(jobs)));
  EXPECT_EQ(runner.pending(), 2u);
  EXPECT_EQ(q.stats().queued, 3u);
  EXPECT_EQ(q.stats().in_flight, 2u);
  runner.ReleaseOne();  // frees a slot: the next queued job starts
  EXPECT_EQ(runner.pending(), 2u);
  EXPECT_EQ(q.stats().queued, 2u);
  while (runner.ReleaseOne()) {
  }
  EXPECT_EQ(c.size(), 5u);
  EXPECT_EQ(q.stats().in_flight, 0u);
  EXPECT_EQ(q.stats().queued, 0u);
}

TEST(AdmissionQueueTest, RefusesABatchThatDoesNotFitWhole) {
  FakeRunner runner(/*auto_release=*/false);
  AdmissionQueue q(&runner, {.max_queue = 3, .max_in_flight = 1});
  Collected c;
  std::vector<AdmissionQueue::Job> first;
  for (int i = 0; i < 4; ++i) first.push_back(MakeJob("speedup=1", c.Sink()));
  ASSERT_TRUE(q.TrySubmit(std::move(first)));  // 1 on the free slot, 3 queued: full
  std::vector<AdmissionQueue::Job> more;
  more.push_back(MakeJob("speedup=1", c.Sink()));
  EXPECT_FALSE(q.TrySubmit(std::move(more)));
  EXPECT_EQ(q.stats().refused, 1u);
  EXPECT_EQ(q.stats().queued, 3u);
  runner.ReleaseOne();  // one queued job starts: room for one
  std::vector<AdmissionQueue::Job> again;
  again.push_back(MakeJob("speedup=1", c.Sink()));
  EXPECT_TRUE(q.TrySubmit(std::move(again)));
  runner.ReleaseAll();
  while (runner.ReleaseOne() || q.stats().in_flight > 0) runner.ReleaseAll();
  EXPECT_EQ(c.size(), 5u);
}

TEST(AdmissionQueueTest, CancelTakesBackQueuedJobsOnly) {
  FakeRunner runner(/*auto_release=*/false);
  AdmissionQueue q(&runner, {.max_queue = 10, .max_in_flight = 1});
  Collected gone, other;
  CancelFlag flag = MakeCancelFlag();
  std::vector<AdmissionQueue::Job> jobs;
  for (int i = 0; i < 3; ++i) jobs.push_back(MakeJob("speedup=1", gone.Sink(), flag));
  ASSERT_TRUE(q.TrySubmit(std::move(jobs)));
  std::vector<AdmissionQueue::Job> others;
  others.push_back(MakeJob("speedup=3", other.Sink()));
  ASSERT_TRUE(q.TrySubmit(std::move(others)));
  q.Cancel(flag, "client disconnected");
  // The running job finishes normally; the two queued ones come back cancelled at once.
  ASSERT_EQ(gone.size(), 2u);
  EXPECT_EQ(gone.results[0].status, EvalStatus::kInfraError);
  EXPECT_NE(gone.results[0].message.find("client disconnected"), std::string::npos);
  EXPECT_EQ(q.stats().cancelled, 2u);
  runner.ReleaseAll();
  runner.ReleaseAll();
  EXPECT_EQ(gone.size(), 3u);
  EXPECT_EQ(gone.results[2].status, EvalStatus::kOk);
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(runner.submitted().size(), 2u);  // the cancelled jobs never reached the runner
}

TEST(AdmissionQueueTest, UrgentJobsJumpTheQueueAndShutdownCancelsTheRest) {
  FakeRunner runner(/*auto_release=*/false);
  AdmissionQueue q(&runner, {.max_queue = 2, .max_in_flight = 1});
  Collected c;
  std::vector<AdmissionQueue::Job> jobs;
  for (int i = 0; i < 3; ++i) jobs.push_back(MakeJob("child speedup=1", c.Sink()));
  ASSERT_TRUE(q.TrySubmit(std::move(jobs)));
  q.SubmitUrgent(MakeJob("parent speedup=1", c.Sink()));  // beyond max_queue, first in line
  runner.ReleaseOne();
  ASSERT_EQ(runner.submitted().size(), 2u);
  EXPECT_EQ(runner.submitted()[1].candidate_source, "parent speedup=1");
  std::thread releaser([&] {
    runner.WaitPending(1);
    runner.ReleaseAll();
  });
  q.Shutdown();  // waits for the running job; the 2 queued ones are cancelled
  releaser.join();
  EXPECT_EQ(c.size(), 4u);
  std::vector<AdmissionQueue::Job> late;
  late.push_back(MakeJob("speedup=1", c.Sink()));
  EXPECT_FALSE(q.TrySubmit(std::move(late)));
}

}  // namespace
}  // namespace ks
