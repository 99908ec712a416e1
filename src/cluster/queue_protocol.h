// The evaluation queue's layout in Redis (docs/cluster.md), shared by producers (QueueRunner),
// workers (RunQueueWorker) and `kernelsmith cluster status`.
//
//   ks:requests[:KIND]  stream of requests, consumer group "ks-workers"; KIND: a device slug
//                       for runs that require one device kind, absent for any device
//   ks:result:ID        the one stored EvalResult (JSON) of request ID, written SET NX
//   ks:reply:PRODUCER   list of IDs whose result is stored, one list per producer
//   ks:workers          hash: worker name -> advertisement JSON (device, slots, last_seen)
//   ks:completions      sorted set: completion time (ms) -> ID@worker, last minute only
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cluster/redis_client.h"
#include "core/status.h"
#include "eval/runner.h"

namespace ks {

inline constexpr const char* kGroup = "ks-workers";
inline constexpr const char* kWorkersKey = "ks:workers";
inline constexpr const char* kCompletionsKey = "ks:completions";
inline constexpr int kResultTtlS = 24 * 3600;
// A worker whose advertisement is older than this is not live.
inline constexpr double kWorkerLiveS = 15;

// The stream for `device` (a slug; empty: any device).
std::string StreamKey(const std::string& device);
std::string ResultKey(const std::string& id);
std::string ReplyKey(const std::string& producer);

// "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3": the device kind a run may require.
std::string DeviceSlug(const std::string& device_name);

// The request's id: SHA-256 of the candidate's path (the program's identity), the request as
// serialized (code, problem, baseline, settings) and the required device kind. The same
// request submitted twice (a retry, a resumed run) has the same id and so one result.
std::string RequestId(const EvalRequest& request, const std::string& device);

// One stream entry as a worker reads it.
struct QueueEntry {
  std::string stream;
  std::string entry_id;  // the stream's id ("1700000000000-0")
  std::string id;        // the request id
  std::string reply;     // the producer's reply list
  std::string request;   // the request JSON (EvalRequestToJson)
};

// Field/value pairs of an entry (XADD arguments after the id).
std::vector<std::string> EntryFields(const std::string& id, const std::string& reply,
                                     const std::string& request_json);
// Entries of an XREADGROUP reply (array of [stream, [[entry_id, [field, value, ...]], ...]]).
// Entries lacking a field come back with it empty; the caller acknowledges them as invalid.
std::vector<QueueEntry> ParseReadReply(const RedisReply& reply);
// Entries of an XAUTOCLAIM reply on `stream` ([next, [[entry_id, fields], ...], deleted]).
std::vector<QueueEntry> ParseClaimReply(const std::string& stream, const RedisReply& reply);

// Live workers' advertisements from HGETALL ks:workers, `now_s` in Unix seconds.
std::vector<nlohmann::json> LiveWorkers(const RedisReply& hgetall, double now_s);
double UnixNow();

}  // namespace ks
