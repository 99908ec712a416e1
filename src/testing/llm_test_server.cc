#include "testing/llm_test_server.h"

#include <httplib.h>

#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

namespace ks {
namespace {

using nlohmann::json;

std::string CompletionBody(const ScriptedReply& r, const std::string& request_body) {
  json req = json::parse(request_body, nullptr, /*allow_exceptions=*/false);
  std::string model = "test-model";
  if (req.is_object() && req.contains("model") && req["model"].is_string()) {
    model = req["model"].get<std::string>();
  }
  json message = {{"role", "assistant"}, {"content", r.content}};
  if (!r.reasoning_content.empty()) message["reasoning_content"] = r.reasoning_content;
  int64_t prompt =
      r.prompt_tokens >= 0 ? r.prompt_tokens : static_cast<int64_t>(request_body.size() / 4);
  int64_t completion =
      r.completion_tokens >= 0 ? r.completion_tokens : static_cast<int64_t>(r.content.size() / 4);
  json body = {
      {"id", "chatcmpl-test"},
      {"object", "chat.completion"},
      {"model", model},
      {"choices",
       json::array({{{"index", 0}, {"message", message}, {"finish_reason", r.finish_reason}}})},
      {"usage",
       {{"prompt_tokens", prompt},
        {"completion_tokens", completion},
        {"total_tokens", prompt + completion}}}};
  return body.dump();
}

// vLLM's rejection of a request whose messages (bytes / 4) and max_tokens exceed `limit`.
std::optional<std::string> ContextError(const std::string& request_body, int64_t limit) {
  json req = json::parse(request_body, nullptr, /*allow_exceptions=*/false);
  if (!req.is_object() || !req.contains("messages") || !req["messages"].is_array()) {
    return std::nullopt;
  }
  int64_t prompt = 0;
  for (const json& m : req["messages"]) {
    if (m.is_object() && m.contains("content") && m["content"].is_string()) {
      prompt += static_cast<int64_t>(m["content"].get<std::string>().size()) / 4;
    }
  }
  int64_t completion = req.value("max_tokens", int64_t{0});
  if (prompt + completion <= limit) return std::nullopt;
  return json({{"object", "error"},
               {"message", "This model's maximum context length is " + std::to_string(limit) +
                               " tokens. However, you requested " +
                               std::to_string(prompt + completion) + " tokens (" +
                               std::to_string(prompt) + " in the messages, " +
                               std::to_string(completion) +
                               " in the completion). Please reduce the length of the "
                               "messages or completion."},
               {"type", "BadRequestError"},
               {"param", nullptr},
               {"code", 400}})
      .dump();
}

// OpenAI's rejection of the parameters its reasoning models do not take.
std::optional<std::string> ReasoningParamError(const std::string& request_body) {
  json req = json::parse(request_body, nullptr, /*allow_exceptions=*/false);
  if (!req.is_object()) return std::nullopt;
  auto error = [](const std::string& message, const std::string& param, const std::string& code) {
    return json({{"error",
                  {{"message", message},
                   {"type", "invalid_request_error"},
                   {"param", param},
                   {"code", code}}}})
        .dump();
  };
  if (req.contains("max_tokens")) {
    return error(
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
        "'max_completion_tokens' instead.",
        "max_tokens", "unsupported_parameter");
  }
  if (req.contains("temperature") && req["temperature"] != 1) {
    return error("Unsupported value: 'temperature' does not support " + req["temperature"].dump() +
                     " with this model. Only the default (1) value is supported.",
                 "temperature", "unsupported_value");
  }
  return std::nullopt;
}

}  // namespace

ScriptedReply ScriptedReply::Completion(std::string text, double delay_s) {
  ScriptedReply r;
  r.content = std::move(text);
  r.delay_s = delay_s;
  return r;
}

ScriptedReply ScriptedReply::HttpError(int status, std::string retry_after, std::string body) {
  ScriptedReply r;
  r.kind = Kind::kHttpError;
  r.http_status = status;
  r.retry_after = std::move(retry_after);
  r.body = std::move(body);
  return r;
}

ScriptedReply ScriptedReply::TruncatedJson() {
  ScriptedReply r = Completion("class ModelNew: pass  # cut off before this ends");
  r.kind = Kind::kTruncatedJson;
  return r;
}

ScriptedReply ScriptedReply::DropConnection() {
  ScriptedReply r = Completion("class ModelNew: pass  # the connection drops mid-body");
  r.kind = Kind::kDropConnection;
  return r;
}

ScriptedReply ScriptedReply::RawBody(std::string body) {
  ScriptedReply r;
  r.kind = Kind::kRawBody;
  r.body = std::move(body);
  return r;
}

TestLlmServer::TestLlmServer()
    : server_(std::make_unique<httplib::Server>()),
      started_(std::chrono::steady_clock::now()),
      fallback_(ScriptedReply::Completion("ok")) {}

Result<std::unique_ptr<TestLlmServer>> TestLlmServer::Start(int threads) {
  std::unique_ptr<TestLlmServer> s(new TestLlmServer());
  const size_t n = threads > 0 ? static_cast<size_t>(threads) : 16;
  s->server_->new_task_queue = [n] { return new httplib::ThreadPool(n); };
  s->server_->set_keep_alive_timeout(1);
  TestLlmServer* self = s.get();
  s->server_->Post(R"(/.*)", [self](const httplib::Request& req, httplib::Response& res) {
    self->Handle(&req, &res);
  });
  s->server_->Get(R"(/.*)", [self](const httplib::Request& req, httplib::Response& res) {
    if (req.path != "/v1/models") {
      res.status = 404;
      return;
    }
    ++self->models_requests_;
    json model = {{"id", "test-model"}, {"object", "model"}};
    {
      std::lock_guard<std::mutex> lock(self->mu_);
      if (self->advertise_context_ && self->context_limit_ > 0) {
        model["max_model_len"] = self->context_limit_;
      }
    }
    res.set_content(json({{"object", "list"}, {"data", json::array({model})}}).dump(),
                    "application/json");
  });
  s->port_ = s->server_->bind_to_any_port("127.0.0.1");
  if (s->port_ <= 0) return Status::IOError("test LLM server: cannot bind 127.0.0.1");
  s->thread_ = std::thread([self] { self->server_->listen_after_bind(); });
  while (!s->server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return s;
}

TestLlmServer::~TestLlmServer() { Stop(); }

void TestLlmServer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

std::string TestLlmServer::base_url() const {
  return "http://127.0.0.1:" + std::to_string(port_) + "/v1";
}

void TestLlmServer::Push(ScriptedReply reply) {
  std::lock_guard<std::mutex> lock(mu_);
  script_.push_back(std::move(reply));
}

void TestLlmServer::SetFallback(ScriptedReply reply) {
  std::lock_guard<std::mutex> lock(mu_);
  fallback_ = std::move(reply);
}

void TestLlmServer::SetReasoningModelParams(bool on) {
  std::lock_guard<std::mutex> lock(mu_);
  reasoning_params_ = on;
}

void TestLlmServer::SetContextLimit(int64_t tokens, bool advertise) {
  std::lock_guard<std::mutex> lock(mu_);
  context_limit_ = tokens;
  advertise_context_ = advertise;
}

std::vector<RecordedRequest> TestLlmServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

void TestLlmServer::Handle(const void* request, void* response) {
  const auto& req = *static_cast<const httplib::Request*>(request);
  auto& res = *static_cast<httplib::Response*>(response);
  int now = ++concurrent_;
  for (int seen = max_concurrent_.load(); now > seen;) {
    if (max_concurrent_.compare_exchange_weak(seen, now)) break;
  }
  try {  // handlers never throw
    ScriptedReply reply;
    {
      std::unique_lock<std::mutex> lock(mu_);
      RecordedRequest rec;
      rec.method = req.method;
      rec.path = req.path;
      rec.authorization = req.get_header_value("Authorization");
      rec.body = req.body;
      rec.received_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
      requests_.push_back(std::move(rec));
      std::optional<std::string> too_long =
          context_limit_ > 0 ? ContextError(req.body, context_limit_) : std::nullopt;
      std::optional<std::string> rejected =
          reasoning_params_ ? ReasoningParamError(req.body) : std::nullopt;
      if (req.path != "/v1/chat/completions") {
        reply = ScriptedReply::HttpError(
            404, "", json({{"error", {{"message", "no route " + req.path}}}}).dump());
      } else if (rejected) {
        reply = ScriptedReply::HttpError(400, "", *rejected);
      } else if (too_long) {
        reply = ScriptedReply::HttpError(400, "", *too_long);
      } else if (!script_.empty()) {
        reply = std::move(script_.front());
        script_.pop_front();
      } else {
        reply = fallback_;
      }
      stop_cv_.wait_for(lock, std::chrono::duration<double>(reply.delay_s),
                        [this] { return stopping_; });
    }
    std::string full = CompletionBody(reply, req.body);
    switch (reply.kind) {
      case ScriptedReply::Kind::kCompletion:
        res.set_content(full, "application/json");
        break;
      case ScriptedReply::Kind::kHttpError:
        res.status = reply.http_status;
        if (!reply.retry_after.empty()) res.set_header("Retry-After", reply.retry_after);
        res.set_content(
            reply.body.empty()
                ? json({{"error",
                         {{"message", "scripted HTTP " + std::to_string(reply.http_status)}}}})
                      .dump()
                : reply.body,
            "application/json");
        break;
      case ScriptedReply::Kind::kTruncatedJson:
        res.set_content(full.substr(0, full.size() / 2), "application/json");
        break;
      case ScriptedReply::Kind::kRawBody:
        res.set_content(reply.body, "application/json");
        break;
      case ScriptedReply::Kind::kDropConnection:
        res.set_content_provider(full.size(), "application/json",
                                 [full](size_t offset, size_t, httplib::DataSink& sink) {
                                   if (offset == 0) sink.write(full.data(), full.size() / 2);
                                   return false;  // closes the connection mid-body
                                 });
        break;
    }
  } catch (const std::exception& e) {
    res.status = 500;
    res.set_content(json({{"error", {{"message", e.what()}}}}).dump(), "application/json");
  }
  --concurrent_;
}

}  // namespace ks
