// (Helper, compiled into the test binary only; see redis_test_server.h.)
#include "cluster/redis_test_server.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

namespace ks {
namespace {

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

}  // namespace

RedisTestServer::RedisTestServer() {
  char tmpl[] = "/tmp/ks-redis-XXXXXX";
  dir_ = mkdtemp(tmpl);
  port_ = FreePort();
  Start();
}

RedisTestServer::~RedisTestServer() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

QueueUrl RedisTestServer::queue_url() const { return *ParseQueueUrl(url()); }

bool RedisTestServer::Start() {
  pid_t pid = fork();
  if (pid == 0) {
    std::string port = std::to_string(port_);
    execlp("redis-server", "redis-server", "--port", port.c_str(), "--bind", "127.0.0.1", "--dir",
           dir_.c_str(), "--appendonly", "yes", "--save", "", "--daemonize", "no", "--logfile",
           (dir_ + "/redis.log").c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  pid_ = pid;
  RedisOptions o;
  o.url = queue_url();
  o.connect_timeout_s = 0.5;
  for (int i = 0; i < 100; ++i) {
    Result<std::unique_ptr<RedisClient>> c = RedisClient::Connect(o);
    if (c.ok()) {
      Result<RedisReply> r = (*c)->Command({"PING"});
      if (r.ok() && r->str == "PONG") return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

void RedisTestServer::Stop() {
  if (pid_ <= 0) return;
  RedisOptions o;
  o.url = queue_url();
  o.give_up_s = 1;
  if (Result<std::unique_ptr<RedisClient>> c = RedisClient::Connect(o); c.ok()) {
    (void)(*c)->Command({"SHUTDOWN"});
  }
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

}  // namespace ks
