#include "archive/program.h"

#include <cmath>
#include <limits>

namespace ks {
namespace {

nlohmann::json NumberToJson(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

Result<double> NumberFromJson(const nlohmann::json& j, const std::string& field) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  return Status::InvalidArgument("program field '" + field + "' must be a number, got " + j.dump());
}

}  // namespace

nlohmann::json ProgramToJson(const Program& program) {
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& [name, value] : program.metrics) metrics[name] = NumberToJson(value);
  return {
      {"id", program.id},
      {"parent_id", program.parent_id},
      {"code", program.code},
      {"island", program.island},
      {"generation", program.generation},
      {"fitness", NumberToJson(program.fitness)},
      {"correct", program.correct},
      {"speedup", program.speedup ? NumberToJson(*program.speedup) : nlohmann::json(nullptr)},
      {"metrics", metrics},
      {"proposer", program.proposer},
  };
}

Result<Program> ProgramFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::InvalidArgument("a program must be a JSON object");
  for (const char* required : {"id", "code"}) {
    if (!j.contains(required) || !j[required].is_string()) {
      return Status::InvalidArgument(std::string("program field '") + required +
                                     "' is missing or not a string");
    }
  }
  Program p;
  try {
    p.id = j["id"].get<std::string>();
    p.code = j["code"].get<std::string>();
    p.parent_id = j.value("parent_id", std::string());
    p.island = j.value("island", 0);
    p.generation = j.value("generation", 0);
    p.correct = j.value("correct", false);
    p.proposer = j.value("proposer", std::string());
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument("program '" + p.id + "': " + e.what());
  }
  if (j.contains("fitness")) {
    Result<double> f = NumberFromJson(j["fitness"], "fitness");
    if (!f.ok()) return f.status();
    p.fitness = *f;
  }
  if (j.contains("speedup") && !j["speedup"].is_null()) {
    Result<double> s = NumberFromJson(j["speedup"], "speedup");
    if (!s.ok()) return s.status();
    p.speedup = *s;
  }
  if (j.contains("metrics")) {
    if (!j["metrics"].is_object()) {
      return Status::InvalidArgument("program '" + p.id + "': 'metrics' must be an object");
    }
    for (const auto& [name, value] : j["metrics"].items()) {
      Result<double> v = NumberFromJson(value, "metrics." + name);
      if (!v.ok()) return v.status();
      p.metrics[name] = *v;
    }
  }
  return p;
}

}  // namespace ks
