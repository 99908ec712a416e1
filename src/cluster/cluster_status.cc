#include "cluster/cluster_status.h"

#include <fmt/format.h>

#include "cluster/queue_protocol.h"

namespace ks {

Result<ClusterStatus> ReadClusterStatus(RedisClient* c, double visibility_timeout_s) {
  ClusterStatus st;
  Result<RedisReply> workers = c->Command({"HGETALL", kWorkersKey});
  if (!workers.ok()) return workers.status();
  for (nlohmann::json& w : LiveWorkers(*workers, UnixNow())) {
    st.slots += w.value("slots", 0u);
    st.busy += w.value("busy", 0u);
    w.erase("hello");
    st.workers.push_back(std::move(w));
  }
  std::vector<std::string> streams;
  std::string cursor = "0";
  do {
    Result<RedisReply> r = c->Command({"SCAN", cursor, "MATCH", "ks:requests*", "COUNT", "100"});
    if (!r.ok()) return r.status();
    if (r->is_error() || r->elements.size() < 2) return Status::IOError("SCAN: " + r->str);
    cursor = r->elements[0].str;
    for (const RedisReply& k : r->elements[1].elements) streams.push_back(k.str);
  } while (cursor != "0");
  const std::string idle_ms = std::to_string(static_cast<long long>(visibility_timeout_s * 1000));
  for (const std::string& s : streams) {
    Result<RedisReply> len = c->Command({"XLEN", s});
    Result<RedisReply> pending = c->Command({"XPENDING", s, kGroup});
    if (!len.ok()) return len.status();
    if (!pending.ok()) return pending.status();
    size_t in_flight = pending->elements.empty() ? 0 : pending->elements[0].integer;
    st.in_flight += in_flight;
    st.queue_depth += static_cast<size_t>(len->integer) - std::min<size_t>(in_flight, len->integer);
    Result<RedisReply> stalled =
        c->Command({"XPENDING", s, kGroup, "IDLE", idle_ms, "-", "+", "10000"});
    if (stalled.ok() && !stalled->is_error()) st.stalled += stalled->elements.size();
  }
  long long now_ms = static_cast<long long>(UnixNow() * 1000);
  Result<RedisReply> done =
      c->Command({"ZCOUNT", kCompletionsKey, std::to_string(now_ms - 60000), "+inf"});
  if (!done.ok()) return done.status();
  st.evals_per_s = static_cast<double>(done->integer) / 60.0;
  return st;
}

nlohmann::json ClusterStatus::ToJson() const {
  return {{"workers", workers},           {"slots", slots},         {"busy", busy},
          {"queue_depth", queue_depth},   {"in_flight", in_flight}, {"stalled", stalled},
          {"evals_per_s_1m", evals_per_s}};
}

std::string ClusterStatus::ToText() const {
  std::string out = fmt::format(
      "workers {}  slots {} ({} busy)  queue {}  in flight {}  stalled {}  "
      "evaluations/s (1 min) {:.2f}\n",
      workers.size(), slots, busy, queue_depth, in_flight, stalled, evals_per_s);
  for (const nlohmann::json& w : workers) {
    nlohmann::json d = w.value("device", nlohmann::json::object());
    out += fmt::format(
        "  {}  {}  slots {} busy {}  evaluated {}  backend {}  cc {}  driver {}  "
        "torch {}  triton {}\n",
        w.value("name", "?"), w.value("device_kind", "?"), w.value("slots", 0), w.value("busy", 0),
        w.value("evaluated", 0), w.value("backend", "?"), d.contains("cc") ? d["cc"].dump() : "-",
        d.contains("driver") ? d["driver"].dump() : "-",
        d.contains("torch") ? d["torch"].dump() : "-",
        d.contains("triton") ? d["triton"].dump() : "-");
  }
  return out;
}

}  // namespace ks
