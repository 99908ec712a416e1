// Archive: the population of a search — islands that evolve apart, each with a
// MAP-Elites grid over configurable features, an elite archive and a bounded population;
// ring migration between islands; parent and inspiration sampling that is deterministic for
// a given seed; snapshots from which a resumed run rebuilds the very same archive.
//
//   auto archive = Archive::Create(options);            // Result<std::unique_ptr<Archive>>
//   (*archive)->Add(seed);                              // seed.island = kAnyIsland
//   ParentChoice parent = (*archive)->SampleParent(i);
//   auto inspirations = (*archive)->SampleInspirations(i, parent.program, 4);
//   ... propose, evaluate, Add(child) with child.island = i ...
//   (*archive)->EndGeneration(i);                       // may migrate i → i+1
//
// Fitness is the caller's; the archive ranks by it (ties: earlier first) and
// bins by feature values (features.h). Island rules: island.h. Sampling rules: sampling.h.
//
// Thread-safety: NOT synchronized — external synchronization required. The engine owns one
// Archive and calls it from one thread (or under its own lock). Sampling mutates the
// per-island generators, so even SampleParent is a write. Pointers returned by any method
// stay valid until the next non-const call.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "archive/features.h"
#include "archive/island.h"
#include "archive/program.h"
#include "archive/sampling.h"
#include "core/status.h"

namespace ks {

inline constexpr int kArchiveSnapshotVersion = 1;

struct ArchiveOptions {
  // Number of islands, ≥ 1. Islands evolve apart and meet only through migration.
  int num_islands = 4;
  // An island sends migrants each time its generation counter (EndGeneration) reaches a
  // multiple of this; 0 disables migration.
  int migration_interval = 10;
  // How many programs an island sends per migration: its best `migration_count` programs
  // among those created on it (received migrants are not forwarded); one whose code the
  // next island already holds is not sent (and not replaced by a lesser one). ≥ 0.
  int migration_count = 2;
  // Size of each island's elite archive (its top programs by fitness; never evicted), ≥ 1.
  int elite_size = 20;
  // Most programs an island holds, ≥ elite_size; beyond it the worst non-elite is evicted.
  int population_per_island = 200;
  // Parent sampling mix, relative weights (each ≥ 0, sum > 0): elites weighted by rank /
  // holders of diverse grid cells / any program.
  double exploitation_ratio = 0.7;
  double exploration_ratio = 0.2;
  double random_ratio = 0.1;
  // MAP-Elites grid dimensions (default: complexity × score, 10 bins each, adaptive ranges).
  std::vector<FeatureDimension> features = DefaultFeatures();
  // Master seed; island i draws from its own mt19937_64 seeded with ForkSeed(seed, i).
  uint64_t seed = 42;

  // OK, or InvalidArgument naming the first bad field and what it must be.
  Status Validate() const;
  nlohmann::json ToJson() const;
  // Missing keys keep their defaults; wrong types are InvalidArgument. Does not validate.
  static Result<ArchiveOptions> FromJson(const nlohmann::json& j);
};

// What Add did with a program.
struct AddOutcome {
  int island = 0;                    // the island it went to (kAnyIsland resolved)
  bool stored = false;               // false: duplicate code on that island, or evicted at once
  std::string duplicate_of;          // when rejected as duplicate: the id holding the same code
  bool cell_elite = false;           // it holds its MAP-Elites cell
  bool island_best = false;          // strictly fitter than every other program on its island
  bool global_best = false;          // strictly fitter than every other program in the archive
  std::vector<std::string> evicted;  // ids removed to keep the population bound
};

class Archive {
 public:
  // InvalidArgument when the options do not validate.
  static Result<std::unique_ptr<Archive>> Create(ArchiveOptions options);
  // Rebuilds the archive a Snapshot() describes: same programs, ranks, grid, feature ranges,
  // generation counters and generator states, so every later call behaves as it would have
  // on the original. InvalidArgument naming what is wrong with a malformed snapshot.
  static Result<std::unique_ptr<Archive>> Restore(const nlohmann::json& snapshot);

  // Adds a program to island `program.island` (kAnyIsland: round-robin over islands).
  // InvalidArgument for an empty or already used id, an island out of range or a
  // non-finite fitness. Code already present on that island is not added again (the
  // outcome says which program holds it).
  Result<AddOutcome> Add(Program program);

  // The fittest program of the archive (ties: the earliest added), nullptr when empty.
  const Program* Best() const;
  // The program with this id, nullptr when absent (never added, or evicted).
  const Program* Get(const std::string& id) const;
  // The best min(n, size) programs of an island, best first; empty for a bad island.
  std::vector<const Program*> Top(int island, size_t n) const;

  // A parent from `island` (sampling.h); program nullptr when it is empty or out of range.
  ParentChoice SampleParent(int island);
  // Up to n inspirations from `island`, excluding `parent` (may be nullptr), no duplicates.
  std::vector<const Program*> SampleInspirations(int island, const Program* parent, size_t n);

  // Ends a generation of `island`: advances its counter and, when the counter reaches a
  // multiple of migration_interval, sends its migrants to island (island + 1) % N as copies
  // with ids "<id>@i<target>". Returns the ids of the copies stored.
  std::vector<std::string> EndGeneration(int island);
  // Generations ended on `island` so far (0 for a bad island).
  int generation(int island) const;

  // Everything needed to Restore this archive, as JSON (stable across dump/parse).
  nlohmann::json Snapshot() const;

  const ArchiveOptions& options() const { return options_; }
  int num_islands() const { return static_cast<int>(islands_.size()); }
  // Programs across all islands.
  size_t size() const { return island_of_.size(); }
  // Read access to one island (grid, elites, members); requires 0 ≤ i < num_islands().
  const Island& island(int i) const { return islands_.at(static_cast<size_t>(i)); }
  const FeatureSpace& features() const { return features_; }

 private:
  explicit Archive(ArchiveOptions options);
  bool ValidIsland(int island) const { return island >= 0 && island < num_islands(); }
  // Stores a validated program with a fresh seq; observes its features first (re-binning
  // every island when a range widened).
  Island::InsertResult Store(Program program, bool migrant);
  std::vector<std::string> Migrate(int from);

  ArchiveOptions options_;
  FeatureSpace features_;
  std::vector<Island> islands_;
  std::vector<std::mt19937_64> rngs_;
  std::vector<int> generations_;
  std::unordered_map<std::string, int> island_of_;  // id → island, for every stored program
  uint64_t next_seq_ = 1;
  int next_seed_island_ = 0;
};

}  // namespace ks
