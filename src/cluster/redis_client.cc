#include "cluster/redis_client.h"

#include <fmt/format.h>
#include <hiredis.h>
#include <sys/time.h>

#include <chrono>
#include <cstdlib>
#include <regex>
#include <thread>

namespace ks {
namespace {

timeval ToTimeval(double s) {
  timeval tv;
  tv.tv_sec = static_cast<time_t>(s);
  tv.tv_usec = static_cast<suseconds_t>((s - static_cast<double>(tv.tv_sec)) * 1e6);
  return tv;
}

RedisReply Convert(const redisReply* r) {
  RedisReply out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      out.type = RedisReply::Type::kString;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = RedisReply::Type::kStatus;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = RedisReply::Type::kError;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::kInteger;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::kArray;
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(Convert(r->element[i]));
      break;
    default:
      out.type = RedisReply::Type::kNil;
  }
  return out;
}

}  // namespace

Result<QueueUrl> ParseQueueUrl(const std::string& url) {
  static const std::regex re(R"(^redis://([^/:?@]+)(?::(\d+))?(?:/(\d+))?/?(?:\?(.*))?$)");
  std::smatch m;
  const std::string usage =
      "expected redis://HOST:PORT[/DB][?device=KIND&max_queue=N] (the password comes from "
      "$KS_REDIS_PASSWORD)";
  if (url.find('@') != std::string::npos) {
    return Status::InvalidArgument("--queue " + url +
                                   ": put the password in $KS_REDIS_PASSWORD, not in the URL");
  }
  if (!std::regex_match(url, m, re)) {
    return Status::InvalidArgument("--queue " + url + ": not a Redis URL; " + usage);
  }
  QueueUrl q;
  q.host = m[1];
  if (m[2].matched) q.port = std::atoi(m[2].str().c_str());
  if (m[3].matched) q.db = std::atoi(m[3].str().c_str());
  if (q.port <= 0 || q.port > 65535) {
    return Status::InvalidArgument("--queue " + url + ": port out of range; " + usage);
  }
  q.text = fmt::format("redis://{}:{}/{}", q.host, q.port, q.db);
  std::string query = m[4].matched ? m[4].str() : "";
  size_t pos = 0;
  while (pos < query.size()) {
    size_t amp = query.find('&', pos);
    std::string kv = query.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
    pos = amp == std::string::npos ? query.size() : amp + 1;
    size_t eq = kv.find('=');
    std::string key = kv.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : kv.substr(eq + 1);
    if (key == "device" && !value.empty()) {
      q.device = value;
    } else if (key == "max_queue" && !value.empty() &&
               value.find_first_not_of("0123456789") == std::string::npos && value.size() < 9 &&
               std::atoi(value.c_str()) > 0) {
      q.max_queue = static_cast<size_t>(std::atoi(value.c_str()));
    } else {
      return Status::InvalidArgument("--queue " + url + ": unknown or empty option '" + kv +
                                     "'; options are device=KIND and max_queue=N (N >= 1)");
    }
  }
  return q;
}

RedisOptions RedisOptionsFor(const QueueUrl& url) {
  RedisOptions o;
  o.url = url;
  if (const char* pw = std::getenv("KS_REDIS_PASSWORD")) o.password = pw;
  return o;
}

Result<std::unique_ptr<RedisClient>> RedisClient::Connect(RedisOptions options) {
  std::unique_ptr<RedisClient> c(new RedisClient(std::move(options)));
  Status s = c->Open();
  if (!s.ok()) return s;
  return c;
}

RedisClient::~RedisClient() { Close(); }

void RedisClient::Close() {
  if (ctx_ != nullptr) redisFree(ctx_);
  ctx_ = nullptr;
}

Status RedisClient::Open() {
  Close();
  const QueueUrl& u = options_.url;
  ctx_ = redisConnectWithTimeout(u.host.c_str(), u.port, ToTimeval(options_.connect_timeout_s));
  if (ctx_ == nullptr || ctx_->err) {
    std::string why = ctx_ != nullptr ? ctx_->errstr : "out of memory";
    Close();
    return Status::IOError(u.text + ": cannot connect (" + why +
                           "); is redis-server running there and reachable from this host?");
  }
  auto run = [this](const std::vector<std::string>& argv) -> Result<RedisReply> {
    std::vector<const char*> args;
    std::vector<size_t> lens;
    for (const std::string& a : argv) {
      args.push_back(a.data());
      lens.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(
        redisCommandArgv(ctx_, static_cast<int>(args.size()), args.data(), lens.data()));
    if (r == nullptr) return Status::IOError(ctx_->errstr);
    RedisReply out = Convert(r);
    freeReplyObject(r);
    return out;
  };
  redisSetTimeout(ctx_, ToTimeval(options_.command_timeout_s));
  if (!options_.password.empty()) {
    Result<RedisReply> r = run({"AUTH", options_.password});
    if (!r.ok() || r->is_error()) {
      std::string why = r.ok() ? r->str : r.status().message();
      Close();
      return Status::IOError(u.text + ": AUTH failed (" + why +
                             "); check $KS_REDIS_PASSWORD against the server's requirepass");
    }
  }
  Result<RedisReply> r = run({"SELECT", std::to_string(u.db)});
  if (!r.ok() || r->is_error()) {
    std::string why = r.ok() ? r->str : r.status().message();
    Close();
    return Status::IOError(u.text + ": SELECT " + std::to_string(u.db) + " failed (" + why + ")" +
                           (why.find("NOAUTH") != std::string::npos
                                ? "; the server wants a password: set $KS_REDIS_PASSWORD"
                                : ""));
  }
  return Status::Ok();
}

Result<RedisReply> RedisClient::Command(const std::vector<std::string>& argv, double block_s) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  Clock::time_point last_note = start;
  double backoff_s = 0.05;
  std::string last_error;
  for (;;) {
    if (ctx_ != nullptr) {
      std::vector<const char*> args;
      std::vector<size_t> lens;
      for (const std::string& a : argv) {
        args.push_back(a.data());
        lens.push_back(a.size());
      }
      redisSetTimeout(ctx_, ToTimeval(options_.command_timeout_s + block_s));
      auto* r = static_cast<redisReply*>(
          redisCommandArgv(ctx_, static_cast<int>(args.size()), args.data(), lens.data()));
      if (r != nullptr) {
        RedisReply out = Convert(r);
        freeReplyObject(r);
        // A restarting server answers LOADING until its data is back: wait like a cut.
        if (!(out.is_error() && out.str.rfind("LOADING", 0) == 0)) return out;
        last_error = out.str;
      } else {
        last_error = ctx_->errstr;
      }
      Close();
    }
    if (options_.cancel != nullptr && options_.cancel->load()) {
      return Status::IOError(options_.url.text + ": " + last_error + " (stopping)");
    }
    double waited = std::chrono::duration<double>(Clock::now() - start).count();
    if (options_.give_up_s > 0 && waited > options_.give_up_s) {
      return Status::IOError(options_.url.text + ": unreachable for " +
                             fmt::format("{:.0f}", waited) + " s (" + last_error + ")");
    }
    if (std::chrono::duration<double>(Clock::now() - last_note).count() > 10) {
      fmt::print(stderr, "{}: {} unreachable for {:.0f} s ({}); retrying\n", options_.who,
                 options_.url.text, waited, last_error);
      last_note = Clock::now();
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(backoff_s));
    backoff_s = std::min(backoff_s * 2, 1.0);
    Status s = Open();
    if (s.ok()) {
      ++reconnects_;
    } else {
      last_error = s.message();
    }
  }
}

}  // namespace ks
