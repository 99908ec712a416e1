#include "archive/island.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "core/sha256.h"

namespace ks {

Island::Island(int elite_size, int capacity) : elite_size_(elite_size), capacity_(capacity) {}

Island::InsertResult Island::Insert(Program program, uint64_t seq, Cell cell, bool migrant) {
  InsertResult result;
  std::string id = program.id;
  Entry entry;
  entry.seq = seq;
  entry.cell = std::move(cell);
  entry.migrant = migrant;
  entry.code_sha256 = Sha256Hex(program.code);
  entry.program = std::move(program);

  ranked_.insert(RankKey{entry.program.fitness, seq, id});
  by_code_[entry.code_sha256] = id;
  auto holder = grid_.find(entry.cell);
  if (holder == grid_.end()) {
    grid_.emplace(entry.cell, id);
  } else if (RankLess()(RankKey{entry.program.fitness, seq, id},
                        RankKey{entries_.at(holder->second).program.fitness,
                                entries_.at(holder->second).seq, holder->second})) {
    holder->second = id;
  }
  entries_.emplace(id, std::move(entry));

  while (entries_.size() > static_cast<size_t>(capacity_)) {
    result.evicted.push_back(EvictOne());
  }
  auto it = entries_.find(id);
  result.cell_elite = it != entries_.end() && HoldsCell(it->second);
  return result;
}

void Island::Rebin(const std::function<Cell(const Program&)>& cell_of) {
  grid_.clear();
  // Best-ranked first: the first program to reach a cell is the one that holds it.
  for (const RankKey& key : ranked_) {
    Entry& e = entries_.at(key.id);
    e.cell = cell_of(e.program);
    grid_.emplace(e.cell, key.id);
  }
}

const Program* Island::Get(const std::string& id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : &it->second.program;
}

const Program* Island::FindByCode(const std::string& code) const {
  auto it = by_code_.find(Sha256Hex(code));
  return it == by_code_.end() ? nullptr : Get(it->second);
}

std::vector<const Program*> Island::Top(size_t n) const {
  std::vector<const Program*> out;
  for (auto it = ranked_.begin(); it != ranked_.end() && out.size() < n; ++it) {
    out.push_back(&entries_.at(it->id).program);
  }
  return out;
}

const Program* Island::Best() const {
  return ranked_.empty() ? nullptr : &entries_.at(ranked_.begin()->id).program;
}

const Program* Island::AtRank(size_t r) const {
  if (r >= ranked_.size()) return nullptr;
  return &entries_.at(std::next(ranked_.begin(), static_cast<std::ptrdiff_t>(r))->id).program;
}

std::vector<const Program*> Island::Elites() const { return Top(static_cast<size_t>(elite_size_)); }

bool Island::IsElite(const std::string& id) const {
  size_t rank = 0;
  for (auto it = ranked_.begin(); it != ranked_.end() && rank < static_cast<size_t>(elite_size_);
       ++it, ++rank) {
    if (it->id == id) return true;
  }
  return false;
}

const Cell* Island::CellOf(const std::string& id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : &it->second.cell;
}

bool Island::IsMigrant(const std::string& id) const {
  auto it = entries_.find(id);
  return it != entries_.end() && it->second.migrant;
}

uint64_t Island::SeqOf(const std::string& id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? 0 : it->second.seq;
}

std::vector<Island::Member> Island::Members() const {
  std::vector<Member> out;
  out.reserve(entries_.size());
  for (const auto& [id, e] : entries_) out.push_back(Member{&e.program, e.seq, e.migrant});
  std::sort(out.begin(), out.end(), [](const Member& a, const Member& b) { return a.seq < b.seq; });
  return out;
}

bool Island::HoldsCell(const Entry& e) const {
  auto it = grid_.find(e.cell);
  return it != grid_.end() && it->second == e.program.id;
}

void Island::Remove(const std::string& id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  ranked_.erase(RankKey{e.program.fitness, e.seq, id});
  by_code_.erase(e.code_sha256);
  bool held = HoldsCell(e);
  Cell cell = e.cell;
  entries_.erase(it);
  if (!held) return;
  grid_.erase(cell);
  for (const RankKey& key : ranked_) {
    if (entries_.at(key.id).cell == cell) {
      grid_.emplace(cell, key.id);
      break;
    }
  }
}

std::string Island::EvictOne() {
  // Walk from the worst rank up to (not into) the elites.
  const size_t elites = static_cast<size_t>(elite_size_);
  size_t rank = ranked_.size();
  std::string victim;
  for (auto it = ranked_.rbegin(); it != ranked_.rend() && rank > elites; ++it) {
    --rank;
    if (!HoldsCell(entries_.at(it->id))) {
      victim = it->id;
      break;
    }
  }
  if (victim.empty()) victim = ranked_.rbegin()->id;  // every non-elite holds a cell
  Remove(victim);
  return victim;
}

}  // namespace ks
