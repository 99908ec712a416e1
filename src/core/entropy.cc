#include "core/entropy.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ks {
namespace {

constexpr char kFallback[] = "/dev/urandom";

std::string Reason(int err) { return std::strerror(err); }

Status ReadFromFile(const std::string& path, unsigned char* out, size_t n) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Status::IOError(
        fmt::format("cannot read random bytes: {}: cannot open ({})", path, Reason(errno)));
  }
  size_t done = 0;
  while (done < n) {
    ssize_t got = ::read(fd, out + done, n - done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      std::string why = got < 0 ? Reason(errno) : "end of file";
      ::close(fd);
      return Status::IOError(
          fmt::format("cannot read random bytes: {}: {} after {} of {} bytes", path, why, done, n));
    }
    done += static_cast<size_t>(got);
  }
  ::close(fd);
  return Status::Ok();
}

}  // namespace

Status ReadEntropy(void* out, size_t n) {
  auto* bytes = static_cast<unsigned char*>(out);
  size_t done = 0;
  while (done < n) {
    // Blocks only until the kernel's pool is first initialised (early boot).
    ssize_t got = ::getrandom(bytes + done, n - done, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && errno == ENOSYS) return ReadFromFile(kFallback, bytes + done, n - done);
    if (got < 0) {
      return Status::IOError("cannot read random bytes: getrandom failed (" + Reason(errno) + ")");
    }
    done += static_cast<size_t>(got);
  }
  return Status::Ok();
}

Result<std::string> RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  Status s = ReadEntropy(raw.data(), raw.size());
  if (!s.ok()) return s;
  std::string hex;
  hex.reserve(2 * bytes);
  for (unsigned char c : raw) hex += fmt::format("{:02x}", c);
  return hex;
}

extern "C" uint32_t __wrap_arc4random() {
  uint32_t value = 0;
  Status s = ReadEntropy(&value, sizeof value);
  if (!s.ok()) {
    std::fprintf(stderr, "kernelsmith: %s\n", s.message().c_str());
    std::abort();
  }
  return value;
}

Status ReadEntropyFromFileForTest(const std::string& path, void* out, size_t n) {
  return ReadFromFile(path, static_cast<unsigned char*>(out), n);
}

}  // namespace ks
