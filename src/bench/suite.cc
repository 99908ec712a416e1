#include "bench/suite.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>
#include <sstream>
#include <tuple>

#include "core/file.h"
#include "task/task.h"

namespace ks {
namespace {

namespace fs = std::filesystem;

const char* const kBackends[] = {"triton", "cuda", "cpu"};

// A problem file: *.py, not a seed kernel (<stem>.<backend>.py), not a package or private file.
bool IsProblemFile(const fs::path& p) {
  if (p.extension() != ".py") return false;
  std::string name = p.filename().string();
  if (name.empty() || name[0] == '_' || name[0] == '.') return false;
  std::string inner = fs::path(p.stem()).extension().string();  // ".cpu" of "x.cpu.py"
  for (const char* b : kBackends) {
    if (inner == std::string(".") + b) return false;
  }
  // Scripts beside the problems (a timing script, a generator) define no Model: not problems.
  Result<std::string> text = ReadFile(p.string());
  return text.ok() && MissingTopLevelNames(*text, {"Model", "get_inputs"}).empty();
}

// The KernelBench id: the integer before the first '_' (or -1).
long IdOf(const std::string& stem) {
  size_t end = 0;
  while (end < stem.size() && std::isdigit(static_cast<unsigned char>(stem[end]))) ++end;
  if (end == 0 || end > 9) return -1;
  return std::stol(stem.substr(0, end));
}

bool Matches(const std::string& glob, const SuiteProblem& p) {
  if (glob.empty()) return true;
  for (const std::string& s : {p.stem, p.stem + ".py", p.name, p.name + ".py"}) {
    if (fnmatch(glob.c_str(), s.c_str(), 0) == 0) return true;
  }
  return false;
}

// `group`: the folder name used instead of "level<N>" (family folders of a curated set).
Status AddFilesOf(const fs::path& dir, int level, const SuiteFilter& filter,
                  std::vector<SuiteProblem>& out, const std::string& group = "") {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file() || !IsProblemFile(e.path())) continue;
    SuiteProblem p;
    p.level = level;
    p.level_dir = group.empty() ? fmt::format("level{}", level) : group;
    p.stem = e.path().stem().string();
    p.path = e.path().string();
    p.name = p.level_dir + "/" + p.stem;
    if (Matches(filter.glob, p)) out.push_back(std::move(p));
  }
  if (ec) return Status::IOError(fmt::format("cannot list {}: {}", dir.string(), ec.message()));
  return Status::Ok();
}

}  // namespace

Result<std::vector<SuiteProblem>> DiscoverSuite(const std::string& dir_text,
                                                const SuiteFilter& filter) {
  fs::path dir(dir_text);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return Status::NotFound(dir_text +
                            ": not a directory (a suite is a directory of "
                            "KernelBench-format problems, with levelN/ sub-folders)");
  }
  // A KernelBench checkout: its problems are in KernelBench/levelN/.
  if (fs::is_directory(dir / "KernelBench" / "level1", ec)) dir = dir / "KernelBench";
  std::vector<SuiteProblem> out;
  const std::regex level_re("level([0-9]+)");
  bool leveled = false;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    std::string name = e.path().filename().string();
    if (!e.is_directory() || !std::regex_match(name, m, level_re)) continue;
    leveled = true;
    int level = std::stoi(m[1].str());
    if (!filter.levels.empty() && filter.levels.count(level) == 0) continue;
    Status s = AddFilesOf(e.path(), level, filter, out);
    if (!s.ok()) return s;
  }
  if (ec) return Status::IOError(fmt::format("cannot list {}: {}", dir.string(), ec.message()));
  if (filter.levels.empty() || filter.levels.count(0) > 0) {
    Status s = AddFilesOf(dir, 0, filter, out);
    if (!s.ok()) return s;
    // Without levelN/ folders, other sub-folders are groups of level 0 (the family folders of
    // `kernelsmith curate` output: problems/<family>/<id>_<Name>.py).
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
      std::string name = e.path().filename().string();
      if (leveled || !e.is_directory() || name.empty() || name[0] == '.' || name[0] == '_') {
        continue;
      }
      s = AddFilesOf(e.path(), 0, filter, out, name);
      if (!s.ok()) return s;
    }
    if (ec) return Status::IOError(fmt::format("cannot list {}: {}", dir.string(), ec.message()));
  }
  std::sort(out.begin(), out.end(), [](const SuiteProblem& a, const SuiteProblem& b) {
    long ia = IdOf(a.stem), ib = IdOf(b.stem);
    return std::tie(a.level, ia, a.stem) < std::tie(b.level, ib, b.stem);
  });
  return out;
}

Result<std::set<int>> ParseLevels(const std::string& text) {
  std::set<int> levels;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    size_t used = 0;
    int level = -1;
    try {
      level = std::stoi(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != part.size() || level < 0) {
      return Status::InvalidArgument(fmt::format(
          "--levels \"{}\": \"{}\" is not a level number; expected e.g. 1,2,3", text, part));
    }
    levels.insert(level);
  }
  return levels;
}

std::string SeedKernelPath(const SuiteProblem& problem, const std::string& backend) {
  fs::path seed = fs::path(problem.path).parent_path() / (problem.stem + "." + backend + ".py");
  std::error_code ec;
  return fs::is_regular_file(seed, ec) ? seed.string() : std::string();
}

}  // namespace ks
