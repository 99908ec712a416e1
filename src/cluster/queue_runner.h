// QueueRunner: the cluster Runner. Submit puts the request on a Redis stream; `kernelsmith
// worker` processes on any host evaluate it and store its one result; a reply thread hands
// results to the callbacks (docs/cluster.md).
//
// Guarantees: each Submit gets exactly one callback. Requests with the same id (same program,
// code and settings) share one evaluation. A request already evaluated (a resumed run) is
// answered from its stored result. Submit waits while the stream holds `max_queue` entries
// (back-pressure). A lost connection is retried until the server is back; requests the
// server lost meanwhile (restart without persistence) are queued again.
//
// Thread-safety: all methods may be called from any thread; callbacks run on the reply
// thread and may call Submit.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cluster/redis_client.h"
#include "core/status.h"
#include "eval/runner.h"

namespace ks {

class QueueRunner : public Runner {
 public:
  // Connects twice (submits, replies). IOError saying what to check when Redis is unreachable.
  static Result<std::unique_ptr<QueueRunner>> Create(RedisOptions redis);
  ~QueueRunner() override;  // Shutdown()

  void Submit(EvalRequest request, Callback done) override;
  // Stops accepting requests, waits for the results of those submitted, stops the reply
  // thread. Idempotent.
  void Shutdown() override;

  // Waits until a live worker serves this run's device kind, printing a line every
  // `note_every_s`, and returns its advertisement (`hello`, `slots`, `name`, ...). Timeout
  // after `timeout_s` (<= 0: wait for ever).
  Result<nlohmann::json> WaitForWorker(double timeout_s = 0, double note_every_s = 10);
  // Worker slots of the live workers that serve this run's device kind.
  size_t LiveSlots();
  // Requests submitted and not yet answered.
  size_t outstanding();
  const QueueUrl& url() const { return options_.url; }

 private:
  struct Pending {
    std::string request_json;
    std::string entry_id;  // stream entry of the last XADD
    std::vector<Callback> callbacks;
  };
  QueueRunner(RedisOptions options, const std::string& producer);
  Status Enqueue(const std::string& id);  // under submit_mu_
  void Deliver(const std::string& id, EvalResult result);
  void FetchAndDeliver(const std::string& id, RedisClient* client);
  void ReplyLoop();
  void CheckPending(bool requeue_lost);

  RedisOptions options_;
  std::string stream_;
  std::string reply_key_;
  std::atomic<bool> cancel_{false};
  std::unique_ptr<RedisClient> submit_;  // guarded by submit_mu_
  std::unique_ptr<RedisClient> reply_;   // reply thread only
  std::mutex submit_mu_;
  std::thread reply_thread_;

  std::mutex mu_;  // guards below
  std::condition_variable idle_cv_;
  std::map<std::string, Pending> pending_;
  std::map<std::string, std::string> failed_;  // id -> why it could not be queued
  bool stopping_ = false;
  std::mutex shutdown_mu_;
  bool shut_down_ = false;
};

}  // namespace ks
