#include "store/store.h"

#include <string>

namespace ks {
namespace {

template <typename Enum, size_t N>
Result<Enum> ParseName(const std::string& name, const char* what, const char* const (&names)[N]) {
  for (size_t i = 0; i < N; ++i) {
    if (name == names[i]) return static_cast<Enum>(i);
  }
  std::string known;
  for (size_t i = 0; i < N; ++i) known += (i == 0 ? "" : "|") + std::string(names[i]);
  return Status::InvalidArgument("unknown " + std::string(what) + " '" + name + "' (expected " +
                                 known + ")");
}

// Indexed by the enum's value.
constexpr const char* kRunStatusNames[] = {"running", "finished", "waiting", "failed"};
constexpr const char* kProposerNames[] = {"seed", "llm", "tuner", "command", "files"};
constexpr const char* kProgramKindNames[] = {"seed", "translation", "evolution"};

}  // namespace

const char* RunStatusName(RunStatus s) { return kRunStatusNames[static_cast<int>(s)]; }
Result<RunStatus> ParseRunStatus(const std::string& name) {
  return ParseName<RunStatus>(name, "run status", kRunStatusNames);
}

const char* ProposerKindName(ProposerKind p) { return kProposerNames[static_cast<int>(p)]; }
Result<ProposerKind> ParseProposerKind(const std::string& name) {
  return ParseName<ProposerKind>(name, "proposer", kProposerNames);
}

const char* ProgramKindName(ProgramKind k) { return kProgramKindNames[static_cast<int>(k)]; }
Result<ProgramKind> ParseProgramKind(const std::string& name) {
  return ParseName<ProgramKind>(name, "program kind", kProgramKindNames);
}

}  // namespace ks
