// LLM chat completions: the request/response records, the LlmClient interface the proposers
// hold, and OpenAiClient, which speaks the OpenAI-compatible `POST {base_url}/chat/completions`
// (vLLM, SGLang, OpenAI, any compatible server) over libcurl.
//
// OpenAiClient retries transient faults (HTTP 429/408/5xx, timeouts, refused or dropped
// connections) with exponential backoff and jitter, honouring Retry-After; it never retries a
// request the endpoint rejected (400/401/403/404/422) or a reply it cannot parse. Every error
// message names the URL and says what to do; the API key is never logged or put in a message.
// Thread-safety: LlmClient implementations must be safe to call from several threads at once;
// OpenAiClient is (requests in flight are bounded by `max_in_flight`, extra callers wait).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace ks {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

struct ChatRequest {
  std::vector<ChatMessage> messages;
  double temperature = 0.6;  // the paper's protocol
  double top_p = 0.95;
  int max_tokens = 32768;
  std::string model;              // empty: the client's default model
  std::vector<std::string> stop;  // stop sequences; empty: none sent
  // Reasoning models of OpenAI take the cap as `max_completion_tokens` and only their default
  // sampling; OpenAiClient switches these on when the server's 400 says so (once per model).
  bool max_completion_tokens = false;  // send max_tokens as max_completion_tokens
  bool default_sampling = false;       // send no temperature and top_p
};

struct ChatResponse {
  std::string content;            // the completion text (capped, see `capped`)
  std::string reasoning_content;  // separate reasoning, when the server returns it
  std::string finish_reason;      // "stop", "length", ... as the server said
  int64_t prompt_tokens = 0;      // from `usage`; 0 when the server does not report it
  int64_t completion_tokens = 0;
  bool usage_reported = false;  // the server reported the token counts (`usage`)
  double latency_s = 0;         // wall time of the call, retries and waits included
  std::string model;            // the model that answered (the server's name for it)
  int attempts = 0;             // HTTP attempts made, 1 when the first succeeded
  bool capped = false;          // content was cut to OpenAiClientOptions::max_completion_chars
  int max_tokens = 0;           // max_tokens as sent: the request's, capped to the model's context
};

// The seam proposers hold. Complete returns the completion or a Status whose message a user can
// act on: InvalidArgument (the endpoint rejected the request or key), NotFound (no such model
// or path), IOError (unreachable, or still failing after retries), Timeout, Protocol (a reply
// that is not a usable chat completion, empty completions included).
class LlmClient {
 public:
  virtual ~LlmClient() = default;
  virtual Result<ChatResponse> Complete(const ChatRequest& request) = 0;
  // Where the calls go, for messages and logs, e.g. "http://localhost:8000/v1". No secrets.
  virtual std::string Endpoint() const = 0;
  // OK while a call may still succeed. Once the client has given up on its endpoint(s) for
  // good (DeadEndpointGuard, llm/ensemble.h), the error every further call returns, so that a
  // caller can stop instead of spinning.
  virtual Status GaveUp() const { return Status::Ok(); }
};

struct OpenAiClientOptions {
  // Base URL up to and including the API version, e.g. "http://localhost:8000/v1" (vLLM,
  // SGLang) or "https://api.openai.com/v1". "/chat/completions" is appended. Required.
  std::string base_url;
  // Model used when ChatRequest::model is empty. Required unless every request names one.
  std::string model;
  // Name of the environment variable holding the API key (read at construction, sent as
  // "Authorization: Bearer ..."). Empty: no Authorization header. A named variable that is
  // unset or empty makes Create fail.
  std::string api_key_env;
  double connect_timeout_s = 10;   // TCP/TLS connect limit per attempt
  double request_timeout_s = 900;  // whole-attempt limit (send, generate, receive)
  int max_attempts = 4;            // attempts per call, the first included; >= 1
  double backoff_initial_s = 2;    // wait before the 2nd attempt; doubles per attempt
  double backoff_max_s = 60;       // upper bound of one backoff wait
  double backoff_jitter = 0.25;    // each wait is scaled by a uniform factor in [1-j, 1+j]
  double retry_after_max_s = 300;  // a server's Retry-After is honoured up to this many s
  int max_in_flight = 8;           // requests this client has on the wire at once; >= 1
  // Completions longer than this are cut (ChatResponse::capped); reasoning likewise.
  size_t max_completion_chars = 1 << 20;
  // A response body larger than this aborts the transfer with a Protocol error.
  size_t max_response_bytes = 64 << 20;
  uint64_t seed = 0;  // seeds the backoff jitter
  // The model's context in tokens: max_tokens is capped to what the prompt leaves of it. 0:
  // asked once per model from GET {base_url}/models (vLLM and SGLang say `max_model_len`);
  // when the server does not say, max_tokens is sent as requested, and a rejection that says
  // the context is exceeded is retried once with max_tokens shrunk to fit.
  int64_t context_tokens = 0;
};

class OpenAiClient final : public LlmClient {
 public:
  // Validates `options` and reads the API key. InvalidArgument names the bad field or the
  // unset environment variable.
  static Result<std::unique_ptr<OpenAiClient>> Create(OpenAiClientOptions options);
  ~OpenAiClient() override;
  OpenAiClient(const OpenAiClient&) = delete;
  OpenAiClient& operator=(const OpenAiClient&) = delete;

  Result<ChatResponse> Complete(const ChatRequest& request) override;
  std::string Endpoint() const override { return options_.base_url; }
  const OpenAiClientOptions& options() const { return options_; }

  struct Attempt;  // internal: one HTTP exchange's outcome (defined in the .cc)

 private:
  OpenAiClient(OpenAiClientOptions options, std::string api_key);
  // One HTTP exchange under an in-flight slot: POST `body` to the chat URL, or (null body)
  // GET `url`.
  Attempt Exchange(const std::string* body, const std::string& url, double timeout_s);
  // The context of `model` (options or the server's /models); 0 when unknown. Cached.
  int64_t ContextTokens(const std::string& model);
  void* TakeHandle();  // a pooled CURL easy handle
  void ReturnHandle(void* handle);
  double BackoffSeconds(int failed_attempts);

  const OpenAiClientOptions options_;
  const std::string api_key_;  // never logged
  const std::string url_;      // base_url + "/chat/completions"

  std::mutex mu_;  // guards everything below
  std::condition_variable slot_free_;
  int in_flight_ = 0;
  std::vector<void*> idle_handles_;          // reused so connections stay alive
  std::map<std::string, int64_t> contexts_;  // model -> ContextTokens' answer
  // model -> the parameter forms its server asked for (reasoning models, see ChatRequest)
  std::map<std::string, std::pair<bool, bool>> reasoning_params_;
  std::mt19937_64 rng_;
};

}  // namespace ks
