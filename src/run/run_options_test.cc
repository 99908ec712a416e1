#include "run/run_options.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace ks {
namespace {

bool NoFlags(const std::string&) { return false; }

TEST(RunOptionsTest, ConfigRoundTripsEveryKey) {
  RunOptions o;
  o.rounds = 7;
  o.migration_interval = 3;
  o.exploitation = 0.5;
  o.tuner_ratio = 0.25;
  o.llms = {"http://a/v1,m1,2"};
  o.llm_limits.max_tokens = 4096;
  o.price_in = 0.15;
  o.price_out = 0.6;
  o.exchange_dir = "x";
  RunOptions back;
  ASSERT_TRUE(ApplyConfig(ConfigOf(o), NoFlags, "test", back).ok());
  EXPECT_EQ(ConfigOf(back), ConfigOf(o));
  EXPECT_EQ(back.migration_interval, 3);
  EXPECT_EQ(back.price_out, 0.6);
}

TEST(RunOptionsTest, FlagsWinOverConfigKeys) {
  RunOptions o;
  o.rounds = 3;  // as if given by --rounds 3
  nlohmann::json config = {{"rounds", 9}, {"islands", 4}};
  auto given = [](const std::string& flag) { return flag == "--rounds"; };
  ASSERT_TRUE(ApplyConfig(config, given, "c.yaml", o).ok());
  EXPECT_EQ(o.rounds, 3);
  EXPECT_EQ(o.islands, 4);
}

TEST(RunOptionsTest, UnknownKeyAndWrongTypeAreNamed) {
  RunOptions o;
  Status s = ApplyConfig({{"migration_intervall", 2}}, NoFlags, "c.yaml", o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("migration_intervall"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("c.yaml"), std::string::npos) << s.message();
  s = ApplyConfig({{"rounds", "many"}}, NoFlags, "c.yaml", o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("\"rounds\" has the wrong type"), std::string::npos) << s.message();
}

TEST(RunOptionsTest, ProposerIsChosenFromWhatIsGiven) {
  RunOptions llm;
  llm.llm_url = "http://h/v1";
  llm.model = "m";
  llm.llms = {"http://b/v1,m2,3"};
  Result<ProposerSpec> spec = ProposerSpecOf(llm);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(llm.proposer, "llm");
  ASSERT_EQ(spec->llms.size(), 2u);
  EXPECT_EQ(spec->llms[1].weight, 3);

  RunOptions files;
  files.exchange_dir = "/tmp/x";
  files.tuner_ratio = 0.5;
  spec = ProposerSpecOf(files);
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->kind, "files");
  EXPECT_EQ(spec->tuner_ratio, 0.5);

  RunOptions tuner;
  tuner.tuner_ratio = 0.5;
  spec = ProposerSpecOf(tuner);
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->kind, "tuner");
  EXPECT_EQ(spec->tuner_ratio, 0);
}

TEST(RunOptionsTest, IncompleteProposerSaysWhichFlag) {
  RunOptions files;
  files.proposer = "files";
  EXPECT_NE(ProposerSpecOf(files).status().message().find("--exchange-dir"), std::string::npos);
  RunOptions half;
  half.llm_url = "http://h/v1";
  EXPECT_NE(ProposerSpecOf(half).status().message().find("--model"), std::string::npos);
  RunOptions bad;
  bad.llms = {"http://h/v1"};
  EXPECT_NE(ProposerSpecOf(bad).status().message().find("URL,MODEL"), std::string::npos);
  RunOptions price;
  price.price_in = -1;
  EXPECT_NE(ProposerSpecOf(price).status().message().find("--price-in"), std::string::npos);
}

}  // namespace
}  // namespace ks
