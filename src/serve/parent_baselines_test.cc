#include "serve/parent_baselines.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "serve/fake_runner_test_util.h"

namespace ks {
namespace {

EvalRequest Parent(const std::string& code) {
  EvalRequest r;
  r.problem_source = "class Model: ...";
  r.candidate_source = code;
  r.backend = "cpu";
  return r;
}

TEST(ParentBaselinesTest, MeasuresEachParentOnceAndJoinsRunningEvaluations) {
  FakeRunner runner(/*auto_release=*/false);
  AdmissionQueue queue(&runner, {.max_queue = 8, .max_in_flight = 4});
  ParentBaselines baselines(&queue);
  std::atomic<int> answers{0};
  std::vector<double> speedups(3, 0);
  for (int i = 0; i < 3; ++i) {
    baselines.Measure(Parent("speedup=1.5"), [&, i](const EvalResult& r) {
      speedups[i] = r.speedup.value_or(-1);
      ++answers;
    });
  }
  EXPECT_EQ(runner.pending(), 1u);  // one evaluation for three requests
  runner.ReleaseAll();
  EXPECT_EQ(answers.load(), 3);
  EXPECT_EQ(speedups, std::vector<double>({1.5, 1.5, 1.5}));
  baselines.Measure(Parent("speedup=1.5"), [&](const EvalResult&) { ++answers; });
  EXPECT_EQ(answers.load(), 4);  // from the cache, nothing submitted
  EXPECT_EQ(runner.submitted().size(), 1u);
  BaselineStats s = baselines.stats();
  EXPECT_EQ(s.measured, 1u);
  EXPECT_EQ(s.joined, 2u);
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.cached, 1u);
}

TEST(ParentBaselinesTest, InfrastructureFailuresAreMeasuredAgain) {
  FakeRunner runner;
  AdmissionQueue queue(&runner, {.max_queue = 8, .max_in_flight = 1});
  ParentBaselines baselines(&queue, /*capacity=*/1);
  int calls = 0;
  baselines.Measure(Parent("status=timeout"), [&](const EvalResult&) { ++calls; });
  baselines.Measure(Parent("status=timeout"), [&](const EvalResult&) { ++calls; });
  EXPECT_EQ(runner.submitted().size(), 2u);
  baselines.Measure(Parent("status=incorrect"), [&](const EvalResult&) { ++calls; });
  baselines.Measure(Parent("status=incorrect"), [&](const EvalResult&) { ++calls; });
  EXPECT_EQ(runner.submitted().size(), 3u);  // a verdict is cached
  baselines.Measure(Parent("speedup=2"), [&](const EvalResult&) { ++calls; });
  baselines.Measure(Parent("status=incorrect"), [&](const EvalResult&) { ++calls; });
  EXPECT_EQ(runner.submitted().size(), 5u);  // capacity 1: the older verdict was dropped
  EXPECT_EQ(calls, 6);
}

}  // namespace
}  // namespace ks
