#include "cluster/queue_worker.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "cluster/queue_protocol.h"
#include "eval/protocol.h"

namespace ks {
namespace {

using Clock = std::chrono::steady_clock;

class QueueWorker {
 public:
  QueueWorker(const QueueWorkerOptions& o, Runner* local)
      : o_(o), local_(local), kind_(WorkerDeviceKind(o.hello)) {
    streams_ = {StreamKey(""), StreamKey(kind_)};
    redis_ = o.redis;
    redis_.cancel = o.stop;
    redis_.who = "kernelsmith worker " + o.name;
  }

  Status Run() {
    Result<std::unique_ptr<RedisClient>> hb = RedisClient::Connect(redis_);
    if (!hb.ok()) return hb.status();
    std::vector<std::unique_ptr<RedisClient>> clients;
    for (size_t i = 0; i < o_.consumers; ++i) {
      Result<std::unique_ptr<RedisClient>> c = RedisClient::Connect(redis_);
      if (!c.ok()) return c.status();
      clients.push_back(std::move(*c));
    }
    Status s = EnsureGroups(hb->get());
    if (!s.ok()) return s;
    Advertise(hb->get());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < o_.consumers; ++i) {
      threads.emplace_back(
          [this, i, c = clients[i].get()] { Consume(c, fmt::format("{}/{}", o_.name, i)); });
    }
    Clock::time_point touched = Clock::now();
    while (!o_.stop->load()) {
      std::this_thread::sleep_for(std::chrono::duration<double>(o_.heartbeat_s / 4));
      if (o_.stop->load()) break;
      Advertise(hb->get());
      if (std::chrono::duration<double>(Clock::now() - touched).count() >
          o_.visibility_timeout_s / 4) {
        Touch(hb->get());
        touched = Clock::now();
      }
    }
    for (std::thread& t : threads) t.join();
    RedisOptions last = redis_;
    last.cancel = nullptr;
    last.give_up_s = 2;
    if (Result<std::unique_ptr<RedisClient>> c = RedisClient::Connect(last); c.ok()) {
      (void)(*c)->Command({"HDEL", kWorkersKey, o_.name});
    }
    return Status::Ok();
  }

 private:
  Status EnsureGroups(RedisClient* c) {
    for (const std::string& s : streams_) {
      Result<RedisReply> r = c->Command({"XGROUP", "CREATE", s, kGroup, "0", "MKSTREAM"});
      if (!r.ok()) return r.status();
      if (r->is_error() && r->str.find("BUSYGROUP") == std::string::npos) {
        return Status::IOError(redis_.url.text + ": XGROUP CREATE " + s + ": " + r->str);
      }
    }
    return Status::Ok();
  }

  void Advertise(RedisClient* c) {
    nlohmann::json device = o_.hello.value("device", nlohmann::json::object());
    nlohmann::json ad;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ad = {{"name", o_.name},         {"slots", o_.consumers}, {"busy", held_.size()},
            {"evaluated", evaluated_}, {"backend", o_.backend}, {"device_kind", kind_},
            {"device", device},        {"hello", o_.hello},     {"pid", getpid()},
            {"last_seen", UnixNow()}};
    }
    (void)c->Command({"HSET", kWorkersKey, o_.name, ad.dump()});
  }

  // Resets the idle time of the entries this worker holds, so they are not claimed.
  void Touch(RedisClient* c) {
    std::map<std::string, std::pair<std::string, std::string>> held;
    {
      std::lock_guard<std::mutex> lock(mu_);
      held = held_;
    }
    for (const auto& [entry, owner] : held) {
      (void)c->Command({"XCLAIM", owner.first, kGroup, owner.second, "0", entry, "JUSTID"});
    }
  }

  void Consume(RedisClient* c, const std::string& consumer) {
    const std::string min_idle_ms =
        std::to_string(static_cast<long long>(o_.visibility_timeout_s * 1000));
    while (!o_.stop->load()) {
      std::vector<QueueEntry> entries;
      for (const std::string& s : streams_) {
        Result<RedisReply> r =
            c->Command({"XAUTOCLAIM", s, kGroup, consumer, min_idle_ms, "0-0", "COUNT", "1"});
        if (r.ok() && !r->is_error()) entries = ParseClaimReply(s, *r);
        if (!entries.empty()) break;
      }
      if (entries.empty()) {
        std::vector<std::string> argv = {"XREADGROUP", "GROUP", kGroup, consumer, "COUNT",
                                         "1",          "BLOCK", "1000", "STREAMS"};
        for (const std::string& s : streams_) argv.push_back(s);
        for (size_t i = 0; i < streams_.size(); ++i) argv.push_back(">");
        Result<RedisReply> r = c->Command(argv, 1);
        if (!r.ok()) continue;  // stopping while Redis is unreachable
        if (r->is_error()) {
          if (r->str.find("NOGROUP") != std::string::npos) (void)EnsureGroups(c);
          continue;
        }
        entries = ParseReadReply(*r);
      }
      for (const QueueEntry& e : entries) Handle(c, consumer, e);
    }
  }

  int Deliveries(RedisClient* c, const QueueEntry& e) {
    Result<RedisReply> r = c->Command({"XPENDING", e.stream, kGroup, e.entry_id, e.entry_id, "1"});
    if (!r.ok() || r->elements.empty() || r->elements[0].elements.size() < 4) return 1;
    return static_cast<int>(r->elements[0].elements[3].integer);
  }

  void Handle(RedisClient* c, const std::string& consumer, const QueueEntry& e) {
    if (e.id.empty() || e.request.empty() || e.reply.empty()) {
      fmt::print(stderr, "kernelsmith worker {}: dropping malformed entry {} of {}\n", o_.name,
                 e.entry_id, e.stream);
      Ack(c, e);
      return;
    }
    Result<RedisReply> exists = c->Command({"EXISTS", ResultKey(e.id)});
    if (exists.ok() && exists->integer == 1) {  // a duplicate delivery: its result is stored
      Notify(c, e);
      Ack(c, e);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      held_[e.entry_id] = {e.stream, consumer};
    }
    EvalResult result;
    int deliveries = Deliveries(c, e);
    if (deliveries > o_.max_deliveries) {
      result = EvalResult::Failure(
          EvalStatus::kCrash,
          fmt::format("handed to a worker {} times without a result: each worker died or was "
                      "cut off while evaluating it (does the candidate kill its host?); not "
                      "evaluated again",
                      deliveries - 1));
    } else {
      Result<EvalRequest> request =
          EvalRequestFromJson(nlohmann::json::parse(e.request, nullptr, false));
      result = request.ok() ? local_->Evaluate(std::move(*request))
                            : EvalResult::Failure(EvalStatus::kInfraError,
                                                  "cluster queue: " + request.status().message());
    }
    result.evaluated_by = o_.name;
    Result<RedisReply> set =
        c->Command({"SET", ResultKey(e.id),
                    result.ToJson().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                    "NX", "EX", std::to_string(kResultTtlS)});
    if (set.ok() && !set->is_error()) {  // stored (or stored before by another worker)
      Notify(c, e);
      Ack(c, e);
      std::lock_guard<std::mutex> lock(mu_);
      ++evaluated_;
    }  // else: Redis unreachable while stopping; the entry stays pending for another worker
    std::lock_guard<std::mutex> lock(mu_);
    held_.erase(e.entry_id);
  }

  void Notify(RedisClient* c, const QueueEntry& e) {
    (void)c->Command({"LPUSH", e.reply, e.id});
    (void)c->Command({"EXPIRE", e.reply, std::to_string(kResultTtlS)});
    long long now_ms = static_cast<long long>(UnixNow() * 1000);
    (void)c->Command({"ZADD", kCompletionsKey, std::to_string(now_ms), e.id + "@" + o_.name});
    (void)c->Command({"ZREMRANGEBYSCORE", kCompletionsKey, "-inf", std::to_string(now_ms - 60000)});
  }

  void Ack(RedisClient* c, const QueueEntry& e) {
    (void)c->Command({"XACK", e.stream, kGroup, e.entry_id});
    (void)c->Command({"XDEL", e.stream, e.entry_id});
  }

  const QueueWorkerOptions& o_;
  Runner* local_;
  std::string kind_;
  std::vector<std::string> streams_;
  RedisOptions redis_;
  std::mutex mu_;
  // entry id -> (stream, consumer) of the entries being evaluated
  std::map<std::string, std::pair<std::string, std::string>> held_;
  long long evaluated_ = 0;
};

}  // namespace

std::string WorkerDeviceKind(const nlohmann::json& hello) {
  nlohmann::json device = hello.value("device", nlohmann::json::object());
  std::string name = device.is_object() ? device.value("name", "") : "";
  return DeviceSlug(name.empty() ? "unknown" : name);
}

Status RunQueueWorker(const QueueWorkerOptions& options, Runner* local) {
  if (options.stop == nullptr || options.consumers < 1) {
    return Status::InvalidArgument("RunQueueWorker needs a stop flag and at least one consumer");
  }
  QueueWorker worker(options, local);
  return worker.Run();
}

}  // namespace ks
