// Island: one island's population — a MAP-Elites grid (cell → best program), an elite
// archive (the top `elite_size` programs by fitness) and a bound on the population.
//
// Rank: higher fitness first; among equal fitness the earlier insertion (smaller `seq`)
// first. So an incumbent is only displaced by a strictly better program, everywhere: a cell
// holds the best-ranked program binned into it, the elites are the first `elite_size` by
// rank.
// Eviction (when the population exceeds its bound): the worst-ranked program that is
// neither an elite nor a cell holder; when every non-elite holds a cell, the worst non-elite.
// The program just inserted may be the one evicted.
// Thread-safety: none; owned and serialized by Archive. Pointers returned stay valid until
// the next non-const call.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "archive/features.h"
#include "archive/program.h"

namespace ks {

class Island {
 public:
  // Requires 1 ≤ elite_size ≤ capacity (Archive validates its options).
  Island(int elite_size, int capacity);

  struct InsertResult {
    bool cell_elite = false;           // the program holds its cell (and was kept)
    std::vector<std::string> evicted;  // removed to respect the bound, maybe the new one
  };
  // Inserts `program`, whose id and code are not on this island yet (check with Get and
  // FindByCode), with insertion number `seq` (unique, increasing) into `cell`. `migrant`
  // marks a copy received from another island.
  InsertResult Insert(Program program, uint64_t seq, Cell cell, bool migrant);

  // Recomputes every program's cell with `cell_of` and rebuilds the grid.
  void Rebin(const std::function<Cell(const Program&)>& cell_of);

  size_t size() const { return entries_.size(); }
  const Program* Get(const std::string& id) const;
  // The program on this island whose code is `code` (compared by SHA-256), or nullptr.
  const Program* FindByCode(const std::string& code) const;

  // The first min(n, size) programs by rank.
  std::vector<const Program*> Top(size_t n) const;
  // The best-ranked program, or nullptr when the island is empty.
  const Program* Best() const;
  // The program at rank r (0 = best); nullptr when r ≥ size.
  const Program* AtRank(size_t r) const;
  // Elites: the first min(elite_size, size) programs by rank.
  std::vector<const Program*> Elites() const;
  bool IsElite(const std::string& id) const;

  // Occupied cells and the id of the program holding each, in cell order.
  const std::map<Cell, std::string>& grid() const { return grid_; }
  // The cell of program `id`, or nullptr when it is not here.
  const Cell* CellOf(const std::string& id) const;
  // Whether `id` is a copy received by migration (false when not here).
  bool IsMigrant(const std::string& id) const;
  // Insertion number of `id` (0 when not here).
  uint64_t SeqOf(const std::string& id) const;

  // Every program with its insertion number and migrant flag, in insertion order.
  struct Member {
    const Program* program;
    uint64_t seq;
    bool migrant;
  };
  std::vector<Member> Members() const;

 private:
  struct Entry {
    Program program;
    uint64_t seq = 0;
    Cell cell;
    bool migrant = false;
    std::string code_sha256;
  };
  struct RankKey {
    double fitness;
    uint64_t seq;
    std::string id;
  };
  struct RankLess {
    bool operator()(const RankKey& a, const RankKey& b) const {
      if (a.fitness != b.fitness) return a.fitness > b.fitness;
      return a.seq < b.seq;
    }
  };

  bool HoldsCell(const Entry& e) const;
  // Removes `id` and gives its cell to the best remaining program binned there, if any.
  void Remove(const std::string& id);
  // Evicts one program per the rule in the header comment; returns its id.
  std::string EvictOne();

  int elite_size_;
  int capacity_;
  std::unordered_map<std::string, Entry> entries_;
  std::unordered_map<std::string, std::string> by_code_;  // code sha256 → id
  std::set<RankKey, RankLess> ranked_;
  std::map<Cell, std::string> grid_;
};

}  // namespace ks
