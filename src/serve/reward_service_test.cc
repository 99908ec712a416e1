#include "serve/reward_service.h"

#include <gtest/gtest.h>

#include <thread>

#include "serve/fake_runner_test_util.h"

namespace ks {
namespace {

// A parent whose EVOLVE-BLOCK holds the fake runner's verdict ("speedup=X" / "status=NAME").
std::string Program(const std::string& verdict) {
  return "import torch\n# EVOLVE-BLOCK-START\n# " + verdict + "\n# EVOLVE-BLOCK-END\n";
}
std::string Rewrite(const std::string& verdict) {
  return "Here:\n```python\n# EVOLVE-BLOCK-START\n# " + verdict + "\n# EVOLVE-BLOCK-END\n```\n";
}
RewardItem Item(const std::string& completion, const std::string& parent_verdict) {
  RewardItem item;
  item.completion = completion;
  item.truth.problem_path = "p.py";
  item.truth.reference_code = "class Model: ...";
  item.truth.parent_code = Program(parent_verdict);
  return item;
}
WaitControl Within(double seconds) {
  WaitControl w;
  w.deadline = std::chrono::steady_clock::now() +
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(seconds));
  return w;
}

TEST(RewardServiceTest, RewardsTheSpeedupOverTheParentTimedInterleavedWithIt) {
  FakeRunner runner;
  AdmissionQueue queue(&runner, {.max_queue = 16, .max_in_flight = 2});
  ParentBaselines baselines(&queue);
  RewardService service(&queue, &baselines, {});
  std::vector<RewardItem> items = {
      Item(Rewrite("speedup=3.0"), "speedup=1.5"),       // 2x the parent
      Item(Rewrite("status=incorrect speedup=9"), "speedup=1.5"),  // wrong: 0
      Item(Rewrite("status=hacked speedup=9"), "speedup=1.5"),     // hacked: 0
      Item("no code here", "speedup=1.5"),               // unparsable: 0, not evaluated
      Item(Rewrite("speedup=0.75"), "speedup=1.5"),      // slower but correct: 0.5
  };
  items[1].truth.parent_speedup = 99;  // the exported figure is not used when measured here
  std::vector<RewardItemResult> out;
  ASSERT_EQ(service.Score(items, Within(5), &out), CallOutcome::kDone);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_DOUBLE_EQ(out[0].reward, 2.0);
  EXPECT_EQ(out[0].status, "ok");
  EXPECT_EQ(out[0].parent_baseline, "interleaved");
  EXPECT_DOUBLE_EQ(*out[0].speedup_vs_parent, 2.0);
  ASSERT_TRUE(out[0].speedup_vs_parent_ci95.has_value());  // measured, so it has a CI
  EXPECT_LT(out[0].speedup_vs_parent_ci95->first, 2.0);
  EXPECT_DOUBLE_EQ(*out[0].speedup, 3.0);  // over the reference: 2x a 1.5x parent
  for (const EvalRequest& r : runner.submitted()) {  // children carry the parent as baseline
    if (r.candidate_path.find("#child-") != std::string::npos) {
      EXPECT_EQ(r.baseline_source, items[0].truth.parent_code);
    }
  }
  EXPECT_EQ(out[0].edit_kind, "block_rewrite");
  EXPECT_EQ(out[1].reward, 0);
  EXPECT_EQ(out[1].status, "incorrect");
  EXPECT_EQ(out[2].reward, 0);
  EXPECT_EQ(out[2].status, "hacked");
  EXPECT_EQ(out[3].reward, 0);
  EXPECT_EQ(out[3].status, "parse_error");
  EXPECT_NE(out[3].message.find("no code block"), std::string::npos);
  EXPECT_DOUBLE_EQ(out[4].reward, 0.5);
  // 4 children + 1 parent evaluated once for all of them.
  EXPECT_EQ(runner.submitted().size(), 5u);
}

TEST(RewardServiceTest, FallsBackToTheExportedParentSpeedupWhenTheParentFailsHere) {
  FakeRunner runner;
  AdmissionQueue queue(&runner, {.max_queue = 16, .max_in_flight = 1});
  ParentBaselines baselines(&queue);
  RewardServiceOptions o;
  o.reward.shape = RewardShape::kLogRatio;
  RewardService service(&queue, &baselines, o);
  std::vector<RewardItem> items = {Item(Rewrite("speedup=4"), "status=incorrect"),
                                   Item(Rewrite("speedup=4"), "status=runtime_error")};
  items[0].truth.parent_speedup = 2.0;
  std::vector<RewardItemResult> out;
  ASSERT_EQ(service.Score(items, Within(5), &out), CallOutcome::kDone);
  EXPECT_EQ(out[0].parent_baseline, "ground_truth");
  EXPECT_DOUBLE_EQ(out[0].reward, 2.0);  // 1 + log2(4 / 2)
  EXPECT_EQ(out[0].parent_status, "incorrect");
  EXPECT_EQ(out[1].parent_baseline, "reference");
  EXPECT_DOUBLE_EQ(out[1].reward, 3.0);  // 1 + log2(4 / 1)
  // a failed parent is no baseline: each child was timed again, against the reference
  size_t children = 0, against_reference = 0;
  for (const EvalRequest& r : runner.submitted()) {
    if (r.candidate_path.find("#child-") == std::string::npos) continue;
    ++children;
    if (r.baseline_source.empty()) ++against_reference;
  }
  EXPECT_EQ(children, 4u);
  EXPECT_EQ(against_reference, 2u);
}

TEST(RewardServiceTest, ATranslationIsRewardedAgainstTheReference) {
  FakeRunner runner;
  AdmissionQueue queue(&runner, {.max_queue = 4, .max_in_flight = 1});
  ParentBaselines baselines(&queue);
  RewardService service(&queue, &baselines, {});
  RewardItem item = Item("```python\nclass ModelNew:\n    pass  # speedup=1.25\n```", "");
  item.truth.parent_code = "";
  std::vector<RewardItemResult> out;
  ASSERT_EQ(service.Score({item}, Within(5), &out), CallOutcome::kDone);
  EXPECT_EQ(out[0].edit_kind, "translation");
  EXPECT_EQ(out[0].parent_baseline, "reference");
  EXPECT_DOUBLE_EQ(out[0].reward, 1.25);
  EXPECT_EQ(runner.submitted().size(), 1u);  // no parent to measure
}

TEST(RewardServiceTest, FullQueueIsBusyAndDeadlineTakesQueuedWorkBack) {
  FakeRunner runner(/*auto_release=*/false);
  AdmissionQueue queue(&runner, {.max_queue = 2, .max_in_flight = 1});
  ParentBaselines baselines(&queue);
  RewardService service(&queue, &baselines, {});
  std::vector<RewardItem> four(4, Item(Rewrite("speedup=2"), "speedup=1"));
  std::vector<RewardItemResult> out;
  EXPECT_EQ(service.Score(four, Within(5), &out), CallOutcome::kTooLarge);  // > 2 queued + 1
  std::vector<RewardItem> two(2, Item(Rewrite("speedup=2"), "speedup=1"));
  // The first call fills the queue and waits past its deadline.
  std::thread first([&] {
    std::vector<RewardItemResult> r;
    EXPECT_EQ(service.Score(two, Within(0.5), &r), CallOutcome::kDeadline);
  });
  ASSERT_TRUE(runner.WaitPending(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(service.Score(two, Within(5), &out), CallOutcome::kBusy);
  first.join();
  // Its queued child evaluation was cancelled; the parent baseline stays queued (other requests
  // may need it) and what was already running finishes.
  EXPECT_EQ(queue.stats().queued, 1u);
  EXPECT_GE(queue.stats().cancelled, 1u);
  runner.ReleaseAll();
  EXPECT_EQ(queue.stats().in_flight, 0u);
}

TEST(RewardServiceTest, ClientGoneEndsTheWait) {
  FakeRunner runner(/*auto_release=*/false);
  AdmissionQueue queue(&runner, {.max_queue = 4, .max_in_flight = 1});
  ParentBaselines baselines(&queue);
  RewardService service(&queue, &baselines, {});
  EvalRequest r;
  r.candidate_source = "speedup=2";
  WaitControl w = Within(30);
  std::atomic<bool> gone{false};
  w.client_gone = [&] { return gone.load(); };
  std::thread later([&] {
    runner.WaitPending(1);
    gone = true;
  });
  EvalResult result;
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(service.Evaluate(r, w, &result), CallOutcome::kClientGone);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  later.join();
  runner.ReleaseAll();
}

}  // namespace
}  // namespace ks
