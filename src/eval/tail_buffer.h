// TailBuffer: keeps the last `capacity` bytes of an unbounded output stream (a worker's stdout
// or stderr), so a process printing gigabytes costs constant memory.
//
// Thread-safety: not thread-safe; one owner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ks {

class TailBuffer {
 public:
  explicit TailBuffer(size_t capacity) : capacity_(capacity) {}

  void Append(std::string_view bytes);
  // Bytes appended since construction (not capped).
  uint64_t total() const { return total_; }
  // The last min(n, kept) bytes.
  std::string Tail(size_t n) const;
  // The last at most `n` bytes of those appended after total() was `mark`.
  std::string TailSince(uint64_t mark, size_t n) const;

 private:
  size_t capacity_;
  uint64_t total_ = 0;
  std::string data_;  // holds the last capacity_..2*capacity_ bytes; trimmed on overflow
};

// `bytes` made valid UTF-8, for text that goes into JSON: a sequence cut at the start is
// dropped, other invalid bytes become U+FFFD.
std::string SanitizeUtf8(std::string_view bytes);

}  // namespace ks
