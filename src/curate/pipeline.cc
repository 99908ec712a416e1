#include "curate/pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "core/parallel_for.h"
#include "curate/curate_store.h"
#include "curate/llm_inputs.h"
#include "curate/source_walk.h"
#include "export/difficulty.h"

namespace ks {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string Str(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

Json ConfigJson(const CurateOptions& o, const std::vector<std::string>& roots) {
  return {{"sources", roots}, {"skip_tests", o.skip_tests}, {"seed", o.seed}};
}

// ---- extract -------------------------------------------------------------------------------

struct ExtractBatch {
  std::vector<const CurateSourceFile*> files;
};

Json FileFailure(const CurateSourceFile& f, const std::string& why) {
  return {{"file", f.rel},        {"repo", fs::path(f.root).filename().string()},
          {"class", nullptr},     {"line", nullptr},
          {"status", "rejected"}, {"reason", why}};
}

// Runs extract over `batch`; a failing batch of several files is retried file by file so one
// bad file cannot sink its neighbours; a failing single file becomes a rejected record.
Status ExtractOne(const CurateTool& tool, const std::vector<const CurateSourceFile*>& files,
                  CurateStore& store, Progress* progress) {
  const std::string& root = files[0]->root;
  std::vector<std::string> paths;
  std::map<std::string, const CurateSourceFile*> by_rel;
  for (const CurateSourceFile* f : files) {
    paths.push_back(f->path);
    by_rel[f->rel] = f;
  }
  Result<CurateToolOutput> out = tool.Extract(root, paths, 60.0 + 20.0 * files.size());
  std::vector<ExtractedRow> rows;
  if (!out.ok()) {
    if (files.size() > 1) {
      for (const CurateSourceFile* f : files) {
        Status s = ExtractOne(tool, {f}, store, progress);
        if (!s.ok()) return s;
      }
      return Status::Ok();
    }
    progress->Log(fmt::format("extract failed on {}: {}", files[0]->path,
                              out.status().message().substr(0, 300)));
    rows.push_back({files[0]->path, files[0]->root_index,
                    FileFailure(*files[0], "extract failed: " + out.status().message())});
  } else {
    for (const std::string& line : out->bad_lines) {
      progress->Log("extract printed a line that is not a JSON object: " + line);
    }
    for (Json& r : out->records) {
      auto it = by_rel.find(Str(r, "file"));
      if (it == by_rel.end()) {
        progress->Log("extract gave a record for a file it was not asked about: " + Str(r, "file"));
        continue;
      }
      // One difficulty estimate for the whole system: the one export uses (export/difficulty.h).
      if (r.contains("class") && r["class"].is_string()) {
        int level = EstimateLevel(Str(r, "source"));
        r["difficulty"] = level > 0 ? Json(level) : Json(nullptr);
      }
      rows.push_back({it->second->path, it->second->root_index, std::move(r)});
    }
  }
  std::vector<std::pair<std::string, int>> done;
  for (const CurateSourceFile* f : files) done.emplace_back(f->path, f->root_index);
  return store.AddExtracted(done, rows);
}

// ---- inputs --------------------------------------------------------------------------------

Json InputsRequest(const CurateModule& m, const Json& candidate) {
  return {{"id", std::to_string(m.id)},
          {"source", Str(m.extract, "source")},
          {"class", m.ClassName()},
          {"candidate_inputs", candidate}};
}

Json InputsFailure(int64_t id, const std::string& why) {
  return {{"id", std::to_string(id)}, {"status", "rejected"}, {"reason", why},
          {"problem", nullptr},       {"runtime_us", nullptr},  {"attempts", 0},
          {"last_error", nullptr}};
}

// Runs inputs over `requests`; returns one result per request id (missing ones and failures
// become rejected records). A failing batch is retried record by record.
std::map<int64_t, Json> RunInputs(const CurateTool& tool, const std::vector<Json>& requests,
                                  const CurateOptions& o, Progress* progress) {
  std::map<int64_t, Json> results;
  double deadline = 60.0 + requests.size() * (o.timeout_s * 4 + 15);
  Result<CurateToolOutput> out = tool.Inputs(requests, o.timeout_s, o.seed, deadline);
  if (!out.ok()) {
    if (requests.size() > 1) {
      for (const Json& r : requests) results.merge(RunInputs(tool, {r}, o, progress));
      return results;
    }
    int64_t id = std::stoll(requests[0]["id"].get<std::string>());
    progress->Log(fmt::format("inputs failed on module {}: {}", id,
                              out.status().message().substr(0, 300)));
    results[id] = InputsFailure(id, "inputs failed: " + out.status().message());
    return results;
  }
  std::set<int64_t> asked;
  for (const Json& r : requests) asked.insert(std::stoll(r["id"].get<std::string>()));
  for (Json& r : out->records) {
    std::string id_text = Str(r, "id");
    int64_t id = 0;
    try {
      id = std::stoll(id_text);
    } catch (const std::exception&) {
    }
    if (asked.count(id) == 0) continue;
    results[id] = std::move(r);
  }
  for (int64_t id : asked) {
    if (results.count(id) == 0) results[id] = InputsFailure(id, "inputs printed no result for it");
  }
  return results;
}

// ---- the run -------------------------------------------------------------------------------

class Pipeline {
 public:
  Pipeline(CurateOptions o, Progress* p) : o_(std::move(o)), progress_(p) {}
  Result<Json> Run();

 private:
  Status Prepare();
  Status Extract();
  Status Number();
  Status Dedup();
  Status Inputs();
  Status Repair();
  void Decide();
  Json Cluster();
  Json Summary(const Json& clusters) const;

  CurateOptions o_;
  Progress* progress_;
  Clock::time_point start_ = Clock::now();
  std::map<std::string, double> stage_s_;
  std::unique_ptr<CurateStore> store_;
  std::unique_ptr<CurateTool> tool_;
  std::vector<std::string> roots_;
  size_t files_scanned_ = 0;
  std::vector<CurateModule> modules_;
  std::map<int64_t, Json> inputs_;
  std::map<int64_t, LlmRow> llm_;
  bool resumed_ = false;
};

Status Pipeline::Prepare() {
  std::error_code ec;
  fs::create_directories(o_.out_dir + "/tmp", ec);
  if (ec) return Status::IOError("cannot create " + o_.out_dir + ": " + ec.message());
  for (const std::string& s : o_.sources) {
    fs::path p = fs::absolute(s, ec).lexically_normal();
    if (!p.empty() && p.filename().empty()) p = p.parent_path();
    roots_.push_back(p.string());
  }
  o_.tool.scratch_dir = o_.out_dir + "/tmp";
  Result<SandboxPlan> plan = PlanSandboxFromEnv(o_.sandbox);
  if (!plan.ok()) return plan.status();
  for (const std::string& w : plan->warnings) progress_->Log("warning: " + w);
  progress_->Log("sandbox: " + plan->Describe());
  o_.tool.sandbox = std::make_shared<SandboxPlan>(std::move(*plan));
  tool_ = std::make_unique<CurateTool>(o_.tool);
  Status probe = tool_->Probe();
  if (!probe.ok()) return probe;
  if (o_.embed) {
    // --embed fails now, before the store holds a run and before hours of extraction, when its
    // model is not installed.
    Result<Json> embed = tool_->Cluster({}, true, 0, 300, nullptr);
    if (!embed.ok()) {
      return Status::InvalidArgument("--embed cannot load its model: " + embed.status().message());
    }
  }
  bool existed = fs::exists(o_.out_dir + "/curate.db", ec);
  Result<std::unique_ptr<CurateStore>> store = CurateStore::Open(o_.out_dir + "/curate.db");
  if (!store.ok()) return store.status();
  store_ = std::move(*store);
  Result<std::optional<std::string>> stored = store_->GetMeta("config");
  if (!stored.ok()) return stored.status();
  Json config = ConfigJson(o_, roots_);
  if (existed && stored->has_value()) {
    if (!o_.resume) {
      return Status::InvalidArgument(o_.out_dir +
                                     " already holds a curate run; add --resume to continue it, "
                                     "or choose another -o directory");
    }
    Json old = Json::parse(**stored, nullptr, false);
    if (old != config) {
      return Status::InvalidArgument(fmt::format(
          "cannot resume {}: it was started with {}, not {} (same sources, seed and test "
          "setting are needed; or choose another -o directory)",
          o_.out_dir, old.dump(), config.dump()));
    }
    resumed_ = true;
  } else {
    Status s = store_->SetMeta("config", config.dump());
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status Pipeline::Extract() {
  auto t0 = Clock::now();
  SourceWalkOptions wo;
  wo.skip_tests = o_.skip_tests;
  Result<std::vector<CurateSourceFile>> files = WalkSources(o_.sources, wo);
  if (!files.ok()) return files.status();
  files_scanned_ = files->size();
  Result<std::set<std::string>> done = store_->DoneFiles();
  if (!done.ok()) return done.status();
  std::vector<ExtractBatch> batches;
  size_t todo = 0;
  for (const CurateSourceFile& f : *files) {
    if (done->count(f.path) > 0) continue;
    ++todo;
    if (batches.empty() || batches.back().files.size() >= static_cast<size_t>(o_.extract_batch) ||
        batches.back().files[0]->root != f.root) {
      batches.emplace_back();
    }
    batches.back().files.push_back(&f);
  }
  progress_->Log(fmt::format("extract: {} Python file(s) in {} source dir(s), {} to do", files->size(),
                             o_.sources.size(), todo));
  std::atomic<size_t> finished{0};
  Status s = ParallelFor(batches.size(), o_.jobs, [&](size_t i) -> Status {
    Status st = ExtractOne(*tool_, batches[i].files, *store_, progress_);
    finished += batches[i].files.size();
    progress_->Status(fmt::format("extract {}/{} files", finished.load(), todo));
    return st;
  });
  stage_s_["extract"] = Seconds(t0);
  return s;
}

// Ids follow (source dir, file, line, class): stable across runs over the same sources.
Status Pipeline::Number() {
  Result<std::vector<ExtractedRow>> rows = store_->AllExtracted();
  if (!rows.ok()) return rows.status();
  std::sort(rows->begin(), rows->end(), [](const ExtractedRow& a, const ExtractedRow& b) {
    auto key = [](const ExtractedRow& r) {
      auto it = r.record.find("line");
      int64_t line = it != r.record.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
      return std::make_tuple(r.root_index, Str(r.record, "file"), line, Str(r.record, "class"));
    };
    return key(a) < key(b);
  });
  int64_t id = 0;
  for (ExtractedRow& r : *rows) {
    CurateModule m;
    m.id = ++id;
    m.root_index = r.root_index;
    m.extract = std::move(r.record);
    if (Str(m.extract, "status") == "ok" && !m.ClassName().empty()) {
      m.status = "ok";
    } else {
      m.status = "rejected";
      m.stage = "extract";
      m.reason = Str(m.extract, "reason");
      if (m.reason.empty()) m.reason = "extract rejected it without a reason";
    }
    modules_.push_back(std::move(m));
  }
  return Status::Ok();
}

Status Pipeline::Dedup() {
  auto t0 = Clock::now();
  std::vector<DedupItem> items;
  for (const CurateModule& m : modules_) {
    if (m.status != "ok") continue;
    DedupItem item;
    item.id = m.id;
    item.ast_hash = Str(m.extract, "ast_hash");
    // `class_tokens` (the class's own code, without inlined helpers), when the extractor gives
    // it, keeps shared inlined helpers from making unrelated modules look alike.
    const char* key = m.extract.contains("class_tokens") && m.extract["class_tokens"].is_array()
                          ? "class_tokens"
                          : "tokens";
    if (m.extract.contains(key) && m.extract[key].is_array()) {
      for (const Json& t : m.extract[key]) {
        if (t.is_string()) item.tokens.push_back(t.get<std::string>());
      }
    }
    items.push_back(std::move(item));
  }
  Result<DedupResult> r = Deduplicate(std::move(items), o_.near_dup_threshold);
  if (!r.ok()) return r.status();
  for (CurateModule& m : modules_) {
    auto it = r->merged.find(m.id);
    if (it == r->merged.end()) continue;
    m.status = "duplicate";
    m.stage = "dedup";
    m.dup = it->second;
    m.reason = DescribeVerdict(it->second);
  }
  stage_s_["dedup"] = Seconds(t0);
  progress_->Log(fmt::format("dedup: {} exact and {} near-duplicate(s) merged (threshold {})",
                             r->exact, r->near, o_.near_dup_threshold));
  return Status::Ok();
}

Status Pipeline::Inputs() {
  auto t0 = Clock::now();
  Result<std::map<int64_t, Json>> stored = store_->AllInputs();
  if (!stored.ok()) return stored.status();
  inputs_ = std::move(*stored);
  std::vector<std::vector<Json>> batches;
  size_t todo = 0;
  for (const CurateModule& m : modules_) {
    if (m.status != "ok" || inputs_.count(m.id) > 0) continue;
    if (batches.empty() || batches.back().size() >= static_cast<size_t>(o_.inputs_batch)) {
      batches.emplace_back();
    }
    batches.back().push_back(InputsRequest(m, nullptr));
    ++todo;
  }
  progress_->Log(fmt::format("inputs: {} module(s) to run ({} done earlier)", todo,
                             inputs_.size()));
  std::mutex mu;
  size_t finished = 0, ok = 0;
  Status s = ParallelFor(batches.size(), o_.jobs, [&](size_t i) -> Status {
    std::map<int64_t, Json> got = RunInputs(*tool_, batches[i], o_, progress_);
    std::vector<std::pair<int64_t, Json>> rows(got.begin(), got.end());
    Status st = store_->PutInputs(rows);
    std::lock_guard<std::mutex> lock(mu);
    for (auto& [id, r] : rows) {
      ok += Str(r, "status") == "ok" ? 1 : 0;
      inputs_[id] = r;
    }
    finished += rows.size();
    progress_->Status(fmt::format("inputs {}/{} modules  executable {}", finished, todo, ok));
    return st;
  });
  stage_s_["inputs"] = Seconds(t0);
  return s;
}

Status Pipeline::Repair() {
  Result<std::map<int64_t, LlmRow>> stored = store_->AllLlm();
  if (!stored.ok()) return stored.status();
  llm_ = std::move(*stored);
  if (o_.llm == nullptr) return Status::Ok();
  auto t0 = Clock::now();
  std::vector<const CurateModule*> todo;
  for (const CurateModule& m : modules_) {
    auto it = inputs_.find(m.id);
    if (m.status == "ok" && it != inputs_.end() && Str(it->second, "status") != "ok" &&
        llm_.count(m.id) == 0) {
      todo.push_back(&m);
    }
  }
  progress_->Log(fmt::format("llm: asking {} for the inputs of {} module(s)",
                             o_.llm->Endpoint(), todo.size()));
  std::mutex mu;
  size_t finished = 0, verified = 0;
  Status s = ParallelFor(todo.size(), o_.jobs, [&](size_t i) -> Status {
    const CurateModule& m = *todo[i];
    const Json& failed = inputs_.at(m.id);
    std::string last_error = Str(failed, "last_error");
    if (last_error.empty()) last_error = Str(failed, "reason");
    Result<ChatRequest> request =
        BuildInputsRequest(o_.llm_template, m.ClassName(), Str(m.extract, "source"), last_error);
    if (!request.ok()) return request.status();
    Result<ChatResponse> reply = o_.llm->Complete(*request);
    if (!reply.ok()) {  // not stored: a later --resume asks again
      progress_->Log(fmt::format("llm: module {}: {}", m.id, reply.status().message()));
      return Status::Ok();
    }
    LlmRow row;
    row.reply = reply->content;
    Result<CandidateInputs> parsed = ParseInputsReply(reply->content);
    if (!parsed.ok()) {
      row.error = parsed.status().message();
    } else {
      Json candidate = {{"get_inputs", parsed->get_inputs},
                        {"get_init_inputs", parsed->get_init_inputs}};
      std::map<int64_t, Json> got =
          RunInputs(*tool_, {InputsRequest(m, candidate)}, o_, progress_);
      row.verified = got.at(m.id);
      if (Str(row.verified, "status") != "ok") {
        row.error = "the LLM's inputs did not pass: " + Str(row.verified, "reason");
      }
    }
    Status st = store_->PutLlm(m.id, row);
    std::lock_guard<std::mutex> lock(mu);
    verified += row.error.empty() ? 1 : 0;
    llm_[m.id] = row;
    ++finished;
    progress_->Status(fmt::format("llm {}/{} modules  repaired {}", finished, todo.size(),
                                  verified));
    return st;
  });
  stage_s_["llm"] = Seconds(t0);
  return s;
}

void Pipeline::Decide() {
  for (CurateModule& m : modules_) {
    if (m.status != "ok") continue;
    auto in = inputs_.find(m.id);
    if (in == inputs_.end()) {
      m.status = "rejected";
      m.stage = "inputs";
      m.reason = "inputs not run";
      continue;
    }
    m.inputs = in->second;
    m.inputs_via = "deduction";
    auto l = llm_.find(m.id);
    if (Str(m.inputs, "status") != "ok" && l != llm_.end()) {
      if (l->second.error.empty()) {
        m.inputs = l->second.verified;
        m.inputs_via = "llm";
      } else {
        m.llm_error = l->second.error;
      }
    }
    if (Str(m.inputs, "status") == "ok" && !Str(m.inputs, "problem").empty()) {
      m.problem = fmt::format("problems/{}/{}_{}.py", m.Family(), m.id, m.ClassName());
      continue;
    }
    m.status = "rejected";
    m.stage = m.inputs_via == "llm" || !m.llm_error.empty() ? "llm" : "inputs";
    m.reason = Str(m.inputs, "reason");
    if (m.reason.empty()) m.reason = "inputs rejected it without a reason";
    if (!m.llm_error.empty()) m.reason += "; LLM repair: " + m.llm_error;
  }
}

Json Pipeline::Cluster() {
  auto t0 = Clock::now();
  std::vector<Json> records;
  for (const CurateModule& m : modules_) {
    if (m.status != "ok") continue;
    records.push_back({{"id", std::to_string(m.id)},
                       {"source", Str(m.extract, "source")},
                       {"ops", m.extract.value("ops", Json::array())},
                       {"family", m.Family()}});
  }
  Json out = {{"method", nullptr}, {"clusters", Json::array()}, {"noise", Json::array()}};
  if (records.empty()) return out;
  progress_->Log(fmt::format("cluster: {} executable module(s)", records.size()));
  std::string tail;
  Result<Json> r = tool_->Cluster(records, o_.embed, o_.min_cluster_size, 600 + records.size() * 0.5, &tail);
  stage_s_["cluster"] = Seconds(t0);
  if (!r.ok()) {
    progress_->Log("cluster failed: " + r.status().message());
    out["error"] = r.status().message();
    return out;
  }
  for (std::string line : {tail}) {
    if (!line.empty()) progress_->Log("cluster: " + line.substr(0, 500));
  }
  return *r;
}

Result<Json> Pipeline::Run() {
  Status s = Prepare();
  if (s.ok()) s = Extract();
  if (s.ok()) s = Number();
  if (s.ok()) s = Dedup();
  if (s.ok()) s = Inputs();
  if (s.ok()) s = Repair();
  if (!s.ok()) return s;
  Decide();
  Json clusters = Cluster();
  Json summary = Summary(clusters);
  s = WriteCurateOutputs(o_.out_dir, modules_, clusters, summary);
  if (!s.ok()) return s;
  std::error_code ec;
  fs::remove_all(o_.out_dir + "/tmp", ec);
  return summary;
}

Json Pipeline::Summary(const Json& clusters) const {
  int found = 0, self_contained = 0, exact = 0, near = 0, executable = 0, via_llm = 0;
  std::map<std::string, int> families, difficulty, rejected_at;
  for (const CurateModule& m : modules_) {
    bool is_module = !m.ClassName().empty();
    found += is_module ? 1 : 0;
    if (Str(m.extract, "status") == "ok" && is_module) ++self_contained;
    if (m.dup) (m.dup->exact ? exact : near) += 1;
    if (m.status == "rejected") ++rejected_at[m.stage];
    if (m.status != "ok") continue;
    ++executable;
    via_llm += m.inputs_via == "llm" ? 1 : 0;
    ++families[m.Family()];
    const Json& d = m.extract.value("difficulty", Json(nullptr));
    ++difficulty[d.is_number() ? std::to_string(d.get<int>()) : "unknown"];
  }
  Json stages = Json::object();
  for (const auto& [k, v] : stage_s_) stages[k] = std::round(v * 100) / 100;
  return {{"files_scanned", files_scanned_},
          {"modules_found", found},
          {"file_records_rejected", static_cast<int>(modules_.size()) - found},
          {"self_contained", self_contained},
          {"exact_duplicates", exact},
          {"near_duplicates", near},
          {"unique", self_contained - exact - near},
          {"executable", executable},
          {"executable_via_llm", via_llm},
          {"rejected_by_stage", rejected_at},
          {"families", families},
          {"family_count", families.size()},
          {"difficulty", difficulty},
          {"clusters", clusters["clusters"].size()},
          {"clustered", [&] {
             size_t n = 0;
             for (const Json& c : clusters["clusters"]) n += c.value("members", Json::array()).size();
             return n;
           }()},
          {"noise", clusters.value("noise", Json::array()).size()},
          {"cluster_method", clusters.value("method", Json(nullptr))},
          {"near_dup_threshold", o_.near_dup_threshold},
          {"jobs", o_.jobs},
          {"resumed", resumed_},
          {"stage_seconds", stages},
          {"wall_time_s", std::round(Seconds(start_) * 100) / 100}};
}

}  // namespace

std::string CurateModule::ClassName() const { return Str(extract, "class"); }

std::string CurateModule::Family() const {
  std::string f = Str(extract, "family");
  std::string out;
  for (char c : f) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out.empty() ? "other" : out;
}

Result<Json> RunCurate(CurateOptions options, Progress* progress) {
  if (options.out_dir.empty()) return Status::InvalidArgument("curate: -o OUT_DIR is required");
  if (options.sources.empty()) return Status::InvalidArgument("curate: no source directory given");
  if (options.jobs < 1 || options.extract_batch < 1 || options.inputs_batch < 1) {
    return Status::InvalidArgument("curate: --jobs and batch sizes must be >= 1");
  }
  Pipeline p(std::move(options), progress);
  return p.Run();
}

}  // namespace ks
