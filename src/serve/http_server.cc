#include "serve/http_server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <cmath>
#include <exception>

#include "serve/peer_socket.h"
#include "serve/request_json.h"

namespace ks {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

void Error(httplib::Response& res, int status, const std::string& type, const std::string& message) {
  res.status = status;
  res.set_content(json({{"error", {{"message", message}, {"type", type}}}}).dump() + "\n",
                  "application/json");
}

void Ok(httplib::Response& res, const json& body) {
  res.status = 200;
  res.set_content(body.dump() + "\n", "application/json");
}

// The outcome name recorded in metrics for one reward.
std::string OutcomeOf(const RewardItemResult& r) { return r.status; }

}  // namespace

RewardServer::RewardServer(RewardService* service, AdmissionQueue* queue,
                           ParentBaselines* baselines, ServeMetrics* metrics,
                           RewardServerOptions options)
    : service_(service),
      queue_(queue),
      baselines_(baselines),
      metrics_(metrics),
      options_(std::move(options)),
      server_(std::make_unique<httplib::Server>()) {}

RewardServer::~RewardServer() { Stop(); }

Status RewardServer::Start() {
  const size_t threads = static_cast<size_t>(std::max(options_.threads, 2));
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server_->set_payload_max_length(options_.max_body_bytes);
  server_->set_keep_alive_timeout(5);
  server_->set_read_timeout(60);
  server_->set_write_timeout(60);
  server_->Post("/v1/evaluate", [this](const httplib::Request& req, httplib::Response& res) {
    Route("/v1/evaluate", req, res, [this](auto& q, auto& s) { Evaluate(q, s); });
  });
  server_->Post("/v1/reward", [this](const httplib::Request& req, httplib::Response& res) {
    Route("/v1/reward", req, res, [this](auto& q, auto& s) { Reward(q, s); });
  });
  server_->Post("/get_reward", [this](const httplib::Request& req, httplib::Response& res) {
    Route("/get_reward", req, res, [this](auto& q, auto& s) { OpenRlhf(q, s); });
  });
  server_->Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    Health(res);
  });
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    std::vector<prometheus::MetricFamily> families = metrics_->Collect(
        queue_->stats(), queue_->options().max_queue, options_.slots, baselines_->stats());
    if (options_.extra_metrics) {
      for (prometheus::MetricFamily& f : options_.extra_metrics()) families.push_back(std::move(f));
    }
    res.set_content(PrometheusText(families), "text/plain; version=0.0.4");
  });
  server_->set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413) {
      Error(res, 413, "payload_too_large",
            fmt::format("the request body is larger than the service's limit of {} bytes "
                        "(--max-body-mb); send smaller batches",
                        options_.max_body_bytes));
      metrics_->RecordRequest(req.path, 413, 0);
    } else if (res.status == 404) {
      Error(res, 404, "not_found",
            "no route " + req.method + " " + req.path +
                "; endpoints: POST /v1/evaluate, POST /v1/reward, POST /get_reward, "
                "GET /healthz, GET /metrics");
    } else {
      Error(res, res.status, "http_error", fmt::format("HTTP {}", res.status));
    }
  });
  port_ = options_.port == 0 ? server_->bind_to_any_port(options_.host)
                             : (server_->bind_to_port(options_.host, options_.port)
                                    ? options_.port
                                    : -1);
  if (port_ <= 0) {
    return Status::IOError(fmt::format(
        "cannot listen on {}:{} (address in use, or not an address of this machine?); choose "
        "another --port or --host",
        options_.host, options_.port));
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return Status::Ok();
}

void RewardServer::Stop() {
  stopping_ = true;
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

void RewardServer::Route(const std::string& endpoint, const httplib::Request& req,
                         httplib::Response& res, const Body& body) {
  auto start = Clock::now();
  if (stopping_) {
    Error(res, 503, "shutting_down", "the service is shutting down; retry on another instance");
  } else {
    try {  // handlers never throw
      body(req, res);
    } catch (const std::exception& e) {
      Error(res, 500, "internal", std::string("internal error: ") + e.what());
    } catch (...) {
      Error(res, 500, "internal", "internal error");
    }
  }
  metrics_->RecordRequest(endpoint, res.status,
                          std::chrono::duration<double>(Clock::now() - start).count());
}

WaitControl RewardServer::WaitFor(const httplib::Request& req,
                                  std::optional<double> timeout_s) const {
  WaitControl w;
  double seconds = timeout_s.value_or(options_.request_timeout_s);
  w.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(std::min(seconds, 1e7)));
  w.stopping = &stopping_;
  auto fd = std::make_shared<int>(-2);  // -2: not looked up yet
  std::string ip = req.remote_addr;
  int port = req.remote_port;
  w.client_gone = [fd, ip, port] {
    if (*fd == -2) *fd = FindPeerSocket(ip, port);
    return *fd >= 0 && PeerClosed(*fd);
  };
  return w;
}

bool RewardServer::Unfinished(CallOutcome o, size_t evaluations, httplib::Response& res) const {
  switch (o) {
    case CallOutcome::kDone:
      return false;
    case CallOutcome::kBusy: {
      // About how long until the queue has drained enough: queued work over the slots.
      AdmissionStats s = queue_->stats();
      double waves = static_cast<double>(s.queued + s.in_flight) /
                     static_cast<double>(std::max<size_t>(options_.slots, 1));
      int retry = static_cast<int>(std::clamp(std::ceil(waves), 1.0, 60.0));
      res.set_header("Retry-After", std::to_string(retry));
      Error(res, 429, "queue_full",
            fmt::format("the evaluation queue is full ({} waiting, --max-queue {}); retry after "
                        "{} s",
                        s.queued, queue_->options().max_queue, retry));
      return true;
    }
    case CallOutcome::kTooLarge:
      Error(res, 413, "batch_too_large",
            fmt::format("the request needs {} evaluations but at most {} fit (--max-queue {} "
                        "plus {} worker slots); split it into smaller batches",
                        evaluations, queue_->options().max_queue + queue_->options().max_in_flight,
                        queue_->options().max_queue, queue_->options().max_in_flight));
      return true;
    case CallOutcome::kDeadline:
      Error(res, 504, "deadline_exceeded",
            "the request's deadline passed before its evaluations finished; its queued "
            "evaluations were cancelled (raise timeout_s or --request-timeout, or lower the "
            "load)");
      return true;
    case CallOutcome::kClientGone:
      Error(res, 499, "client_gone", "the client disconnected");
      return true;
    case CallOutcome::kShuttingDown:
      Error(res, 503, "shutting_down", "the service is shutting down");
      return true;
  }
  return true;
}

Status RewardServer::BackendServed(const std::string& backend) const {
  auto it = options_.hello.find("backends");
  if (it == options_.hello.end() || !it->is_array()) return Status::Ok();
  for (const json& b : *it) {
    if (b.is_string() && b.get<std::string>() == backend) return Status::Ok();
  }
  return Status::InvalidArgument("backend \"" + backend +
                                 "\" cannot run on this service's worker (it serves " +
                                 it->dump() + "); use one of those or another instance");
}

void RewardServer::Evaluate(const httplib::Request& req, httplib::Response& res) {
  Result<json> body = ParseJsonObject(req.body);
  if (!body.ok()) return Error(res, 400, "invalid_request", body.status().message());
  EvalRequest defaults;
  defaults.backend = service_->options().default_backend;
  defaults.trials = service_->options().trials;
  defaults.tolerance = service_->options().tolerance;
  defaults.seed = service_->options().seed;
  Result<EvaluateCall> call = ParseEvaluateCall(*body, defaults);
  if (!call.ok()) return Error(res, 400, "invalid_request", call.status().message());
  Status served = BackendServed(call->request.backend);
  if (!served.ok()) return Error(res, 400, "invalid_request", served.message());
  EvalResult result;
  CallOutcome o = service_->Evaluate(call->request, WaitFor(req, call->timeout_s), &result);
  if (Unfinished(o, 1, res)) return;
  Ok(res, result.ToJson());
}

void RewardServer::Reward(const httplib::Request& req, httplib::Response& res) {
  Result<json> body = ParseJsonObject(req.body);
  if (!body.ok()) return Error(res, 400, "invalid_request", body.status().message());
  Result<RewardCall> call = ParseRewardCall(*body);
  if (!call.ok()) return Error(res, 400, "invalid_request", call.status().message());
  for (size_t i = 0; i < call->items.size(); ++i) {
    const std::string& b = call->items[i].truth.backend;
    Status served = BackendServed(b.empty() ? service_->options().default_backend : b);
    if (!served.ok()) {
      return Error(res, 400, "invalid_request", fmt::format("items[{}]: {}", i, served.message()));
    }
  }
  std::vector<RewardItemResult> results;
  CallOutcome o = service_->Score(call->items, WaitFor(req, call->timeout_s), &results);
  if (Unfinished(o, call->items.size(), res)) return;
  json rewards = json::array(), details = json::array();
  for (const RewardItemResult& r : results) {
    metrics_->RecordReward(OutcomeOf(r), r.reward);
    rewards.push_back(r.reward);
    details.push_back(r.ToJson(call->include_eval));
  }
  Ok(res, {{"rewards", rewards}, {"results", details}});
}

void RewardServer::OpenRlhf(const httplib::Request& req, httplib::Response& res) {
  Result<json> body = ParseJsonObject(req.body);
  if (!body.ok()) return Error(res, 400, "invalid_request", body.status().message());
  Result<RewardCall> call = ParseOpenRlhfCall(*body);
  if (!call.ok()) return Error(res, 400, "invalid_request", call.status().message());
  std::vector<RewardItemResult> results;
  CallOutcome o = service_->Score(call->items, WaitFor(req, call->timeout_s), &results);
  if (Unfinished(o, call->items.size(), res)) return;
  // OpenRLHF turns each list into a tensor: numbers only, one per query.
  json rewards = json::array(), correct = json::array(), parsed = json::array(),
       vs_parent = json::array(), speedup = json::array();
  for (const RewardItemResult& r : results) {
    metrics_->RecordReward(OutcomeOf(r), r.reward);
    rewards.push_back(r.reward);
    correct.push_back(r.status == "ok" ? 1.0 : 0.0);
    parsed.push_back(r.status == "parse_error" ? 0.0 : 1.0);
    vs_parent.push_back(r.speedup_vs_parent.value_or(0.0));
    speedup.push_back(r.status == "ok" ? r.speedup.value_or(0.0) : 0.0);
  }
  Ok(res, {{"rewards", rewards},
           {"scores", rewards},
           {"extra_logs",
            {{"correct", correct},
             {"parsed", parsed},
             {"speedup_vs_parent", vs_parent},
             {"speedup", speedup}}}});
}

void RewardServer::Health(httplib::Response& res) const {
  AdmissionStats s = queue_->stats();
  json body = {{"status", stopping_ ? "stopping" : "ok"},
               {"backend", service_->options().default_backend},
               {"slots", options_.slots},
               {"queue_depth", s.queued},
               {"in_flight", s.in_flight},
               {"max_queue", queue_->options().max_queue},
               {"reward_shape", RewardShapeName(service_->options().reward.shape)},
               {"device", options_.hello.value("device", json::object())},
               {"backends", options_.hello.value("backends", json::array())}};
  res.status = stopping_ ? 503 : 200;
  res.set_content(body.dump() + "\n", "application/json");
}

}  // namespace ks
