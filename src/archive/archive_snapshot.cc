// Archive options as JSON, Archive::Snapshot and Archive::Restore.
#include <cmath>
#include <sstream>
#include <utility>

#include "archive/archive.h"

namespace ks {
namespace {

Status SnapshotError(const std::string& what) {
  return Status::InvalidArgument("archive snapshot: " + what +
                                 "; the snapshot is damaged or from another version");
}

}  // namespace

nlohmann::json ArchiveOptions::ToJson() const {
  nlohmann::json dims = nlohmann::json::array();
  for (const FeatureDimension& d : features) {
    nlohmann::json dim = {{"name", d.name}, {"bins", d.bins}};
    if (d.min) dim["min"] = *d.min;
    if (d.max) dim["max"] = *d.max;
    dims.push_back(dim);
  }
  return {
      {"num_islands", num_islands},
      {"migration_interval", migration_interval},
      {"migration_count", migration_count},
      {"elite_size", elite_size},
      {"population_per_island", population_per_island},
      {"exploitation_ratio", exploitation_ratio},
      {"exploration_ratio", exploration_ratio},
      {"random_ratio", random_ratio},
      {"features", dims},
      {"seed", seed},
  };
}

Result<ArchiveOptions> ArchiveOptions::FromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::InvalidArgument("archive options must be a JSON object");
  ArchiveOptions o;
  try {
    o.num_islands = j.value("num_islands", o.num_islands);
    o.migration_interval = j.value("migration_interval", o.migration_interval);
    o.migration_count = j.value("migration_count", o.migration_count);
    o.elite_size = j.value("elite_size", o.elite_size);
    o.population_per_island = j.value("population_per_island", o.population_per_island);
    o.exploitation_ratio = j.value("exploitation_ratio", o.exploitation_ratio);
    o.exploration_ratio = j.value("exploration_ratio", o.exploration_ratio);
    o.random_ratio = j.value("random_ratio", o.random_ratio);
    o.seed = j.value("seed", o.seed);
    if (j.contains("features")) {
      o.features.clear();
      for (const nlohmann::json& d : j.at("features")) {
        FeatureDimension dim;
        dim.name = d.at("name").get<std::string>();
        dim.bins = d.value("bins", dim.bins);
        if (d.contains("min")) dim.min = d.at("min").get<double>();
        if (d.contains("max")) dim.max = d.at("max").get<double>();
        o.features.push_back(std::move(dim));
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("archive options: ") + e.what());
  }
  return o;
}

nlohmann::json Archive::Snapshot() const {
  nlohmann::json islands = nlohmann::json::array();
  for (size_t i = 0; i < islands_.size(); ++i) {
    std::ostringstream rng;
    rng << rngs_[i];
    nlohmann::json members = nlohmann::json::array();
    for (const Island::Member& m : islands_[i].Members()) {
      nlohmann::json p = ProgramToJson(*m.program);
      p["seq"] = m.seq;
      p["migrant"] = m.migrant;
      members.push_back(std::move(p));
    }
    islands.push_back(
        {{"generation", generations_[i]}, {"rng", rng.str()}, {"programs", std::move(members)}});
  }
  return {
      {"version", kArchiveSnapshotVersion},         {"options", options_.ToJson()},
      {"feature_ranges", features_.RangesToJson()}, {"next_seq", next_seq_},
      {"next_seed_island", next_seed_island_},      {"islands", std::move(islands)},
  };
}

Result<std::unique_ptr<Archive>> Archive::Restore(const nlohmann::json& snapshot) {
  if (!snapshot.is_object()) return SnapshotError("not a JSON object");
  if (snapshot.value("version", 0) != kArchiveSnapshotVersion) {
    return SnapshotError("version " + snapshot.value("version", nlohmann::json()).dump() +
                         " is not " + std::to_string(kArchiveSnapshotVersion));
  }
  if (!snapshot.contains("options")) return SnapshotError("'options' is missing");
  Result<ArchiveOptions> options = ArchiveOptions::FromJson(snapshot["options"]);
  if (!options.ok()) return options.status();
  Result<std::unique_ptr<Archive>> created = Create(std::move(options).value());
  if (!created.ok()) return created.status();
  std::unique_ptr<Archive> archive = std::move(created).value();

  Status s = archive->features_.RangesFromJson(snapshot.value("feature_ranges", nlohmann::json()));
  if (!s.ok()) return s;
  const nlohmann::json islands = snapshot.value("islands", nlohmann::json());
  if (!islands.is_array() || islands.size() != archive->islands_.size()) {
    return SnapshotError("'islands' must be an array of " +
                         std::to_string(archive->islands_.size()) + " islands");
  }
  try {
    archive->next_seq_ = snapshot.at("next_seq").get<uint64_t>();
    archive->next_seed_island_ = snapshot.at("next_seed_island").get<int>();
    if (!archive->ValidIsland(archive->next_seed_island_)) {
      return SnapshotError("'next_seed_island' is out of range");
    }
    for (size_t i = 0; i < islands.size(); ++i) {
      const nlohmann::json& isl = islands[i];
      archive->generations_[i] = isl.at("generation").get<int>();
      std::istringstream rng(isl.at("rng").get<std::string>());
      rng >> archive->rngs_[i];
      if (rng.fail()) return SnapshotError("island " + std::to_string(i) + ": bad 'rng' state");
      const nlohmann::json& programs = isl.at("programs");
      if (programs.size() > static_cast<size_t>(archive->options_.population_per_island)) {
        return SnapshotError("island " + std::to_string(i) + " holds more programs than " +
                             "population_per_island");
      }
      uint64_t last_seq = 0;
      for (const nlohmann::json& pj : programs) {
        Result<Program> program = ProgramFromJson(pj);
        if (!program.ok()) return program.status();
        const uint64_t seq = pj.at("seq").get<uint64_t>();
        const bool migrant = pj.value("migrant", false);
        Program& p = *program;
        if (!std::isfinite(p.fitness)) {
          return SnapshotError("program '" + p.id + "' has a non-finite fitness");
        }
        if (seq <= last_seq || seq >= archive->next_seq_) {
          return SnapshotError("program '" + p.id + "' has an out-of-order seq");
        }
        last_seq = seq;
        Island& island = archive->islands_[i];
        if (archive->island_of_.count(p.id) != 0 || island.FindByCode(p.code) != nullptr) {
          return SnapshotError("program '" + p.id + "' appears twice");
        }
        p.island = static_cast<int>(i);
        Cell cell = archive->features_.CellOf(p);
        archive->island_of_[p.id] = p.island;
        island.Insert(std::move(p), seq, std::move(cell), migrant);
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return SnapshotError(e.what());
  }
  return archive;
}

}  // namespace ks
