// Composing LlmClients: a dead-endpoint guard and a weighted ensemble of models.
//
// DeadEndpointGuard stops a run from spinning on an endpoint that is gone: after
// `max_consecutive_failures` failed calls in a row (each already retried by the client) every
// further call fails at once with IOError "LLM endpoint URL unreachable after N attempts:
// <last error>; check --llm-url", without touching the network. Any success resets the count.
// LlmEnsemble picks one member per call by weight (seeded, reproducible) and skips members
// whose guard has tripped.
// Thread-safety: both are safe to call from several threads at once, as LlmClient requires.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "core/status.h"
#include "llm/llm_client.h"

namespace ks {

class DeadEndpointGuard final : public LlmClient {
 public:
  // `max_consecutive_failures` >= 1 (default 5); smaller values are taken as 1.
  explicit DeadEndpointGuard(std::shared_ptr<LlmClient> inner, int max_consecutive_failures = 5);

  Result<ChatResponse> Complete(const ChatRequest& request) override;
  std::string Endpoint() const override { return inner_->Endpoint(); }
  Status GaveUp() const override { return dead() ? dead_status() : Status::Ok(); }

  bool dead() const { return dead_.load(); }
  // The error every call returns once dead; OK while alive.
  Status dead_status() const;

 private:
  const std::shared_ptr<LlmClient> inner_;
  const int max_failures_;
  std::atomic<bool> dead_{false};
  mutable std::mutex mu_;  // guards the fields below
  int consecutive_failures_ = 0;
  Status dead_status_;
};

struct EnsembleMember {
  std::shared_ptr<LlmClient> client;
  double weight = 1;  // > 0; a member is picked with probability weight / sum of live weights
};

struct LlmEnsembleOptions {
  uint64_t seed = 0;  // picks are a deterministic function of the seed and the call order
  // Each member is wrapped in a DeadEndpointGuard with this limit; 0 leaves members unguarded.
  int max_consecutive_failures = 5;
};

class LlmEnsemble final : public LlmClient {
 public:
  // InvalidArgument when `members` is empty, a client is null, or a weight is not > 0.
  static Result<std::unique_ptr<LlmEnsemble>> Create(std::vector<EnsembleMember> members,
                                                     LlmEnsembleOptions options = {});

  // Sends the request unchanged to one picked member (leave request.model empty to use each
  // member's own model). When every member is dead, IOError listing each endpoint's error.
  Result<ChatResponse> Complete(const ChatRequest& request) override;
  std::string Endpoint() const override;  // the members' endpoints, comma-separated
  Status GaveUp() const override;         // not OK once every member is dead

  // The member the next call would use (advances the RNG); -1 when every member is dead.
  int PickMember();
  size_t size() const { return members_.size(); }

 private:
  LlmEnsemble(std::vector<EnsembleMember> members, std::vector<DeadEndpointGuard*> guards,
              uint64_t seed);

  const std::vector<EnsembleMember> members_;     // clients as called (guarded when enabled)
  const std::vector<DeadEndpointGuard*> guards_;  // per member, null when unguarded
  std::mutex mu_;                                 // guards rng_
  std::mt19937_64 rng_;
};

}  // namespace ks
