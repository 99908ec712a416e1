#include "serve/peer_socket.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ks {
namespace {

TEST(PeerSocketTest, FindsTheConnectionAndSeesThePeerLeave) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  int server = accept(listener, nullptr, nullptr);
  ASSERT_GE(server, 0);
  sockaddr_in local{};
  len = sizeof(local);
  ASSERT_EQ(getsockname(client, reinterpret_cast<sockaddr*>(&local), &len), 0);

  EXPECT_EQ(FindPeerSocket("127.0.0.1", ntohs(local.sin_port)), server);
  EXPECT_EQ(FindPeerSocket("127.0.0.1", 1), -1);
  EXPECT_FALSE(PeerClosed(server));
  ASSERT_EQ(write(client, "x", 1), 1);
  EXPECT_FALSE(PeerClosed(server));  // data waiting: still there
  char byte;
  ASSERT_EQ(read(server, &byte, 1), 1);
  close(client);
  EXPECT_TRUE(PeerClosed(server));
  close(server);
  close(listener);
}

}  // namespace
}  // namespace ks
