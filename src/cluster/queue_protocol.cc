#include "cluster/queue_protocol.h"

#include <cctype>
#include <chrono>

#include "core/sha256.h"
#include "eval/protocol.h"

namespace ks {
namespace {

QueueEntry EntryOf(const std::string& stream, const RedisReply& e) {
  QueueEntry q;
  q.stream = stream;
  if (e.type != RedisReply::Type::kArray || e.elements.size() < 2) return q;
  q.entry_id = e.elements[0].str;
  const std::vector<RedisReply>& f = e.elements[1].elements;
  for (size_t i = 0; i + 1 < f.size(); i += 2) {
    if (f[i].str == "id") q.id = f[i + 1].str;
    if (f[i].str == "reply") q.reply = f[i + 1].str;
    if (f[i].str == "req") q.request = f[i + 1].str;
  }
  return q;
}

}  // namespace

std::string StreamKey(const std::string& device) {
  return device.empty() ? "ks:requests" : "ks:requests:" + device;
}
std::string ResultKey(const std::string& id) { return "ks:result:" + id; }
std::string ReplyKey(const std::string& producer) { return "ks:reply:" + producer; }

std::string DeviceSlug(const std::string& device_name) {
  std::string out;
  for (char c : device_name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "unknown" : out;
}

std::string RequestId(const EvalRequest& request, const std::string& device) {
  return Sha256Hex(request.candidate_path + "\n" + device + "\n" +
                   EvalRequestToJson(request).dump(-1, ' ', false,
                                                   nlohmann::json::error_handler_t::replace))
      .substr(0, 32);
}

std::vector<std::string> EntryFields(const std::string& id, const std::string& reply,
                                     const std::string& request_json) {
  return {"id", id, "reply", reply, "req", request_json};
}

std::vector<QueueEntry> ParseReadReply(const RedisReply& reply) {
  std::vector<QueueEntry> out;
  for (const RedisReply& s : reply.elements) {
    if (s.elements.size() < 2) continue;
    for (const RedisReply& e : s.elements[1].elements) out.push_back(EntryOf(s.elements[0].str, e));
  }
  return out;
}

std::vector<QueueEntry> ParseClaimReply(const std::string& stream, const RedisReply& reply) {
  std::vector<QueueEntry> out;
  if (reply.elements.size() < 2) return out;
  for (const RedisReply& e : reply.elements[1].elements) {
    if (e.is_nil()) continue;  // deleted meanwhile (Redis 6.2)
    out.push_back(EntryOf(stream, e));
  }
  return out;
}

std::vector<nlohmann::json> LiveWorkers(const RedisReply& hgetall, double now_s) {
  std::vector<nlohmann::json> out;
  for (size_t i = 0; i + 1 < hgetall.elements.size(); i += 2) {
    nlohmann::json w = nlohmann::json::parse(hgetall.elements[i + 1].str, nullptr, false);
    if (!w.is_object()) continue;
    if (now_s - w.value("last_seen", 0.0) > kWorkerLiveS) continue;
    out.push_back(std::move(w));
  }
  return out;
}

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace ks
