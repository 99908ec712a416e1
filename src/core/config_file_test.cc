#include "core/config_file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

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

TEST(ConfigFileTest, YamlErrorShowsLineColumnAndText) {
  Result<nlohmann::json> j = YamlToJson("rounds: 4\nbackend: cpu\nislands: [1, 2\n", "c.yaml");
  ASSERT_FALSE(j.ok());
  const std::string& m = j.status().message();
  EXPECT_NE(m.find("c.yaml: not valid YAML (line 4, column 1)"), std::string::npos) << m;
  Result<nlohmann::json> k = YamlToJson("rounds: 4\n  islands: 2\n", "d.yaml");
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find("(line 2, column 10)"), std::string::npos)
      << k.status().message();
  EXPECT_NE(k.status().message().find("`islands: 2`; fix line 2"), std::string::npos)
      << k.status().message();
}

TEST(ConfigFileTest, JsonErrorShowsLineAndColumn) {
  std::string dir = ::testing::TempDir();
  std::ofstream(dir + "broken.json") << "{\n  \"rounds\": 3,\n  \"islands\" 2\n}\n";
  Result<nlohmann::json> j = ReadConfigFile(dir + "broken.json");
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find("broken.json: not valid JSON (line 3, column 13): "
                                      "`\"islands\" 2`; fix line 3"),
            std::string::npos)
      << j.status().message();
}

TEST(ConfigFileTest, UnknownKeysAreNamedWithTheValidOnes) {
  std::vector<std::string> known = {"rounds", "islands", "backend"};
  EXPECT_TRUE(CheckConfigKeys(nlohmann::json{{"rounds", 3}}, known, "c.yaml").ok());
  Status typo = CheckConfigKeys(nlohmann::json{{"round", 3}}, known, "c.yaml");
  EXPECT_EQ(typo.message(),
            "c.yaml: unknown key \"round\" (did you mean \"rounds\"?); valid keys: rounds, "
            "islands, backend");
  Status far = CheckConfigKeys(nlohmann::json{{"temperature", 1}}, known, "c.yaml");
  EXPECT_EQ(far.message(),
            "c.yaml: unknown key \"temperature\"; valid keys: rounds, islands, backend");
  EXPECT_FALSE(CheckConfigKeys(nlohmann::json::array(), known, "c.yaml").ok());
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
