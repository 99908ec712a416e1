#include "archive/sampling.h"

#include <set>
#include <string>
#include <utility>

namespace ks {
namespace {

bool SameAs(const Program* a, const Program* parent) {
  return parent != nullptr && (a->id == parent->id || a->code == parent->code);
}

// Fisher–Yates with UniformIndex, for a platform-independent order.
template <typename T>
void Shuffle(std::vector<T>& v, std::mt19937_64& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[UniformIndex(rng, i)]);
}

}  // namespace

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t ForkSeed(uint64_t master, uint64_t stream) {
  uint64_t state = master;
  uint64_t base = SplitMix64(state);
  state = base ^ (stream * 0xD1B54A32D192ED03ULL);
  return SplitMix64(state);
}

double UniformReal(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

size_t UniformIndex(std::mt19937_64& rng, size_t n) {
  const uint64_t range = static_cast<uint64_t>(n);
  // Reject the top partial block so every residue is equally likely.
  const uint64_t limit = UINT64_MAX - (UINT64_MAX % range + 1) % range;
  uint64_t x;
  do {
    x = rng();
  } while (x > limit);
  return static_cast<size_t>(x % range);
}

const char* SampleModeName(SampleMode mode) {
  switch (mode) {
    case SampleMode::kExploitation:
      return "exploitation";
    case SampleMode::kExploration:
      return "exploration";
    case SampleMode::kRandom:
      return "random";
  }
  return "random";
}

ParentChoice SampleParentFrom(const Island& island, const SamplingRatios& ratios,
                              std::mt19937_64& rng) {
  ParentChoice choice;
  if (island.size() == 0) return choice;
  const double total = ratios.exploitation + ratios.exploration + ratios.random;
  const double u = UniformReal(rng) * total;
  if (u < ratios.exploitation) {
    choice.mode = SampleMode::kExploitation;
    const size_t k = island.Elites().size();
    // Weights k, k-1, ..., 1 for ranks 0..k-1: draw x in [0, k(k+1)/2) and walk down.
    uint64_t x = UniformIndex(rng, k * (k + 1) / 2);
    size_t r = 0;
    while (x >= k - r) {
      x -= k - r;
      ++r;
    }
    choice.program = island.AtRank(r);
  } else if (u < ratios.exploitation + ratios.exploration) {
    choice.mode = SampleMode::kExploration;
    auto it = island.grid().begin();
    std::advance(it, static_cast<std::ptrdiff_t>(UniformIndex(rng, island.grid().size())));
    choice.program = island.Get(it->second);
  } else {
    choice.mode = SampleMode::kRandom;
    choice.program = island.AtRank(UniformIndex(rng, island.size()));
  }
  return choice;
}

std::vector<const Program*> SampleInspirationsFrom(const Island& island, const Program* parent,
                                                   size_t n, std::mt19937_64& rng) {
  std::vector<const Program*> out;
  std::set<std::string> chosen;
  std::set<Cell> cells_taken;
  if (parent != nullptr) {
    if (const Cell* c = island.CellOf(parent->id)) cells_taken.insert(*c);
  }
  auto take = [&](const Program* p) {
    out.push_back(p);
    chosen.insert(p->id);
    if (const Cell* c = island.CellOf(p->id)) cells_taken.insert(*c);
  };

  // 1. The best ceil(n/2).
  const size_t n_top = (n + 1) / 2;
  for (size_t r = 0; out.size() < n_top; ++r) {
    const Program* p = island.AtRank(r);
    if (p == nullptr) break;
    if (!SameAs(p, parent)) take(p);
  }

  // 2. Holders of cells nobody chosen (nor the parent) occupies, in random order.
  std::vector<const Program*> diverse;
  for (const auto& [cell, id] : island.grid()) {
    const Program* p = island.Get(id);
    if (cells_taken.count(cell) == 0 && chosen.count(id) == 0 && !SameAs(p, parent)) {
      diverse.push_back(p);
    }
  }
  Shuffle(diverse, rng);
  for (const Program* p : diverse) {
    if (out.size() >= n) break;
    take(p);
  }

  // 3. Anything else, at random.
  if (out.size() < n) {
    std::vector<const Program*> rest;
    for (const Program* p : island.Top(island.size())) {
      if (chosen.count(p->id) == 0 && !SameAs(p, parent)) rest.push_back(p);
    }
    Shuffle(rest, rng);
    for (const Program* p : rest) {
      if (out.size() >= n) break;
      take(p);
    }
  }
  return out;
}

}  // namespace ks
