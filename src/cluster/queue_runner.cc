#include "cluster/queue_runner.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "cluster/queue_protocol.h"
#include "core/entropy.h"
#include "eval/protocol.h"

namespace ks {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

bool Serves(const nlohmann::json& worker, const std::string& device) {
  return device.empty() || worker.value("device_kind", "") == device;
}

}  // namespace

QueueRunner::QueueRunner(RedisOptions options, const std::string& producer)
    : options_(std::move(options)),
      stream_(StreamKey(options_.url.device)),
      reply_key_(ReplyKey(producer)) {
  options_.cancel = &cancel_;
}

Result<std::unique_ptr<QueueRunner>> QueueRunner::Create(RedisOptions redis) {
  // This client's reply list: a name no other client of the server draws.
  Result<std::string> producer = RandomHex(8);
  if (!producer.ok()) return producer.status();
  std::unique_ptr<QueueRunner> q(new QueueRunner(std::move(redis), *producer));
  Result<std::unique_ptr<RedisClient>> a = RedisClient::Connect(q->options_);
  if (!a.ok()) return a.status();
  Result<std::unique_ptr<RedisClient>> b = RedisClient::Connect(q->options_);
  if (!b.ok()) return b.status();
  q->submit_ = std::move(*a);
  q->reply_ = std::move(*b);
  q->reply_thread_ = std::thread([p = q.get()] { p->ReplyLoop(); });
  return q;
}

QueueRunner::~QueueRunner() { Shutdown(); }

void QueueRunner::Submit(EvalRequest request, Callback done) {
  const std::string id = RequestId(request, options_.url.device);
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (stopping_) {
      lock.unlock();
      done(EvalResult::Failure(EvalStatus::kInfraError, "queue runner is shut down"));
      return;
    }
    auto it = pending_.find(id);
    if (it != pending_.end()) {  // the same request is already on its way: share its result
      it->second.callbacks.push_back(std::move(done));
      return;
    }
    Pending& p = pending_[id];
    p.request_json =
        EvalRequestToJson(request).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    p.callbacks.push_back(std::move(done));
  }
  std::lock_guard<std::mutex> lock(submit_mu_);
  Status s = Enqueue(id);
  if (!s.ok()) {  // answered by the reply thread: never call back from inside Submit
    std::lock_guard<std::mutex> failed_lock(mu_);
    failed_[id] = "cluster queue: " + s.message();
  }
}

Status QueueRunner::Enqueue(const std::string& id) {
  Result<RedisReply> stored = submit_->Command({"EXISTS", ResultKey(id)});
  if (!stored.ok()) return stored.status();
  if (stored->integer == 1) {  // evaluated before: the reply thread fetches it
    Result<RedisReply> r = submit_->Command({"LPUSH", reply_key_, id});
    return r.ok() ? Status::Ok() : r.status();
  }
  Clock::time_point start = Clock::now(), noted = start;
  for (;;) {  // back-pressure: wait while the stream is full
    Result<RedisReply> len = submit_->Command({"XLEN", stream_});
    if (!len.ok()) return len.status();
    if (static_cast<size_t>(len->integer) < options_.url.max_queue) break;
    if (cancel_.load()) return Status::IOError("stopped while the queue was full");
    if (SecondsSince(noted) > 10) {
      fmt::print(stderr, "{}: queue {} full ({} requests); waiting {:.0f} s for workers\n",
                 options_.who, options_.url.text, len->integer, SecondsSince(start));
      noted = Clock::now();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::string request_json;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pending_.find(id);
    if (it == pending_.end()) return Status::Ok();
    request_json = it->second.request_json;
  }
  std::vector<std::string> argv = {"XADD", stream_, "*"};
  for (std::string& f : EntryFields(id, reply_key_, request_json)) argv.push_back(std::move(f));
  Result<RedisReply> added = submit_->Command(argv);
  if (!added.ok()) return added.status();
  if (added->is_error()) return Status::IOError("XADD " + stream_ + ": " + added->str);
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = pending_.find(id); it != pending_.end()) it->second.entry_id = added->str;
  return Status::Ok();
}

void QueueRunner::Deliver(const std::string& id, EvalResult result) {
  std::vector<Callback> callbacks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pending_.find(id);
    if (it == pending_.end()) return;  // answered already (a duplicate notification)
    callbacks = std::move(it->second.callbacks);
    pending_.erase(it);
  }
  for (size_t i = 0; i < callbacks.size(); ++i) {
    callbacks[i](i + 1 == callbacks.size() ? std::move(result) : result);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (pending_.empty()) idle_cv_.notify_all();
}

void QueueRunner::FetchAndDeliver(const std::string& id, RedisClient* client) {
  Result<RedisReply> r = client->Command({"GET", ResultKey(id)});
  if (!r.ok() || r->type != RedisReply::Type::kString) return;  // CheckPending retries
  nlohmann::json j = nlohmann::json::parse(r->str, nullptr, false);
  Result<EvalResult> result = EvalResult::FromJson(j);
  if (!result.ok()) {
    Deliver(id, EvalResult::Failure(
                    EvalStatus::kInfraError,
                    "cluster queue: stored result unreadable: " + result.status().message()));
    return;
  }
  Deliver(id, std::move(*result));
}

void QueueRunner::CheckPending(bool requeue_lost) {
  std::vector<std::pair<std::string, std::string>> ids;  // id, entry id
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, p] : pending_) ids.emplace_back(id, p.entry_id);
  }
  for (const auto& [id, entry_id] : ids) {
    Result<RedisReply> r = reply_->Command({"EXISTS", ResultKey(id)});
    if (!r.ok()) return;
    if (r->integer == 1) {
      FetchAndDeliver(id, reply_.get());
      continue;
    }
    if (!requeue_lost || entry_id.empty()) continue;
    Result<RedisReply> e = reply_->Command({"XRANGE", stream_, entry_id, entry_id});
    if (!e.ok() || !e->elements.empty()) continue;
    fmt::print(stderr, "{}: {} lost request {} (restarted without persistence?); queued again\n",
               options_.who, options_.url.text, id);
    std::lock_guard<std::mutex> lock(submit_mu_);
    Status s = Enqueue(id);
    if (!s.ok()) fmt::print(stderr, "{}: {}\n", options_.who, s.message());
  }
}

void QueueRunner::ReplyLoop() {
  Clock::time_point checked = Clock::now(), noted = Clock::now();
  int seen_reconnects = 0;
  while (!cancel_.load()) {
    Result<RedisReply> r = reply_->Command({"BLPOP", reply_key_, "1"}, 1);
    if (r.ok() && r->elements.size() == 2) FetchAndDeliver(r->elements[1].str, reply_.get());
    std::map<std::string, std::string> failed;
    {
      std::lock_guard<std::mutex> lock(mu_);
      failed.swap(failed_);
    }
    for (const auto& [id, why] : failed) {
      Deliver(id, EvalResult::Failure(EvalStatus::kInfraError, why));
    }
    if (SecondsSince(checked) < 2) continue;
    checked = Clock::now();
    int reconnects = reply_->reconnects();
    {
      std::lock_guard<std::mutex> lock(submit_mu_);
      reconnects += submit_->reconnects();
    }
    CheckPending(reconnects != seen_reconnects);
    seen_reconnects = reconnects;
    size_t waiting = outstanding();
    if (waiting > 0 && SecondsSince(noted) > 10 && LiveSlots() == 0) {
      fmt::print(stderr,
                 "{}: {} evaluation(s) waiting on {}: no live worker{}; start one with "
                 "`kernelsmith worker --queue {}`\n",
                 options_.who, waiting, options_.url.text,
                 options_.url.device.empty() ? "" : " with device " + options_.url.device,
                 options_.url.text);
      noted = Clock::now();
    }
  }
}

size_t QueueRunner::LiveSlots() {
  // The submit connection, under its lock: the reply connection belongs to the reply thread,
  // which may be blocked in BLPOP on it (a command sent there meanwhile mixes two replies).
  Result<RedisReply> r = [&] {
    std::lock_guard<std::mutex> lock(submit_mu_);
    return submit_->Command({"HGETALL", kWorkersKey});
  }();
  if (!r.ok()) return 0;
  size_t slots = 0;
  for (const nlohmann::json& w : LiveWorkers(*r, UnixNow())) {
    if (Serves(w, options_.url.device)) slots += w.value("slots", 0u);
  }
  return slots;
}

Result<nlohmann::json> QueueRunner::WaitForWorker(double timeout_s, double note_every_s) {
  Result<std::unique_ptr<RedisClient>> client = RedisClient::Connect(options_);
  if (!client.ok()) return client.status();
  Clock::time_point start = Clock::now(), noted = start;
  bool first = true;
  for (;;) {
    Result<RedisReply> r = (*client)->Command({"HGETALL", kWorkersKey});
    if (!r.ok()) return r.status();
    for (const nlohmann::json& w : LiveWorkers(*r, UnixNow())) {
      if (Serves(w, options_.url.device)) return w;
    }
    if (timeout_s > 0 && SecondsSince(start) > timeout_s) {
      return Status::Timeout(fmt::format("no live worker on {} after {:.0f} s", options_.url.text,
                                         SecondsSince(start)));
    }
    if (first || SecondsSince(noted) > note_every_s) {
      fmt::print(stderr,
                 "{}: waiting for a worker on {}{} ({:.0f} s): none is live; start one on a "
                 "GPU host with `kernelsmith worker --queue {}`\n",
                 options_.who, options_.url.text,
                 options_.url.device.empty() ? "" : " with device " + options_.url.device,
                 SecondsSince(start), options_.url.text);
      noted = Clock::now();
      first = false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

size_t QueueRunner::outstanding() {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_.size();
}

void QueueRunner::Shutdown() {
  std::lock_guard<std::mutex> guard(shutdown_mu_);
  if (shut_down_) return;
  shut_down_ = true;
  {
    std::unique_lock<std::mutex> lock(mu_);
    stopping_ = true;
    idle_cv_.wait(lock, [this] { return pending_.empty(); });
  }
  cancel_.store(true);
  if (reply_thread_.joinable()) reply_thread_.join();
}

}  // namespace ks
