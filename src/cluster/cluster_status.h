// The cluster's figures for `kernelsmith cluster status` and serve's /metrics: live workers
// with their devices and slots, queue depth, in flight, evaluations/s over the last minute
// and stalled entries (held longer than the visibility timeout without a touch).
// Thread-safety: ReadClusterStatus uses the caller's client.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cluster/redis_client.h"
#include "core/status.h"

namespace ks {

struct ClusterStatus {
  nlohmann::json workers = nlohmann::json::array();  // live workers' advertisements
  size_t slots = 0;
  size_t busy = 0;         // slots evaluating now (as the workers last advertised)
  size_t queue_depth = 0;  // requests no worker has taken yet
  size_t in_flight = 0;    // requests taken and not acknowledged
  size_t stalled = 0;      // in flight and idle longer than the visibility timeout
  double evals_per_s = 0;  // results stored over the last minute / 60

  nlohmann::json ToJson() const;
  // For a person (serve's /metrics builds its ks_cluster_* gauges from the fields).
  std::string ToText() const;
};

Result<ClusterStatus> ReadClusterStatus(RedisClient* client, double visibility_timeout_s = 60);

}  // namespace ks
