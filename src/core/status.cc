#include "core/status.h"

namespace ks {

std::string Status::ToString() const {
  const char* name = "OK";
  switch (code_) {
    case Code::kOk: return "OK";
    case Code::kInvalidArgument: name = "invalid argument"; break;
    case Code::kNotFound: name = "not found"; break;
    case Code::kIOError: name = "I/O error"; break;
    case Code::kTimeout: name = "timeout"; break;
    case Code::kProtocol: name = "protocol error"; break;
    case Code::kInternal: name = "internal error"; break;
  }
  return std::string(name) + ": " + message_;
}

}  // namespace ks
