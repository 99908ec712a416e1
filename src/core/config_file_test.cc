#include "core/config_file.h"

#include <fstream>

#include <gtest/gtest.h>

namespace ks {
namespace {

TEST(ConfigFileTest, YamlScalarsGetTheirTypes) {
  Result<nlohmann::json> j = YamlToJson(
      "rounds: 40\ntemperature: 0.6\nresume: true\nmodel: qwen\nquoted: \"12\"\n"
      "llm:\n  - http://a/v1,m1,2\n  - http://b/v1,m2\n",
      "cfg.yaml");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ((*j)["rounds"], 40);
  EXPECT_DOUBLE_EQ((*j)["temperature"].get<double>(), 0.6);
  EXPECT_EQ((*j)["resume"], true);
  EXPECT_EQ((*j)["model"], "qwen");
  EXPECT_EQ((*j)["quoted"], "12");
  ASSERT_EQ((*j)["llm"].size(), 2u);
  EXPECT_EQ((*j)["llm"][1], "http://b/v1,m2");
}

TEST(ConfigFileTest, YamlSyntaxErrorNamesFileAndLine) {
  Result<nlohmann::json> j = YamlToJson("rounds: 4\nislands: [1, 2\n", "cfg.yaml");
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find("cfg.yaml: not valid YAML (line"), std::string::npos)
      << j.status().message();
}

TEST(ConfigFileTest, ExtensionPicksTheFormat) {
  std::string dir = ::testing::TempDir();
  std::ofstream(dir + "c.yml") << "rounds: 3\n";
  std::ofstream(dir + "c.json") << "{\"rounds\": 5}";
  std::ofstream(dir + "bad.json") << "rounds: 3\n";
  EXPECT_EQ((*ReadConfigFile(dir + "c.yml"))["rounds"], 3);
  EXPECT_EQ((*ReadConfigFile(dir + "c.json"))["rounds"], 5);
  EXPECT_FALSE(ReadConfigFile(dir + "bad.json").ok());
  EXPECT_FALSE(ReadConfigFile(dir + "missing.yaml").ok());
}

}  // namespace
}  // namespace ks
