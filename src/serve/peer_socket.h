// Noticing that an HTTP client went away while its request is still being worked on.
// cpp-httplib 0.11 does not hand a handler its connection, so the server-side socket is found
// by its peer address, once per request, and then peeked without blocking.
// Thread-safety: pure functions over file descriptors.
#pragma once

#include <string>

namespace ks {

// The fd of this process's connected TCP socket whose peer is `ip`:`port`, or -1.
int FindPeerSocket(const std::string& ip, int port);

// True when the peer of connected socket `fd` has closed its end (or the socket failed):
// a non-blocking peek reads end-of-file or an error. Bytes waiting (a pipelined request) and
// nothing waiting both mean the peer is still there.
bool PeerClosed(int fd);

}  // namespace ks
