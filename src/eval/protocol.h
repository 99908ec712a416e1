// The engine side of the worker protocol (docs/protocol.md): JSON-lines framing, encoders for
// engine → worker messages and a validating decoder for worker → engine messages.
//
// Thread-safety: free functions are thread-safe; a LineSplitter is used by one thread.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/status.h"
#include "eval/runner.h"

namespace ks {

inline constexpr int kProtocolVersion = 1;
// Longest protocol line accepted (a result with large logs stays far below this).
inline constexpr size_t kMaxProtocolLineBytes = size_t{64} << 20;

// Accumulates bytes and yields complete '\n'-terminated lines. Scans each byte once, so
// feeding a long line in small pieces stays linear.
class LineSplitter {
 public:
  explicit LineSplitter(size_t max_line_bytes = kMaxProtocolLineBytes)
      : max_line_bytes_(max_line_bytes) {}

  // Appends bytes. Protocol error once a line (complete or not) exceeds the maximum; the
  // splitter is then unusable.
  Status Append(std::string_view bytes);
  // If a complete line is buffered, stores it in *line without its "\n" (and without a "\r"
  // before it) and returns true.
  bool Next(std::string* line);
  // Bytes of an incomplete last line.
  size_t pending_bytes() const { return buffer_.size() - tail_start_; }

 private:
  size_t max_line_bytes_;
  std::string buffer_;
  size_t line_start_ = 0;  // start of the first line not yet returned
  size_t tail_start_ = 0;  // start of the unterminated last line
  size_t scanned_ = 0;     // bytes searched for '\n' so far
};

// Engine → worker messages, each one line including the trailing "\n". Strings that are not
// valid UTF-8 (e.g. a candidate file in Latin-1) have the bad bytes replaced by U+FFFD.
std::string EncodeEvalRequest(const EvalRequest& request, const std::string& id);
// The request as the JSON object of an "eval" message (without "type" and "id"), and back.
// FromJson: Protocol error naming a missing or mistyped field.
nlohmann::json EvalRequestToJson(const EvalRequest& request);
Result<EvalRequest> EvalRequestFromJson(const nlohmann::json& j);
std::string EncodeLeaseGranted(const std::string& id);
std::string EncodeShutdown();

// One worker → engine message, validated.
struct WorkerMessage {
  enum class Type { kHello, kStage, kLease, kResult };
  Type type = Type::kHello;
  std::string id;                // stage, lease, result
  std::string stage;             // stage: "load", "correctness", "audit" or "timing"
  bool lease_acquire = false;    // lease: true for op "acquire", false for "release"
  int protocol = 0;              // hello: the worker's protocol version
  nlohmann::json result;         // result: the "result" object
  bool worker_poisoned = false;  // result: replace the worker after this result
  nlohmann::json body;           // hello: the whole message
};

// Parses and validates one protocol line. Protocol error (naming the problem: not JSON, not an
// object, unknown type, missing or mistyped field) on anything else.
Result<WorkerMessage> DecodeWorkerMessage(std::string_view line);

}  // namespace ks
