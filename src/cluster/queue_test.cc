// The cluster queue against a real redis-server: protocol, idempotency, claiming of stalled
// entries, poison requests, back-pressure and a Redis restart mid-run.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "cluster/queue_protocol.h"
#include "cluster/queue_runner.h"
#include "cluster/queue_worker.h"
#include "cluster/redis_test_server.h"
#include "eval/protocol.h"

namespace ks {
namespace {

using namespace std::chrono_literals;

// The local evaluator at the seam: counts evaluations, takes `delay` each.
class CountingRunner : public Runner {
 public:
  explicit CountingRunner(std::chrono::milliseconds delay = 0ms) : delay_(delay) {}
  void Submit(EvalRequest request, Callback done) override {
    ++count;
    std::this_thread::sleep_for(delay_);
    EvalResult r;
    r.status = EvalStatus::kOk;
    r.candidate.path = request.candidate_path;
    r.speedup = 1.5;
    done(r);
  }
  void Shutdown() override {}
  std::atomic<int> count{0};

 private:
  std::chrono::milliseconds delay_;
};

EvalRequest Request(const std::string& name) {
  EvalRequest r;
  r.problem_path = "p.py";
  r.problem_source = "class Model: pass\n";
  r.candidate_path = name;
  r.candidate_source = "# " + name + "\n";
  return r;
}

class WorkerThread {
 public:
  WorkerThread(const QueueUrl& url, Runner* local, double visibility_s = 60,
               const std::string& name = "w1") {
    o_.redis = RedisOptionsFor(url);
    o_.name = name;
    o_.consumers = 2;
    o_.hello = {{"device", {{"name", "Test CPU"}}}};
    o_.visibility_timeout_s = visibility_s;
    o_.heartbeat_s = 0.4;
    o_.stop = &stop_;
    thread_ = std::thread([this, local] { status_ = RunQueueWorker(o_, local); });
  }
  ~WorkerThread() {
    stop_ = true;
    thread_.join();
  }

 private:
  QueueWorkerOptions o_;
  std::atomic<bool> stop_{false};
  Status status_;
  std::thread thread_;
};

std::future<EvalResult> SubmitAsync(QueueRunner* q, EvalRequest r) {
  auto p = std::make_shared<std::promise<EvalResult>>();
  q->Submit(std::move(r), [p](EvalResult res) { p->set_value(std::move(res)); });
  return p->get_future();
}

std::unique_ptr<RedisClient> Raw(const RedisTestServer& s) {
  return std::move(*RedisClient::Connect(RedisOptionsFor(s.queue_url())));
}

TEST(QueueUrl, ParsesHostPortDbAndOptions) {
  Result<QueueUrl> u = ParseQueueUrl("redis://gpu-head:6380/2?device=nvidia-h100&max_queue=8");
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->host, "gpu-head");
  EXPECT_EQ(u->port, 6380);
  EXPECT_EQ(u->db, 2);
  EXPECT_EQ(u->device, "nvidia-h100");
  EXPECT_EQ(u->max_queue, 8u);
  EXPECT_EQ(ParseQueueUrl("redis://h")->port, 6379);
  EXPECT_FALSE(ParseQueueUrl("http://h:1").ok());
  EXPECT_FALSE(ParseQueueUrl("redis://h:99999").ok());
  EXPECT_FALSE(ParseQueueUrl("redis://h?colour=red").ok());
  Result<QueueUrl> pw = ParseQueueUrl("redis://:secret@h:1");
  ASSERT_FALSE(pw.ok());
  EXPECT_NE(pw.status().message().find("KS_REDIS_PASSWORD"), std::string::npos);
}

TEST(QueueProtocol, DeviceSlugAndRequestIds) {
  EXPECT_EQ(DeviceSlug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
  EXPECT_EQ(RequestId(Request("a.py"), ""), RequestId(Request("a.py"), ""));
  EXPECT_NE(RequestId(Request("a.py"), ""), RequestId(Request("b.py"), ""));
  EXPECT_NE(RequestId(Request("a.py"), ""), RequestId(Request("a.py"), "nvidia-a100"));
  EvalRequest changed = Request("a.py");
  changed.candidate_source += "x = 1\n";
  EXPECT_NE(RequestId(Request("a.py"), ""), RequestId(changed, ""));
}

TEST(Queue, UnreachableServerIsAClearError) {
  Result<QueueUrl> url = ParseQueueUrl("redis://127.0.0.1:1");
  Result<std::unique_ptr<QueueRunner>> q = QueueRunner::Create(RedisOptionsFor(*url));
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("is redis-server running"), std::string::npos);
}

TEST(Queue, EveryRequestGetsOneResultFromAWorker) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ok());
  CountingRunner local;
  WorkerThread worker(redis.queue_url(), &local);
  auto q = std::move(*QueueRunner::Create(RedisOptionsFor(redis.queue_url())));
  ASSERT_TRUE(q->WaitForWorker(10).ok());
  std::vector<std::future<EvalResult>> results;
  for (int i = 0; i < 6; ++i) results.push_back(SubmitAsync(q.get(), Request(std::to_string(i))));
  for (int i = 0; i < 6; ++i) {
    EvalResult r = results[i].get();
    EXPECT_EQ(r.status, EvalStatus::kOk);
    EXPECT_EQ(r.candidate.path, std::to_string(i));
    EXPECT_EQ(r.evaluated_by, "w1");
  }
  EXPECT_EQ(local.count.load(), 6);
  q->Shutdown();
  // The worker acknowledges and deletes an entry just after it announces the result: the
  // last deletion may still be on its way when the producer has every answer.
  auto raw = Raw(redis);
  long long left = -1;
  for (int i = 0; i < 100 && left != 0; ++i) {
    left = raw->Command({"XLEN", "ks:requests"})->integer;
    if (left != 0) std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(left, 0);
}

TEST(Queue, LiveSlotsFromAnotherThreadWhileTheReplyThreadBlocks) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ok());
  CountingRunner local;
  WorkerThread worker(redis.queue_url(), &local);
  auto q = std::move(*QueueRunner::Create(RedisOptionsFor(redis.queue_url())));
  ASSERT_TRUE(q->WaitForWorker(10).ok());
  // The reply thread sits in a blocking pop; every answer here must still be the worker's two
  // consumers, at once.
  for (int i = 0; i < 20; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(q->LiveSlots(), 2u) << "call " << i;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 500ms) << "call " << i;
    std::this_thread::sleep_for(37ms);
  }
  q->Shutdown();
}

TEST(Queue, SameRequestTwiceIsEvaluatedOnceAndAnsweredTwice) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ok());
  CountingRunner local(200ms);
  WorkerThread worker(redis.queue_url(), &local);
  auto q = std::move(*QueueRunner::Create(RedisOptionsFor(redis.queue_url())));
  auto a = SubmitAsync(q.get(), Request("same.py"));
  auto b = SubmitAsync(q.get(), Request("same.py"));
  EXPECT_EQ(a.get().status, EvalStatus::kOk);
  EXPECT_EQ(b.get().status, EvalStatus::kOk);
  // Submitted again later (a resumed run): answered from the stored result.
  EXPECT_EQ(q->Evaluate(Request("same.py")).status, EvalStatus::kOk);
  EXPECT_EQ(local.count.load(), 1);
}

TEST(Queue, StalledEntryOfADeadWorkerIsClaimedAndEvaluatedOnce) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ok());
  auto q = std::move(*QueueRunner::Create(RedisOptionsFor(redis.queue_url())));
  auto raw = Raw(redis);
  ASSERT_FALSE(
      raw->Command({"XGROUP", "CREATE", "ks:requests", kGroup, "0", "MKSTREAM"})->is_error());
  auto future = SubmitAsync(q.get(), Request("orphan.py"));
  // A worker takes it and dies without acknowledging.
  Result<RedisReply> taken = raw->Command(
      {"XREADGROUP", "GROUP", kGroup, "dead/0", "COUNT", "1", "STREAMS", "ks:requests", ">"});
  ASSERT_EQ(ParseReadReply(*taken).size(), 1u);
  CountingRunner local;
  WorkerThread worker(redis.queue_url(), &local, /*visibility_s=*/0.5);
  ASSERT_EQ(future.wait_for(20s), std::future_status::ready);
  EXPECT_EQ(future.get().status, EvalStatus::kOk);
  EXPECT_EQ(local.count.load(), 1);
}

TEST(Queue, RequestThatKeepsLosingItsWorkerGetsOneCrashResult) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ok());
  auto q = std::move(*QueueRunner::Create(RedisOptionsFor(redis.queue_url())));
  auto raw = Raw(redis);
  ASSERT_FALSE(
      raw->Command({"XGROUP", "CREATE", "ks:requests", kGroup, "0", "MKSTREAM"})->is_error());
  auto future = SubmitAsync(q.get(), Request("poison.py"));
  Result<RedisReply> taken = raw->Command(
      {"XREADGROUP", "GROUP", kGroup, "dead/0", "COUNT", "1", "STREAMS", "ks:requests", ">"});
  std::string entry = ParseReadReply(*taken).at(0).entry_id;
  for (int i = 1; i <= 3; ++i) {  // three more workers took it and died
    raw->Command({"XCLAIM", "ks:requests", kGroup, "dead/" + std::to_string(i), "0", entry});
  }
  CountingRunner local;
  WorkerThread worker(redis.queue_url(), &local, /*visibility_s=*/0.3);
  ASSERT_EQ(future.wait_for(20s), std::future_status::ready);
  EvalResult r = future.get();
  EXPECT_EQ(r.status, EvalStatus::kCrash);
  EXPECT_NE(r.message.find("4 times"), std::string::npos) << r.message;
  EXPECT_EQ(local.count.load(), 0);
}

TEST(Queue, ProducerWaitsWhileTheQueueIsFull) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ok());
  QueueUrl url = *ParseQueueUrl(redis.url() + "?max_queue=2");
  auto q = std::move(*QueueRunner::Create(RedisOptionsFor(url)));
  auto a = SubmitAsync(q.get(), Request("a"));
  auto b = SubmitAsync(q.get(), Request("b"));
  std::atomic<bool> third_queued{false};
  std::future<EvalResult> c;
  std::thread submitter([&] {
    c = SubmitAsync(q.get(), Request("c"));
    third_queued = true;
  });
  std::this_thread::sleep_for(500ms);
  EXPECT_FALSE(third_queued.load());
  EXPECT_EQ(Raw(redis)->Command({"XLEN", "ks:requests"})->integer, 2);
  CountingRunner local;
  WorkerThread worker(url, &local);
  submitter.join();
  EXPECT_EQ(a.get().status, EvalStatus::kOk);
  EXPECT_EQ(b.get().status, EvalStatus::kOk);
  EXPECT_EQ(c.get().status, EvalStatus::kOk);
}

TEST(Queue, RedisRestartMidRunLosesNothing) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ok());
  CountingRunner local(700ms);
  WorkerThread worker(redis.queue_url(), &local);
  auto q = std::move(*QueueRunner::Create(RedisOptionsFor(redis.queue_url())));
  std::vector<std::future<EvalResult>> results;
  for (int i = 0; i < 4; ++i) results.push_back(SubmitAsync(q.get(), Request(std::to_string(i))));
  std::this_thread::sleep_for(300ms);  // two are being evaluated
  redis.Stop();
  std::this_thread::sleep_for(1s);
  ASSERT_TRUE(redis.Start());
  for (auto& f : results) {
    ASSERT_EQ(f.wait_for(30s), std::future_status::ready);
    EXPECT_EQ(f.get().status, EvalStatus::kOk);
  }
  EXPECT_GE(local.count.load(), 4);
  EXPECT_LE(local.count.load(), 6);  // at most the two held during the restart run again
}

TEST(Queue, EvalRequestJsonRoundTrips) {
  EvalRequest r = Request("x.py");
  r.baseline_path = "best.py";
  r.baseline_source = "# best\n";
  r.seed = 7;
  r.timing = false;
  r.independent_timing = true;
  Result<EvalRequest> back = EvalRequestFromJson(EvalRequestToJson(r));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(EvalRequestToJson(*back), EvalRequestToJson(r));
  EXPECT_FALSE(EvalRequestFromJson(nlohmann::json{{"backend", "cpu"}}).ok());
}

}  // namespace
}  // namespace ks
