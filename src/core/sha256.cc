#include "core/sha256.h"

#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>

namespace ks {

// OpenSSL's EVP digest (libcrypto is linked anyway through libcurl's TLS).
std::string Sha256Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha256(), nullptr) != 1) {
    std::fputs("kernelsmith: OpenSSL EVP_Digest(sha256) failed (out of memory?)\n", stderr);
    std::abort();  // fails only when it cannot allocate: nothing sensible to go on with
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * size);
  for (unsigned int i = 0; i < size; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xF];
  }
  return out;
}

}  // namespace ks
