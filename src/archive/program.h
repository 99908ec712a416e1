// Program: one evaluated candidate as the archive keeps it, and its JSON form.
//
// The archive never evaluates anything: `fitness` and `metrics` come from the
// caller; the archive ranks by `fitness` and bins by feature values (see features.h).
// Thread-safety: values; safe to copy between threads.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/status.h"

namespace ks {

// `Program::island` value asking Archive::Add to place the program round-robin (seeds).
inline constexpr int kAnyIsland = -1;

struct Program {
  std::string id;         // unique within an archive; migrant copies get "<id>@i<island>"
  std::string parent_id;  // empty for seeds
  std::string code;       // the full candidate source
  int island = 0;         // island the program lives on; kAnyIsland on Add means round-robin
  int generation = 0;     // search depth (parent's generation + 1), set by the caller
  double fitness = 0;     // computed by the caller; must be finite
  bool correct = false;   // passed correctness (and audit)
  std::optional<double> speedup;          // measured speedup, when timed
  std::map<std::string, double> metrics;  // feature values by name (e.g. "complexity") and
                                          // any other figures the caller wants kept
  std::string proposer;                   // who wrote it: "seed", "tuner", "llm:<model>", ...
};

// Every field; non-finite numbers are written as the strings "nan", "inf", "-inf" so a
// dumped and re-parsed object round-trips exactly.
nlohmann::json ProgramToJson(const Program& program);
// The inverse of ProgramToJson. A missing `id` or `code`, or a field of the wrong type, is
// InvalidArgument naming the field.
Result<Program> ProgramFromJson(const nlohmann::json& j);

}  // namespace ks
