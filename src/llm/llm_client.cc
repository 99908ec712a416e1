#include "llm/llm_client.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <thread>

#include "llm/context_budget.h"
#include "llm/openai_wire.h"

namespace ks {
namespace {

void GlobalCurlInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  }
  return true;
}

// Loopback endpoints (a local vLLM) never go through a proxy; the user's no_proxy is kept.
std::string NoProxyList() {
  std::string list = "localhost,127.0.0.1,::1";
  for (const char* var : {"no_proxy", "NO_PROXY"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') return list + "," + v;
  }
  return list;
}

using Clock = std::chrono::steady_clock;

// Tokens kept free when max_tokens is shrunk to the room a server reports.
constexpr int64_t kTokensContextMargin = 16;
// Limit of the one GET {base_url}/models that asks for the model's context.
constexpr double kModelsTimeoutS = 30;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

struct OpenAiClient::Attempt {
  CURLcode curl_code = CURLE_OK;
  std::string curl_error;
  long http_status = 0;
  std::string body;
  std::optional<double> retry_after;
  bool body_too_large = false;
  size_t max_body = 0;
};

namespace {

size_t OnBody(char* data, size_t size, size_t nmemb, void* user) {
  auto* a = static_cast<OpenAiClient::Attempt*>(user);
  size_t n = size * nmemb;
  if (a->body.size() + n > a->max_body) {
    a->body_too_large = true;
    return 0;  // aborts the transfer
  }
  a->body.append(data, n);
  return n;
}

size_t OnHeader(char* data, size_t size, size_t nmemb, void* user) {
  auto* a = static_cast<OpenAiClient::Attempt*>(user);
  std::string_view line(data, size * nmemb);
  if (StartsWithNoCase(line, "http/")) a->retry_after.reset();  // a new response begins
  constexpr std::string_view kRetryAfter = "retry-after:";
  if (StartsWithNoCase(line, kRetryAfter)) {
    a->retry_after = ParseRetryAfter(line.substr(kRetryAfter.size()));
  }
  return size * nmemb;
}

}  // namespace

Result<std::unique_ptr<OpenAiClient>> OpenAiClient::Create(OpenAiClientOptions options) {
  while (!options.base_url.empty() && options.base_url.back() == '/') options.base_url.pop_back();
  if (options.base_url.rfind("http://", 0) != 0 && options.base_url.rfind("https://", 0) != 0) {
    return Status::InvalidArgument(fmt::format(
        "LLM base URL '{}' must start with http:// or https:// (e.g. http://localhost:8000/v1)",
        options.base_url));
  }
  if (options.max_attempts < 1 || options.max_in_flight < 1) {
    return Status::InvalidArgument("LLM client: max_attempts and max_in_flight must be >= 1");
  }
  if (!(options.connect_timeout_s > 0) || !(options.request_timeout_s > 0)) {
    return Status::InvalidArgument("LLM client: connect and request timeouts must be > 0 s");
  }
  if (options.max_completion_chars == 0 || options.max_response_bytes == 0) {
    return Status::InvalidArgument("LLM client: completion and response caps must be > 0");
  }
  std::string key;
  if (!options.api_key_env.empty()) {
    const char* v = std::getenv(options.api_key_env.c_str());
    if (v == nullptr || *v == '\0') {
      return Status::InvalidArgument(
          fmt::format("the API key variable ${} is unset or empty; export it or pass another "
                      "--api-key-env",
                      options.api_key_env));
    }
    key = v;
  }
  GlobalCurlInit();
  return std::unique_ptr<OpenAiClient>(new OpenAiClient(std::move(options), std::move(key)));
}

OpenAiClient::OpenAiClient(OpenAiClientOptions options, std::string api_key)
    : options_(std::move(options)),
      api_key_(std::move(api_key)),
      url_(options_.base_url + "/chat/completions"),
      rng_(options_.seed) {}

OpenAiClient::~OpenAiClient() {
  for (void* h : idle_handles_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* OpenAiClient::TakeHandle() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_handles_.empty()) {
      void* h = idle_handles_.back();
      idle_handles_.pop_back();
      curl_easy_reset(static_cast<CURL*>(h));  // keeps the live connections
      return h;
    }
  }
  return curl_easy_init();
}

void OpenAiClient::ReturnHandle(void* handle) {
  std::lock_guard<std::mutex> lock(mu_);
  idle_handles_.push_back(handle);
}

double OpenAiClient::BackoffSeconds(int failed_attempts) {
  double base = options_.backoff_initial_s * std::pow(2.0, failed_attempts - 1);
  base = std::min(base, options_.backoff_max_s);
  std::lock_guard<std::mutex> lock(mu_);
  double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;  // [0, 1)
  return std::max(0.0, base * (1.0 + options_.backoff_jitter * (2 * u - 1)));
}

OpenAiClient::Attempt OpenAiClient::Exchange(const std::string* body, const std::string& url,
                                             double timeout_s) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    slot_free_.wait(lock, [&] { return in_flight_ < options_.max_in_flight; });
    ++in_flight_;
  }
  Attempt a;
  a.max_body = options_.max_response_bytes;
  CURL* curl = static_cast<CURL*>(TakeHandle());
  if (curl == nullptr) {
    a.curl_code = CURLE_OUT_OF_MEMORY;
    a.curl_error = "curl_easy_init failed";
  } else {
    char errbuf[CURL_ERROR_SIZE] = {0};
    curl_slist* headers = nullptr;
    headers = curl_slist_append(headers, "Content-Type: application/json");
    headers = curl_slist_append(headers, "Expect:");
    std::string auth;
    if (!api_key_.empty()) {
      auth = "Authorization: Bearer " + api_key_;
      headers = curl_slist_append(headers, auth.c_str());
    }
    std::string no_proxy = NoProxyList();
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_NOPROXY, no_proxy.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    if (body != nullptr) {
      curl_easy_setopt(curl, CURLOPT_POST, 1L);
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body->data());
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
    } else {
      curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    }
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(options_.connect_timeout_s * 1000));
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_s * 1000));
    curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &a);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &a);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
    a.curl_code = curl_easy_perform(curl);
    if (a.curl_code != CURLE_OK) {
      a.curl_error = errbuf[0] != '\0' ? errbuf : curl_easy_strerror(a.curl_code);
    }
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &a.http_status);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
    curl_slist_free_all(headers);
    ReturnHandle(curl);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_;
  }
  slot_free_.notify_one();
  return a;
}

Result<ChatResponse> OpenAiClient::Complete(const ChatRequest& request) {
  const auto start = Clock::now();
  const std::string model = request.model.empty() ? options_.model : request.model;
  if (model.empty()) {
    return Status::InvalidArgument(
        fmt::format("no model named for {}; pass --model (the name the server serves)", url_));
  }
  if (request.messages.empty()) {
    return Status::InvalidArgument("chat request without messages");
  }
  ChatRequest sent = request;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = reasoning_params_.find(model); it != reasoning_params_.end()) {
      sent.max_completion_tokens = sent.max_completion_tokens || it->second.first;
      sent.default_sampling = sent.default_sampling || it->second.second;
    }
  }
  if (int64_t context = ContextTokens(model); context > 0) {
    Result<int> fit = FitMaxTokens(sent.max_tokens, context, EstimatePromptTokens(sent.messages));
    if (!fit.ok()) {
      return Status::InvalidArgument(fmt::format("{} ({})", fit.status().message(), url_));
    }
    sent.max_tokens = *fit;
  }
  std::string body = BuildChatRequestBody(sent, model);
  const std::string key_hint =
      options_.api_key_env.empty() ? "" : fmt::format(" (key from ${})", options_.api_key_env);
  Status last;
  bool shrunk = false;
  for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
    Attempt a = Exchange(&body, url_, options_.request_timeout_s);
    bool retryable = false;
    std::optional<double> wait;
    if (a.body_too_large) {
      return Status::Protocol(fmt::format("{} sent a reply larger than {} bytes; aborted", url_,
                                          options_.max_response_bytes));
    } else if (a.curl_code == CURLE_OPERATION_TIMEDOUT) {
      last = Status::Timeout(
          fmt::format("no complete reply from {} within {:g} s (connect limit {:g} s): {}", url_,
                      options_.request_timeout_s, options_.connect_timeout_s, a.curl_error));
      retryable = true;
    } else if (a.curl_code == CURLE_COULDNT_RESOLVE_HOST || a.curl_code == CURLE_URL_MALFORMAT ||
               a.curl_code == CURLE_UNSUPPORTED_PROTOCOL ||
               a.curl_code == CURLE_PEER_FAILED_VERIFICATION) {
      return Status::IOError(
          fmt::format("cannot reach {}: {}; check --llm-url", url_, a.curl_error));
    } else if (a.curl_code != CURLE_OK) {
      last = Status::IOError(fmt::format("cannot get a reply from {}: {}; is the server running?",
                                         url_, a.curl_error));
      retryable = true;
    } else if (a.http_status >= 200 && a.http_status < 300) {
      Result<ChatResponse> r = ParseChatResponse(a.body, options_.max_completion_chars, url_);
      if (!r.ok()) return r.status();
      r->attempts = attempt;
      r->latency_s = SecondsSince(start);
      if (r->model.empty()) r->model = model;
      r->max_tokens = sent.max_tokens;
      return r;
    } else if (a.http_status == 401 || a.http_status == 403) {
      std::string what =
          options_.api_key_env.empty()
              ? fmt::format("{} requires an API key (HTTP {}); pass --api-key-env VAR", url_,
                            a.http_status)
              : fmt::format("the endpoint rejected the API key from ${} (HTTP {} from {})",
                            options_.api_key_env, a.http_status, url_);
      return Status::InvalidArgument(what + ": " + ErrorBodyMessage(a.body));
    } else if (a.http_status == 404) {
      return Status::NotFound(fmt::format(
          "no such model or path at {} (HTTP 404, model '{}'): {}; check --llm-url (usually "
          "ending in /v1) and --model",
          url_, model, ErrorBodyMessage(a.body)));
    } else if (a.http_status == 408 || a.http_status == 429 || a.http_status >= 500) {
      last = Status::IOError(fmt::format("{} answered HTTP {}{}: {}", url_, a.http_status, key_hint,
                                         ErrorBodyMessage(a.body)));
      retryable = true;
      wait = a.retry_after;
    } else if (ParamRejection pr = ParseParamRejection(a.body);
               (pr == ParamRejection::kMaxTokens && !sent.max_completion_tokens) ||
               (pr == ParamRejection::kSampling && !sent.default_sampling)) {
      // A reasoning model: the request again in the form the server names, for this model
      // from now on; not a transient fault, so the retry budget stays.
      (pr == ParamRejection::kMaxTokens ? sent.max_completion_tokens : sent.default_sampling) =
          true;
      {
        std::lock_guard<std::mutex> lock(mu_);
        reasoning_params_[model] = {sent.max_completion_tokens, sent.default_sampling};
      }
      body = BuildChatRequestBody(sent, model);
      --attempt;
      continue;
    } else if (std::optional<ContextExceeded> ce = ParseContextExceeded(a.body)) {
      // Once: max_tokens shrunk to what the server says is left (half when it does not say).
      int64_t room = ce->context > 0 && ce->prompt_tokens
                         ? ce->context - *ce->prompt_tokens - kTokensContextMargin
                         : sent.max_tokens / 2;
      if (shrunk || room < kMinCompletionTokens || room >= sent.max_tokens) {
        return Status::InvalidArgument(fmt::format(
            "{} rejected the request: prompt and max_tokens {} exceed the model's context "
            "(HTTP {}, model '{}'): {}; pass --context-tokens (the server's --max-model-len) or "
            "a smaller --max-tokens",
            url_, sent.max_tokens, a.http_status, model, ErrorBodyMessage(a.body)));
      }
      shrunk = true;
      sent.max_tokens = static_cast<int>(room);
      if (ce->context > 0 && options_.context_tokens == 0) {
        std::lock_guard<std::mutex> lock(mu_);
        contexts_[model] = ce->context;  // later calls fit before they are sent
      }
      body = BuildChatRequestBody(sent, model);
      --attempt;  // not a transient fault: the retry budget stays
      continue;
    } else {
      return Status::InvalidArgument(
          fmt::format("{} rejected the request (HTTP {}, model '{}'): {}", url_, a.http_status,
                      model, ErrorBodyMessage(a.body)));
    }
    if (!retryable || attempt == options_.max_attempts) break;
    double seconds = wait ? std::min(*wait, options_.retry_after_max_s) : BackoffSeconds(attempt);
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }
  std::string msg = fmt::format("{} (gave up after {} attempt{})", last.message(),
                                options_.max_attempts, options_.max_attempts == 1 ? "" : "s");
  return last.code() == Status::Code::kTimeout ? Status::Timeout(msg) : Status::IOError(msg);
}

int64_t OpenAiClient::ContextTokens(const std::string& model) {
  if (options_.context_tokens > 0) return options_.context_tokens;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = contexts_.find(model);
    if (it != contexts_.end()) return it->second;
  }
  Attempt a = Exchange(nullptr, options_.base_url + "/models", kModelsTimeoutS);
  if (a.curl_code != CURLE_OK) return 0;  // no answer: asked again on the next call
  int64_t context = 0;
  if (a.http_status == 200) context = ContextFromModels(a.body, model).value_or(0);
  std::lock_guard<std::mutex> lock(mu_);
  contexts_[model] = context;
  return context;
}

}  // namespace ks
