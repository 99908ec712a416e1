// SHA-256 of a byte string, as lowercase hex. Used for file and candidate identity.
// Thread-safety: pure function.
#pragma once

#include <string>
#include <string_view>

namespace ks {

std::string Sha256Hex(std::string_view data);

}  // namespace ks
