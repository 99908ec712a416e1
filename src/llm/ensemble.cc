#include "llm/ensemble.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ks {

DeadEndpointGuard::DeadEndpointGuard(std::shared_ptr<LlmClient> inner, int max_consecutive_failures)
    : inner_(std::move(inner)), max_failures_(std::max(1, max_consecutive_failures)) {}

Status DeadEndpointGuard::dead_status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dead_status_;
}

Result<ChatResponse> DeadEndpointGuard::Complete(const ChatRequest& request) {
  if (dead_.load()) return dead_status();
  Result<ChatResponse> r = inner_->Complete(request);
  std::lock_guard<std::mutex> lock(mu_);
  if (r.ok()) {
    consecutive_failures_ = 0;
    return r;
  }
  if (++consecutive_failures_ >= max_failures_ && !dead_.load()) {
    dead_status_ = Status::IOError(
        fmt::format("LLM endpoint {} unreachable after {} attempts: {}; check --llm-url",
                    inner_->Endpoint(), consecutive_failures_, r.status().message()));
    dead_.store(true);
  }
  return r;
}

Result<std::unique_ptr<LlmEnsemble>> LlmEnsemble::Create(std::vector<EnsembleMember> members,
                                                         LlmEnsembleOptions options) {
  if (members.empty()) return Status::InvalidArgument("LLM ensemble needs at least one model");
  std::vector<DeadEndpointGuard*> guards;
  for (size_t i = 0; i < members.size(); ++i) {
    EnsembleMember& m = members[i];
    if (m.client == nullptr) {
      return Status::InvalidArgument(fmt::format("LLM ensemble member {} has no client", i));
    }
    if (!(m.weight > 0) || !std::isfinite(m.weight)) {
      return Status::InvalidArgument(
          fmt::format("LLM ensemble member {} ({}) has weight {}; weights must be > 0", i,
                      m.client->Endpoint(), m.weight));
    }
    DeadEndpointGuard* guard = nullptr;
    if (options.max_consecutive_failures > 0) {
      auto g = std::make_shared<DeadEndpointGuard>(m.client, options.max_consecutive_failures);
      guard = g.get();
      m.client = std::move(g);
    }
    guards.push_back(guard);
  }
  return std::unique_ptr<LlmEnsemble>(
      new LlmEnsemble(std::move(members), std::move(guards), options.seed));
}

LlmEnsemble::LlmEnsemble(std::vector<EnsembleMember> members,
                         std::vector<DeadEndpointGuard*> guards, uint64_t seed)
    : members_(std::move(members)), guards_(std::move(guards)), rng_(seed) {}

int LlmEnsemble::PickMember() {
  std::vector<double> live(members_.size(), 0.0);
  double total = 0;
  for (size_t i = 0; i < members_.size(); ++i) {
    if (guards_[i] != nullptr && guards_[i]->dead()) continue;
    live[i] = members_[i].weight;
    total += live[i];
  }
  if (total <= 0) return -1;
  double u;
  {
    std::lock_guard<std::mutex> lock(mu_);
    u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;  // [0, 1), same on every platform
  }
  double x = u * total;
  int last_live = -1;
  for (size_t i = 0; i < live.size(); ++i) {
    if (live[i] <= 0) continue;
    last_live = static_cast<int>(i);
    if (x < live[i]) return last_live;
    x -= live[i];
  }
  return last_live;  // rounding at the top end
}

Result<ChatResponse> LlmEnsemble::Complete(const ChatRequest& request) {
  int i = PickMember();
  if (i >= 0) return members_[static_cast<size_t>(i)].client->Complete(request);
  return GaveUp();
}

Status LlmEnsemble::GaveUp() const {
  std::string why;
  for (const DeadEndpointGuard* g : guards_) {
    if (g == nullptr || !g->dead()) return Status::Ok();
    why += (why.empty() ? "" : "; ") + g->dead_status().message();
  }
  return Status::IOError(fmt::format("all {} LLM endpoints are dead: {}", members_.size(), why));
}

std::string LlmEnsemble::Endpoint() const {
  std::string out;
  for (const EnsembleMember& m : members_) {
    out += (out.empty() ? "" : ", ") + m.client->Endpoint();
  }
  return out;
}

}  // namespace ks
