#include "propose/tuner.h"

#include <algorithm>
#include <map>
#include <utility>

namespace ks {
namespace {

constexpr int kMaxAttempts = 32;

// A value in [0, n): rng() reduced, identical on every standard library.
size_t Draw(std::mt19937_64& rng, size_t n) { return static_cast<size_t>(rng() % n); }

struct Change {
  size_t param = 0;  // index into the params
  int64_t value = 0;
};

bool HasAlternative(const TunableParam& p) {
  return std::any_of(p.choices.begin(), p.choices.end(), [&](int64_t v) { return v != p.value; });
}

// Another value from the choices: a neighbour of the current value three times out of four,
// otherwise any other choice.
int64_t PickValue(const TunableParam& p, std::mt19937_64& rng) {
  const std::vector<int64_t>& c = p.choices;
  const size_t pos = static_cast<size_t>(std::lower_bound(c.begin(), c.end(), p.value) - c.begin());
  const bool present = pos < c.size() && c[pos] == p.value;
  if (present && Draw(rng, 4) != 0) {
    std::vector<size_t> near;
    if (pos > 0) near.push_back(pos - 1);
    if (pos + 1 < c.size()) near.push_back(pos + 1);
    return c[near[Draw(rng, near.size())]];
  }
  const size_t others = c.size() - (present ? 1 : 0);
  size_t idx = Draw(rng, others);
  if (present && idx >= pos) ++idx;
  return c[idx];
}

std::string Rewrite(std::string_view code, const std::vector<TunableParam>& params,
                    std::vector<Change> changes) {
  std::sort(changes.begin(), changes.end(), [&](const Change& x, const Change& y) {
    return params[x.param].offset > params[y.param].offset;
  });
  std::string out(code);
  for (const Change& c : changes) {
    const TunableParam& p = params[c.param];
    out.replace(p.offset, p.length, std::to_string(c.value));
  }
  return out;
}

std::string Describe(const std::vector<TunableParam>& params, std::vector<Change> changes) {
  std::sort(changes.begin(), changes.end(), [&](const Change& x, const Change& y) {
    return params[x.param].offset < params[y.param].offset;
  });
  std::string out;
  for (const Change& c : changes) {
    const TunableParam& p = params[c.param];
    if (!out.empty()) out += ", ";
    out += p.key + " " + std::to_string(p.value) + "\u2192" + std::to_string(c.value);
  }
  return out;
}

}  // namespace

Result<std::string> Mutate(std::string_view code, std::mt19937_64& rng, int max_changes,
                           std::string* description) {
  Result<std::vector<TunableParam>> scanned = ScanTunables(code);
  if (!scanned.ok()) return scanned.status();
  const std::vector<TunableParam>& params = *scanned;
  if (params.empty()) {
    return Status::InvalidArgument(
        "no tunable constants in the EVOLVE-BLOCK (add `# ks:tune NAME=[...]` comments)");
  }
  std::vector<size_t> candidates;
  for (size_t i = 0; i < params.size(); ++i) {
    if (HasAlternative(params[i])) candidates.push_back(i);
  }
  if (candidates.empty()) {
    return Status::InvalidArgument(
        "the tunable constants in the EVOLVE-BLOCK have no other values to try (widen their "
        "`# ks:tune` lists)");
  }
  const size_t limit = std::min(candidates.size(), static_cast<size_t>(std::max(1, max_changes)));
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    const size_t k = 1 + Draw(rng, limit);
    std::vector<size_t> order = candidates;
    std::vector<Change> changes;
    for (size_t i = 0; i < k; ++i) {
      std::swap(order[i], order[i + Draw(rng, order.size() - i)]);
      changes.push_back({order[i], PickValue(params[order[i]], rng)});
    }
    std::string child = Rewrite(code, params, changes);
    if (child == code) continue;
    if (description != nullptr) *description = Describe(params, changes);
    return child;
  }
  return Status::Internal("the tuner found no mutation that changes the program in " +
                          std::to_string(kMaxAttempts) + " attempts");
}

Result<std::string> Crossover(std::string_view a, std::string_view b, std::mt19937_64& rng,
                              std::string* description) {
  Result<std::vector<TunableParam>> pa = ScanTunables(a);
  if (!pa.ok()) return Status::InvalidArgument("parent A: " + pa.status().message());
  Result<std::vector<TunableParam>> pb = ScanTunables(b);
  if (!pb.ok()) return Status::InvalidArgument("parent B: " + pb.status().message());
  std::map<std::string, int64_t> b_values;
  for (const TunableParam& p : *pb) b_values.emplace(p.key, p.value);

  size_t shared = 0;
  std::vector<Change> differing;
  for (size_t i = 0; i < pa->size(); ++i) {
    auto it = b_values.find((*pa)[i].key);
    if (it == b_values.end()) continue;
    ++shared;
    if (it->second != (*pa)[i].value) differing.push_back({i, it->second});
  }
  if (shared == 0) return Status::InvalidArgument("the parents share no tunable constants");
  if (differing.empty()) {
    return Status::InvalidArgument("the parents agree on every tunable constant");
  }
  // Take a proper, non-empty subset of the differing constants from B (all of them when only
  // one differs), so that the child is a new program.
  std::vector<Change> from_b;
  if (differing.size() == 1) {
    from_b = differing;
  } else {
    for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
      from_b.clear();
      for (const Change& c : differing) {
        if (Draw(rng, 2) == 1) from_b.push_back(c);
      }
      if (!from_b.empty() && from_b.size() < differing.size()) break;
    }
    if (from_b.empty() || from_b.size() == differing.size()) {
      from_b = {differing[Draw(rng, differing.size())]};
    }
  }
  if (description != nullptr) *description = Describe(*pa, from_b);
  return Rewrite(a, *pa, from_b);
}

}  // namespace ks
