#include "eval/tail_buffer.h"

#include <algorithm>

namespace ks {

void TailBuffer::Append(std::string_view bytes) {
  total_ += bytes.size();
  if (bytes.size() >= capacity_) {
    data_.assign(bytes.substr(bytes.size() - capacity_));
    return;
  }
  data_.append(bytes);
  if (data_.size() > 2 * capacity_) data_.erase(0, data_.size() - capacity_);
}

std::string TailBuffer::Tail(size_t n) const {
  size_t keep = std::min({n, capacity_, data_.size()});
  return data_.substr(data_.size() - keep);
}

std::string TailBuffer::TailSince(uint64_t mark, size_t n) const {
  uint64_t since = mark >= total_ ? 0 : total_ - mark;
  return Tail(static_cast<size_t>(std::min<uint64_t>(since, n)));
}

namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 if it is invalid or truncated.
size_t ValidSequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return len;
}

}  // namespace

std::string SanitizeUtf8(std::string_view bytes) {
  size_t i = 0;
  // A tail may start inside a multi-byte character: skip its continuation bytes (at most 3).
  while (i < bytes.size() && i < 3 && (static_cast<unsigned char>(bytes[i]) & 0xC0) == 0x80) ++i;
  std::string out;
  out.reserve(bytes.size() - i);
  while (i < bytes.size()) {
    size_t len = ValidSequenceLength(bytes, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(bytes.substr(i, len));
      i += len;
    }
  }
  return out;
}

}  // namespace ks
