#include "eval/protocol.h"

#include <cstdint>
#include <cstring>

namespace ks {
namespace {

using json = nlohmann::json;

std::string ToLine(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

// Returns the string field `key` of `j`, or a Protocol error naming it.
Result<std::string> StringField(const json& j, const char* key, const std::string& type) {
  auto it = j.find(key);
  if (it == j.end()) {
    return Status::Protocol("'" + type + "' message lacks the field '" + key + "'");
  }
  if (!it->is_string()) {
    return Status::Protocol("'" + type + "' message field '" + key + "' is not a string");
  }
  return it->get<std::string>();
}

bool IsKnownStage(const std::string& s) {
  return s == "load" || s == "correctness" || s == "audit" || s == "timing";
}

Result<WorkerMessage> Decode(const json& j) {
  if (!j.is_object()) return Status::Protocol("message is not a JSON object");
  Result<std::string> type = StringField(j, "type", "?");
  if (!type.ok()) return Status::Protocol("message lacks a string field 'type'");
  WorkerMessage m;
  if (*type == "hello") {
    m.type = WorkerMessage::Type::kHello;
    auto it = j.find("protocol");
    if (it == j.end() || !it->is_number_integer()) {
      return Status::Protocol("'hello' message lacks an integer field 'protocol'");
    }
    int64_t protocol = it->get<int64_t>();
    if (protocol < 0 || protocol > 1000000) {
      return Status::Protocol("'hello' field 'protocol' is out of range: " + it->dump());
    }
    m.protocol = static_cast<int>(protocol);
    m.body = j;
    return m;
  }
  Result<std::string> id = StringField(j, "id", *type);
  if (*type != "stage" && *type != "lease" && *type != "result") {
    return Status::Protocol("unknown message type '" + *type + "'");
  }
  if (!id.ok()) return id.status();
  m.id = *id;
  if (*type == "stage") {
    m.type = WorkerMessage::Type::kStage;
    Result<std::string> stage = StringField(j, "stage", *type);
    if (!stage.ok()) return stage.status();
    if (!IsKnownStage(*stage)) return Status::Protocol("unknown stage '" + *stage + "'");
    m.stage = *stage;
  } else if (*type == "lease") {
    m.type = WorkerMessage::Type::kLease;
    Result<std::string> op = StringField(j, "op", *type);
    if (!op.ok()) return op.status();
    if (*op != "acquire" && *op != "release") {
      return Status::Protocol("unknown lease op '" + *op + "'");
    }
    m.lease_acquire = *op == "acquire";
  } else {
    m.type = WorkerMessage::Type::kResult;
    auto it = j.find("result");
    if (it == j.end() || !it->is_object()) {
      return Status::Protocol("'result' message lacks an object field 'result'");
    }
    m.result = *it;
    auto poisoned = j.find("worker_poisoned");
    if (poisoned != j.end() && !poisoned->is_null()) {
      if (!poisoned->is_boolean()) {
        return Status::Protocol("'result' message field 'worker_poisoned' is not a boolean");
      }
      m.worker_poisoned = poisoned->get<bool>();
    }
  }
  return m;
}

}  // namespace

Status LineSplitter::Append(std::string_view bytes) {
  if (line_start_ > 0 && line_start_ * 2 >= buffer_.size()) {
    buffer_.erase(0, line_start_);
    scanned_ -= line_start_;
    tail_start_ -= line_start_;
    line_start_ = 0;
  }
  buffer_.append(bytes);
  auto TooLong = [this] {
    return Status::Protocol("a protocol line is longer than " + std::to_string(max_line_bytes_) +
                            " bytes");
  };
  const char* base = buffer_.data();
  while (scanned_ < buffer_.size()) {
    const void* nl = memchr(base + scanned_, '\n', buffer_.size() - scanned_);
    if (nl == nullptr) {
      scanned_ = buffer_.size();
      break;
    }
    size_t end = static_cast<size_t>(static_cast<const char*>(nl) - base);
    if (end - tail_start_ > max_line_bytes_) return TooLong();
    tail_start_ = scanned_ = end + 1;
  }
  if (scanned_ - tail_start_ > max_line_bytes_) return TooLong();
  return Status::Ok();
}

bool LineSplitter::Next(std::string* line) {
  if (line_start_ >= tail_start_) return false;
  const char* base = buffer_.data();
  const void* nl = memchr(base + line_start_, '\n', tail_start_ - line_start_);
  size_t end = static_cast<size_t>(static_cast<const char*>(nl) - base);
  size_t len = end - line_start_;
  if (len > 0 && buffer_[end - 1] == '\r') --len;
  line->assign(buffer_, line_start_, len);
  line_start_ = end + 1;
  return true;
}

json EvalRequestToJson(const EvalRequest& request) {
  json j = {
      {"backend", request.backend},
      {"trials", request.trials},
      {"tolerance", request.tolerance},
      {"seed", request.seed},
      {"timing", request.timing},
      {"problem", {{"path", request.problem_path}, {"source", request.problem_source}}},
      {"candidate", {{"path", request.candidate_path}, {"source", request.candidate_source}}},
  };
  if (!request.baseline_source.empty()) {
    j["baseline"] = {{"path", request.baseline_path.empty() ? "baseline.py" : request.baseline_path},
                     {"source", request.baseline_source}};
  }
  if (request.independent_timing) j["independent_timing"] = true;
  return j;
}

Result<EvalRequest> EvalRequestFromJson(const json& j) {
  if (!j.is_object()) return Status::Protocol("request is not a JSON object");
  try {
    EvalRequest r;
    r.backend = j.at("backend").get<std::string>();
    r.trials = j.at("trials").get<int>();
    r.tolerance = j.at("tolerance").get<std::string>();
    r.seed = j.at("seed").get<uint64_t>();
    r.timing = j.at("timing").get<bool>();
    r.problem_path = j.at("problem").at("path").get<std::string>();
    r.problem_source = j.at("problem").at("source").get<std::string>();
    r.candidate_path = j.at("candidate").at("path").get<std::string>();
    r.candidate_source = j.at("candidate").at("source").get<std::string>();
    if (auto b = j.find("baseline"); b != j.end()) {
      r.baseline_path = b->at("path").get<std::string>();
      r.baseline_source = b->at("source").get<std::string>();
    }
    r.independent_timing = j.value("independent_timing", false);
    return r;
  } catch (const json::exception& e) {
    return Status::Protocol(std::string("malformed evaluation request: ") + e.what());
  }
}

std::string EncodeEvalRequest(const EvalRequest& request, const std::string& id) {
  json j = EvalRequestToJson(request);
  j["type"] = "eval";
  j["id"] = id;
  return ToLine(j);
}

std::string EncodeLeaseGranted(const std::string& id) {
  return ToLine({{"type", "lease_granted"}, {"id", id}});
}

std::string EncodeShutdown() { return ToLine({{"type", "shutdown"}}); }

Result<WorkerMessage> DecodeWorkerMessage(std::string_view line) {
  json j = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::Protocol("not valid JSON");
  try {
    return Decode(j);
  } catch (const json::exception& e) {  // e.g. a protocol number out of int range
    return Status::Protocol(std::string("malformed message: ") + e.what());
  }
}

}  // namespace ks
