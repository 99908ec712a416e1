#include "cli/evolve_setup.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "cli/backend_choice.h"
#include "core/file.h"

namespace ks {

int EvolveUsageError(const std::string& message) {
  fmt::print(stderr, "kernelsmith evolve: error: {}\n", message);
  return 2;
}

Result<nlohmann::json> ReadJsonFile(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return Status::InvalidArgument(path + ": not valid JSON");
  return j;
}

std::string StampedRunDir(const std::string& name) {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
  return fmt::format("runs/{}-{}", name, stamp);
}

std::string DefaultRunDir(const std::string& problem_path) {
  return StampedRunDir(std::filesystem::path(problem_path).stem().string());
}

std::string HardwareOf(const nlohmann::json& hello) {
  const nlohmann::json device = hello.value("device", nlohmann::json::object());
  if (!device.is_object()) return "";
  std::string name = device.value("name", std::string());
  if (name.empty()) return "";
  if (device.contains("cc") && device["cc"].is_string()) {
    std::string cc = device["cc"].get<std::string>();
    cc.erase(std::remove(cc.begin(), cc.end(), '.'), cc.end());
    return name + " (sm_" + cc + ")";
  }
  if (device.contains("cores") && device["cores"].is_number()) {
    return fmt::format("{} ({} cores)", name, device["cores"].get<int>());
  }
  return name;
}

}  // namespace ks
