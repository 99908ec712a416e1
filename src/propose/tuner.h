// The tuner: the LLM-free proposer's core. It finds tunable integer constants inside the
// EVOLVE-BLOCK and proposes children by changing one or two of them (Mutate) or by mixing two
// parents' values (Crossover).
//
// Tunable constants are assignments `NAME = <int>` / `NAME: tl.constexpr = <int>` (also
// `self.NAME = <int>`) and keyword arguments or defaults `NAME=<int>`, inside the block:
//   - explicit: a `# ks:tune NAME=[v1, v2, ...]` comment anywhere in the block (several
//     NAME=[...] may share one comment) makes every occurrence of NAME take values from the list;
//   - implicit: well-known names take power-of-two values in plausible ranges: num_warps 1..32,
//     num_stages 1..7 (every value), BLOCK_M/N/K and TILE_M/N/K (also BLOCK_SIZE_M etc.)
//     16..256, other BLOCK* / TILE* 16..8192, GROUP_SIZE* 1..32, UNROLL* and VEC* 1..16 (names
//     matched case-insensitively); the current value always stays a choice.
// Every function is deterministic for a given RNG state (draws use rng() directly, not
// std::uniform_int_distribution, whose sequence differs between standard libraries).
// Thread-safety: pure functions; the RNG is the caller's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace ks {

// One occurrence of a tunable constant.
struct TunableParam {
  std::string name;  // as written: BLOCK_SIZE, num_warps
  std::string key;   // `name`, or `name@LINE` when the name occurs more than once in the block
  int64_t value = 0;
  std::vector<int64_t> choices;  // sorted, unique; the values a mutation may pick
  bool explicit_range = false;   // `choices` come from a `# ks:tune` comment
  int line = 0;                  // 1-based line of the integer literal
  size_t offset = 0;             // the integer literal's bytes in the program
  size_t length = 0;
};

// The tunable constants of the EVOLVE-BLOCK, in program order. InvalidArgument when the
// program has no single EVOLVE-BLOCK, a `# ks:tune` comment is malformed ("malformed `# ks:tune`
// comment on line 7: expected NAME=[v1, v2, ...]") or names a constant the block never sets.
Result<std::vector<TunableParam>> ScanTunables(std::string_view code);

// ScanTunables, with an empty list for a program it rejects.
std::vector<TunableParam> FindTunables(std::string_view code);

// Returns `code` with 1..max_changes tunable constants set to other values from their choices
// (nearby values are preferred). The result always differs from `code`. When `description`
// is given it receives the change, e.g. "BLOCK_SIZE 1024→2048, num_warps 4→8".
// InvalidArgument "no tunable constants in the EVOLVE-BLOCK (add `# ks:tune NAME=[...]`
// comments)" when there is nothing to change.
Result<std::string> Mutate(std::string_view code, std::mt19937_64& rng, int max_changes = 2,
                           std::string* description = nullptr);

// Returns parent `a` with some of the tunable constants it shares with `b` (same key) set to
// b's values; each constant's value comes from one of the parents. When the parents differ in
// two or more shared constants, the child matches neither parent. InvalidArgument when the
// parents share no tunable constant or agree on all of them. `description` as for Mutate.
Result<std::string> Crossover(std::string_view a, std::string_view b, std::mt19937_64& rng,
                              std::string* description = nullptr);

}  // namespace ks
