// Sampling: parents and inspirations drawn from one island, and the portable random
// primitives behind them.
//
// Every draw goes through UniformIndex/UniformReal below rather than <random>'s
// distributions (whose output differs between standard libraries), so a seed gives the same
// sequence on every platform.
// Thread-safety: pure functions of their arguments; the generator is the caller's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "archive/island.h"
#include "archive/program.h"

namespace ks {

// One step of SplitMix64: advances `state` and returns the next output.
uint64_t SplitMix64(uint64_t& state);
// An independent seed for stream `stream` (e.g. an island index) derived from `master`.
uint64_t ForkSeed(uint64_t master, uint64_t stream);
// Uniform in [0, 1) with 53 random bits.
double UniformReal(std::mt19937_64& rng);
// Uniform in [0, n), unbiased; requires n ≥ 1.
size_t UniformIndex(std::mt19937_64& rng, size_t n);

enum class SampleMode { kExploitation, kExploration, kRandom };
// "exploitation", "exploration", "random".
const char* SampleModeName(SampleMode mode);

struct SamplingRatios {
  double exploitation = 0.7;
  double exploration = 0.2;
  double random = 0.1;
};

struct ParentChoice {
  const Program* program = nullptr;  // nullptr when the island is empty
  SampleMode mode = SampleMode::kExploitation;
};

// Picks a mode with probabilities proportional to `ratios` (each ≥ 0, sum > 0), then:
//   exploitation — an elite, rank-weighted: the elite at rank r of k has weight k - r;
//   exploration  — the holder of an occupied grid cell, cells uniform (diversity);
//   random       — any program of the island, uniform.
ParentChoice SampleParentFrom(const Island& island, const SamplingRatios& ratios,
                              std::mt19937_64& rng);

// Up to n distinct programs of the island, none being `parent` (same id or same code; parent
// may be nullptr): first the best ceil(n/2) by rank, then holders of other cells — cells that
// neither the parent nor a program already chosen occupies — in random order, then, while
// short, other programs at random. Fewer than n only when the island has fewer others.
std::vector<const Program*> SampleInspirationsFrom(const Island& island, const Program* parent,
                                                   size_t n, std::mt19937_64& rng);

}  // namespace ks
