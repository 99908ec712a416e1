#include "archive/archive.h"

#include <cmath>
#include <utility>

namespace ks {
namespace {

Status Invalid(const std::string& field, const std::string& need, const std::string& got) {
  return Status::InvalidArgument("archive option '" + field + "' must be " + need + ", got " + got);
}

// a ranks before b (fitter, or as fit and added earlier).
bool Better(const Program& a, uint64_t seq_a, const Program& b, uint64_t seq_b) {
  if (a.fitness != b.fitness) return a.fitness > b.fitness;
  return seq_a < seq_b;
}

}  // namespace

Status ArchiveOptions::Validate() const {
  if (num_islands < 1) return Invalid("num_islands", "≥ 1", std::to_string(num_islands));
  if (migration_interval < 0) {
    return Invalid("migration_interval", "≥ 0 (0 disables migration)",
                   std::to_string(migration_interval));
  }
  if (migration_count < 0) {
    return Invalid("migration_count", "≥ 0", std::to_string(migration_count));
  }
  if (elite_size < 1) return Invalid("elite_size", "≥ 1", std::to_string(elite_size));
  if (population_per_island < elite_size) {
    return Invalid("population_per_island", "≥ elite_size (" + std::to_string(elite_size) + ")",
                   std::to_string(population_per_island));
  }
  const std::pair<const char*, double> ratios[] = {{"exploitation_ratio", exploitation_ratio},
                                                   {"exploration_ratio", exploration_ratio},
                                                   {"random_ratio", random_ratio}};
  for (const auto& [name, value] : ratios) {
    if (!std::isfinite(value) || value < 0) {
      return Invalid(name, "finite and ≥ 0", std::to_string(value));
    }
  }
  if (!(exploitation_ratio + exploration_ratio + random_ratio > 0)) {
    return Status::InvalidArgument(
        "archive options: exploitation_ratio + exploration_ratio + random_ratio must be > 0 "
        "(defaults 0.7, 0.2, 0.1)");
  }
  return ValidateFeatures(features);
}

Result<std::unique_ptr<Archive>> Archive::Create(ArchiveOptions options) {
  Status s = options.Validate();
  if (!s.ok()) return s;
  return std::unique_ptr<Archive>(new Archive(std::move(options)));
}

Archive::Archive(ArchiveOptions options)
    : options_(std::move(options)),
      features_(options_.features),
      generations_(static_cast<size_t>(options_.num_islands), 0) {
  for (int i = 0; i < options_.num_islands; ++i) {
    islands_.emplace_back(options_.elite_size, options_.population_per_island);
    rngs_.emplace_back(ForkSeed(options_.seed, static_cast<uint64_t>(i)));
  }
}

Result<AddOutcome> Archive::Add(Program program) {
  if (program.id.empty()) return Status::InvalidArgument("archive: a program needs an id");
  if (island_of_.count(program.id) != 0) {
    return Status::InvalidArgument("archive: program id '" + program.id +
                                   "' is already in the archive; ids must be unique");
  }
  if (!std::isfinite(program.fitness)) {
    return Status::InvalidArgument("archive: program '" + program.id +
                                   "' has a non-finite fitness; give failures fitness 0");
  }
  if (program.island == kAnyIsland) {
    program.island = next_seed_island_;
    next_seed_island_ = (next_seed_island_ + 1) % num_islands();
  } else if (!ValidIsland(program.island)) {
    return Status::InvalidArgument("archive: program '" + program.id + "' names island " +
                                   std::to_string(program.island) + "; islands are 0.." +
                                   std::to_string(num_islands() - 1) + " or kAnyIsland");
  }

  AddOutcome outcome;
  outcome.island = program.island;
  Island& home = islands_[static_cast<size_t>(program.island)];
  if (const Program* twin = home.FindByCode(program.code)) {
    outcome.duplicate_of = twin->id;
    return outcome;
  }
  const Program* best_before = Best();
  const Program* island_best_before = home.Best();
  const bool beats_global = best_before == nullptr || program.fitness > best_before->fitness;
  const bool beats_island =
      island_best_before == nullptr || program.fitness > island_best_before->fitness;
  const std::string id = program.id;

  Island::InsertResult inserted = Store(std::move(program), /*migrant=*/false);
  outcome.evicted = std::move(inserted.evicted);
  outcome.stored = home.Get(id) != nullptr;
  outcome.cell_elite = inserted.cell_elite;
  outcome.island_best = outcome.stored && beats_island;
  outcome.global_best = outcome.stored && beats_global;
  return outcome;
}

Island::InsertResult Archive::Store(Program program, bool migrant) {
  if (features_.Observe(program)) {
    for (Island& island : islands_) {
      island.Rebin([this](const Program& p) { return features_.CellOf(p); });
    }
  }
  const int where = program.island;
  const std::string id = program.id;
  Cell cell = features_.CellOf(program);
  Island::InsertResult result = islands_[static_cast<size_t>(where)].Insert(
      std::move(program), next_seq_++, std::move(cell), migrant);
  island_of_[id] = where;
  for (const std::string& gone : result.evicted) island_of_.erase(gone);
  return result;
}

const Program* Archive::Best() const {
  const Program* best = nullptr;
  uint64_t best_seq = 0;
  for (const Island& island : islands_) {
    const Program* p = island.Best();
    if (p == nullptr) continue;
    uint64_t seq = island.SeqOf(p->id);
    if (best == nullptr || Better(*p, seq, *best, best_seq)) {
      best = p;
      best_seq = seq;
    }
  }
  return best;
}

const Program* Archive::Get(const std::string& id) const {
  auto it = island_of_.find(id);
  if (it == island_of_.end()) return nullptr;
  return islands_[static_cast<size_t>(it->second)].Get(id);
}

std::vector<const Program*> Archive::Top(int island, size_t n) const {
  if (!ValidIsland(island)) return {};
  return islands_[static_cast<size_t>(island)].Top(n);
}

ParentChoice Archive::SampleParent(int island) {
  if (!ValidIsland(island)) return {};
  SamplingRatios ratios{options_.exploitation_ratio, options_.exploration_ratio,
                        options_.random_ratio};
  return SampleParentFrom(islands_[static_cast<size_t>(island)], ratios,
                          rngs_[static_cast<size_t>(island)]);
}

std::vector<const Program*> Archive::SampleInspirations(int island, const Program* parent,
                                                        size_t n) {
  if (!ValidIsland(island)) return {};
  return SampleInspirationsFrom(islands_[static_cast<size_t>(island)], parent, n,
                                rngs_[static_cast<size_t>(island)]);
}

std::vector<std::string> Archive::EndGeneration(int island) {
  if (!ValidIsland(island)) return {};
  int& gen = generations_[static_cast<size_t>(island)];
  ++gen;
  if (options_.migration_interval == 0 || gen % options_.migration_interval != 0) return {};
  return Migrate(island);
}

int Archive::generation(int island) const {
  return ValidIsland(island) ? generations_[static_cast<size_t>(island)] : 0;
}

std::vector<std::string> Archive::Migrate(int from) {
  std::vector<std::string> sent;
  if (num_islands() < 2 || options_.migration_count == 0) return sent;
  const int to = (from + 1) % num_islands();
  const Island& source = islands_[static_cast<size_t>(from)];
  const Island& target = islands_[static_cast<size_t>(to)];

  // Choose first, insert after: inserting may evict and re-bin.
  // The best `migration_count` programs created on `from`; those whose code the target
  // already holds stay home (no substitutes, so a stagnant island does not leak its tail).
  std::vector<Program> copies;
  int considered = 0;
  for (const Program* p : source.Top(source.size())) {
    if (considered >= options_.migration_count) break;
    if (source.IsMigrant(p->id)) continue;
    ++considered;
    if (target.FindByCode(p->code) != nullptr) continue;
    Program copy = *p;
    copy.id = p->id + "@i" + std::to_string(to);
    copy.island = to;
    if (island_of_.count(copy.id) != 0) continue;
    copies.push_back(std::move(copy));
  }
  for (Program& copy : copies) {
    std::string id = copy.id;
    Store(std::move(copy), /*migrant=*/true);
    if (target.Get(id) != nullptr) sent.push_back(id);
  }
  return sent;
}

}  // namespace ks
