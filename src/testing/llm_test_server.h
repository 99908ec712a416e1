// TEST ONLY: an OpenAI-compatible chat-completions server on 127.0.0.1 that replays a script.
//
// Built into the test-only library ks_testing (src/testing: what tests share, never linked into
// ks_lib or the kernelsmith binary), so that tests of every component (clients, proposers, the
// engine) can talk real HTTP on loopback. Each POST to
// /v1/chat/completions takes the next scripted reply (or the fallback once the script is
// spent), waits its delay, then answers: a completion, an HTTP error (with Retry-After), a
// truncated JSON body, a raw (malformed) body, or a connection dropped mid-body. Other paths get
// 404. GET /v1/models lists the model (with its context when one is set). Every POST is
// recorded, and the server counts how many it was handling at once.
// Thread-safety: all methods may be called from any thread while the server runs.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"

namespace httplib {
class Server;
}

namespace ks {

struct ScriptedReply {
  enum class Kind {
    kCompletion,      // 200 with a chat completion
    kHttpError,       // `http_status` with `body` (an OpenAI error object when empty)
    kTruncatedJson,   // 200 whose body is the first half of a completion (length consistent)
    kDropConnection,  // 200 headers announcing a full body, half of it, then the socket closes
    kRawBody          // 200 with `body` as it is (malformed JSON, an HTML error page, ...)
  };
  Kind kind = Kind::kCompletion;
  std::string content;  // kCompletion: the completion text
  std::string reasoning_content;
  std::string finish_reason = "stop";
  int64_t prompt_tokens = -1;      // usage reported; -1: request bytes / 4
  int64_t completion_tokens = -1;  // -1: content bytes / 4
  int http_status = 200;
  std::string body;         // kHttpError: the body sent
  std::string retry_after;  // kHttpError: Retry-After header value; empty: none
  double delay_s = 0;       // wait before answering (cut short when the server stops)

  static ScriptedReply Completion(std::string text, double delay_s = 0);
  static ScriptedReply HttpError(int status, std::string retry_after = "", std::string body = "");
  static ScriptedReply TruncatedJson();
  static ScriptedReply DropConnection();
  static ScriptedReply RawBody(std::string body);
};

struct RecordedRequest {
  std::string method;
  std::string path;
  std::string authorization;  // the Authorization header as received
  std::string body;
  double received_s = 0;  // seconds since the server started
};

class TestLlmServer {
 public:
  // Binds 127.0.0.1 on a free port and starts serving with `threads` handler threads.
  static Result<std::unique_ptr<TestLlmServer>> Start(int threads = 16);
  ~TestLlmServer();  // Stop()
  TestLlmServer(const TestLlmServer&) = delete;
  TestLlmServer& operator=(const TestLlmServer&) = delete;

  void Push(ScriptedReply reply);         // appends to the script
  void SetFallback(ScriptedReply reply);  // answer once the script is spent (default: "ok")
  void Stop();                            // idempotent; wakes delayed handlers
  // Serves a model with a context of `tokens` (0: unlimited, the default): a chat request
  // whose messages (bytes / 4) plus max_tokens exceed it is answered 400 in vLLM's words
  // (not taken from the script). With `advertise`, GET /v1/models says max_model_len.
  void SetContextLimit(int64_t tokens, bool advertise);
  // Serves like an OpenAI reasoning model: a chat request with `max_tokens` is answered 400
  // "Unsupported parameter: 'max_tokens' ... Use 'max_completion_tokens' instead.", one with a
  // temperature other than 1 is answered 400 "Unsupported value: 'temperature' ...", both in
  // OpenAI's words (not taken from the script).
  void SetReasoningModelParams(bool on);
  int models_requests() const { return models_requests_.load(); }  // GETs of /v1/models

  int port() const { return port_; }
  std::string base_url() const;  // "http://127.0.0.1:PORT/v1"
  std::vector<RecordedRequest> requests() const;
  int max_concurrent() const { return max_concurrent_.load(); }

 private:
  TestLlmServer();
  void Handle(const void* request, void* response);  // httplib types, kept out of the header

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::chrono::steady_clock::time_point started_;

  mutable std::mutex mu_;  // guards the fields below
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::deque<ScriptedReply> script_;
  ScriptedReply fallback_;
  std::vector<RecordedRequest> requests_;
  int64_t context_limit_ = 0;
  bool advertise_context_ = false;
  bool reasoning_params_ = false;
  std::atomic<int> models_requests_{0};

  std::atomic<int> concurrent_{0};
  std::atomic<int> max_concurrent_{0};
};

}  // namespace ks
