// WriteCurateOutputs (pipeline.h): the files a curate run leaves in OUT_DIR.
#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "core/file.h"
#include "core/sha256.h"
#include "curate/pipeline.h"

namespace ks {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

Json Field(const Json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? Json(nullptr) : *it;
}

Json ModuleJson(const CurateModule& m) {
  const Json& e = m.extract;
  std::string source = Field(e, "source").is_string() ? e["source"].get<std::string>() : "";
  std::string problem_text =
      Field(m.inputs, "problem").is_string() ? m.inputs["problem"].get<std::string>() : "";
  Json j = {
      {"id", m.id},
      {"repo", Field(e, "repo")},
      {"file", Field(e, "file")},
      {"class", Field(e, "class")},
      {"line", Field(e, "line")},
      {"license", Field(e, "license")},
      {"family", m.ClassName().empty() ? Json(nullptr) : Json(m.Family())},
      {"difficulty", Field(e, "difficulty")},
      {"ops", Field(e, "ops")},
      {"ast_hash", Field(e, "ast_hash")},
      {"source_sha256", source.empty() ? Json(nullptr) : Json(Sha256Hex(source))},
      {"status", m.status},
      {"stage", m.stage.empty() ? Json(nullptr) : Json(m.stage)},
      {"reason", m.reason.empty() ? Json(nullptr) : Json(m.reason)},
      {"merged_into", m.dup ? Json(m.dup->merged_into) : Json(nullptr)},
      {"duplicate_of", m.dup ? Json(m.dup->duplicate_of) : Json(nullptr)},
      {"jaccard", m.dup ? Json(std::round(m.dup->jaccard * 1000) / 1000) : Json(nullptr)},
      {"runtime_us", Field(m.inputs, "runtime_us")},
      {"attempts", Field(m.inputs, "attempts")},
      {"last_error", Field(m.inputs, "last_error")},
      {"inputs_via", m.inputs_via.empty() ? Json(nullptr) : Json(m.inputs_via)},
      {"llm_error", m.llm_error.empty() ? Json(nullptr) : Json(m.llm_error)},
      {"problem", m.problem.empty() ? Json(nullptr) : Json(m.problem)},
      {"problem_sha256", m.problem.empty() ? Json(nullptr) : Json(Sha256Hex(problem_text))},
      {"cluster", m.cluster ? Json(*m.cluster) : Json(nullptr)},
      {"central", m.central},
  };
  return j;
}

Status ResetDir(const std::string& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (!ec) fs::create_directories(dir, ec);
  if (ec) return Status::IOError("cannot recreate " + dir + ": " + ec.message());
  return Status::Ok();
}

}  // namespace

Status WriteCurateOutputs(const std::string& out_dir, std::vector<CurateModule>& modules,
                          const Json& clusters_in, const Json& summary) {
  Status s = ResetDir(out_dir + "/problems");
  if (s.ok()) s = ResetDir(out_dir + "/seeds");
  if (!s.ok()) return s;
  std::map<std::string, CurateModule*> by_id;
  for (CurateModule& m : modules) by_id[std::to_string(m.id)] = &m;

  for (CurateModule& m : modules) {
    if (m.problem.empty()) continue;
    std::error_code ec;
    fs::create_directories(fs::path(out_dir + "/" + m.problem).parent_path(), ec);
    s = WriteFileAtomic(out_dir + "/" + m.problem, m.inputs["problem"].get<std::string>());
    if (!s.ok()) return s;
  }

  Json clusters = clusters_in;
  Json seeds = Json::array();
  for (const Json& c : clusters.value("clusters", Json::array())) {
    int cid = c.value("id", -1);
    for (const Json& member : c.value("members", Json::array())) {
      std::string key = member.is_string() ? member.get<std::string>() : member.dump();
      if (by_id.count(key) > 0) by_id[key]->cluster = cid;
    }
    Json central = c.value("central", Json(nullptr));
    std::string key = central.is_string() ? central.get<std::string>() : central.dump();
    auto it = by_id.find(key);
    if (it == by_id.end() || it->second->problem.empty()) continue;
    CurateModule& m = *it->second;
    m.central = true;
    std::string seed = fmt::format("seeds/{}_{}.py", m.id, m.ClassName());
    s = WriteFileAtomic(out_dir + "/" + seed, m.inputs["problem"].get<std::string>());
    if (!s.ok()) return s;
    seeds.push_back({{"cluster", cid},
                     {"id", m.id},
                     {"class", m.ClassName()},
                     {"family", m.Family()},
                     {"size", c.value("members", Json::array()).size()},
                     {"problem", m.problem},
                     {"seed", seed}});
  }
  clusters["seeds"] = seeds;

  std::string lines;
  for (const CurateModule& m : modules) lines += ModuleJson(m).dump() + "\n";
  s = WriteFileAtomic(out_dir + "/modules.jsonl", lines);
  if (s.ok()) s = WriteFileAtomic(out_dir + "/clusters.json", clusters.dump(2) + "\n");
  if (s.ok()) s = WriteFileAtomic(out_dir + "/summary.json", summary.dump(2) + "\n");
  return s;
}

}  // namespace ks
