// The consumer side of the cluster queue: `kernelsmith worker` runs RunQueueWorker with its
// local WorkerPool as `local` (sandbox, GPU timing lease, worker replacement as on one host).
//
// Each consumer (one per slot) takes one request at a time from the request streams (any
// device, and this worker's device kind), evaluates it through `local`, stores the result
// with SET NX (the first stored result is the one result), notifies the producer and only
// then acknowledges (XACK) and deletes the entry. Entries held by a consumer are touched
// while they run; entries of a dead worker fall idle and are claimed after
// `visibility_timeout_s`. An entry delivered more than `max_deliveries` times gets a `crash`
// result instead of another evaluation.
//
// Thread-safety: RunQueueWorker blocks its caller; `local` must be thread-safe.
#pragma once

#include <atomic>
#include <nlohmann/json.hpp>
#include <string>

#include "cluster/redis_client.h"
#include "core/status.h"
#include "eval/runner.h"

namespace ks {

struct QueueWorkerOptions {
  RedisOptions redis;
  // Unique name of this worker (host name and pid by default), recorded in each result.
  std::string name;
  // Consumers, i.e. requests evaluated at once (the local pool's slot count). >= 1.
  size_t consumers = 1;
  // The local worker's hello (docs/protocol.md): advertised with its `device`.
  nlohmann::json hello = nlohmann::json::object();
  std::string backend;  // advertised
  // An entry idle this long (its worker stopped touching it) is claimed by another worker.
  double visibility_timeout_s = 60;
  // Deliveries after which an entry gets a `crash` result instead of another evaluation.
  int max_deliveries = 3;
  // Seconds between advertisements (heartbeats).
  double heartbeat_s = 2;
  // Set to stop: consumers finish the evaluation they hold, take no more, and return.
  const std::atomic<bool>* stop = nullptr;
};

// The device kind this worker serves (DeviceSlug of hello.device.name).
std::string WorkerDeviceKind(const nlohmann::json& hello);

// Serves requests until `*options.stop`. IOError when Redis cannot be reached at the start;
// later connection losses are retried until it is back.
Status RunQueueWorker(const QueueWorkerOptions& options, Runner* local);

}  // namespace ks
