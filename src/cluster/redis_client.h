// RedisClient: one connection to a Redis server (hiredis), with the queue URL it came from.
//
// A command that fails because the connection broke (server restart, network cut) reconnects
// with back-off and runs again, until it succeeds, `cancel` is set or `give_up_s` passes: a
// command may thus run twice (callers use commands that are safe to repeat, or tolerate a
// duplicate). Redis error replies ("-ERR ...") are returned as replies of type kError.
//
// Thread-safety: one RedisClient is used by one thread at a time.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

struct redisContext;

namespace ks {

// redis://HOST:PORT[/DB][?device=KIND&max_queue=N] as given to --queue.
struct QueueUrl {
  std::string host;
  int port = 6379;
  int db = 0;
  std::string device;       // required device kind (a slug, e.g. nvidia-h100-80gb-hbm3); empty: any
  size_t max_queue = 1024;  // producers wait while the request stream holds this many entries
  std::string text;         // the URL as given, without query, for messages
};

// InvalidArgument saying what a valid URL looks like. A password in the URL is refused: it
// comes from $KS_REDIS_PASSWORD so it stays out of process lists and run configs.
Result<QueueUrl> ParseQueueUrl(const std::string& url);

struct RedisReply {
  enum class Type { kNil, kString, kStatus, kError, kInteger, kArray };
  Type type = Type::kNil;
  std::string str;  // kString, kStatus, kError
  long long integer = 0;
  std::vector<RedisReply> elements;  // kArray

  bool is_error() const { return type == Type::kError; }
  bool is_nil() const { return type == Type::kNil; }
};

struct RedisOptions {
  QueueUrl url;
  // AUTH password; empty: none. Filled from $KS_REDIS_PASSWORD by RedisOptionsFor.
  std::string password;
  double connect_timeout_s = 3;
  // Socket timeout of a command, on top of the block time the caller passes.
  double command_timeout_s = 10;
  // How long a broken connection is retried before a command fails; <= 0: forever.
  double give_up_s = 0;
  // Set by the owner to stop retrying (shutdown); a command then fails with IOError.
  const std::atomic<bool>* cancel = nullptr;
  // Prefix of the retry line printed on stderr while the server is unreachable.
  std::string who = "kernelsmith";
};

// Options for `url` with the password from $KS_REDIS_PASSWORD.
RedisOptions RedisOptionsFor(const QueueUrl& url);

class RedisClient {
 public:
  // Connects (AUTH, SELECT). IOError naming the URL and what to check when the server cannot
  // be reached or refuses the password; no retry here, so a wrong URL fails at once.
  static Result<std::unique_ptr<RedisClient>> Connect(RedisOptions options);
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  // Runs one command. `block_s`: how long the command may block on the server (XREADGROUP
  // BLOCK, BLPOP), added to the socket timeout.
  Result<RedisReply> Command(const std::vector<std::string>& argv, double block_s = 0);
  // Number of times the connection was re-established: a change tells the caller the server
  // may have restarted and lost what was not persisted.
  int reconnects() const { return reconnects_; }
  const RedisOptions& options() const { return options_; }

 private:
  explicit RedisClient(RedisOptions options) : options_(std::move(options)) {}
  Status Open();  // (re)connects, AUTH, SELECT
  void Close();

  RedisOptions options_;
  redisContext* ctx_ = nullptr;
  int reconnects_ = 0;
};

}  // namespace ks
