// Test helper: a real redis-server on a free loopback port, with its own data directory and
// append-only persistence, that a test can stop (SHUTDOWN, data kept) and start again.
// Thread-safety: one test thread.
#pragma once

#include <sys/types.h>

#include <string>

#include "cluster/redis_client.h"

namespace ks {

class RedisTestServer {
 public:
  RedisTestServer();   // starts it; ok() says whether it runs
  ~RedisTestServer();  // kills it and removes its directory
  bool ok() const { return pid_ > 0; }
  int port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  QueueUrl queue_url() const;
  void Stop();   // SHUTDOWN (persists), waits for the process
  bool Start();  // same port and directory; waits until it answers

 private:
  int port_ = 0;
  pid_t pid_ = -1;
  std::string dir_;
};

}  // namespace ks
