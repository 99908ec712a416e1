#include "curate/dedup.h"

#include <gtest/gtest.h>

namespace ks {
namespace {

// A token stream of `n` tokens drawn from a vocabulary keyed by `salt`; `edit` changes one
// token every `edit` positions (0: none).
std::vector<std::string> Tokens(int n, const std::string& salt, int edit = 0) {
  std::vector<std::string> t;
  for (int i = 0; i < n; ++i) {
    std::string tok = salt + std::to_string((i * 7919) % 97);
    if (edit > 0 && i % edit == edit / 2) tok = "EDIT";
    t.push_back(tok);
  }
  return t;
}

TEST(DedupTest, ExactByAstHashNearByJaccardAndDistinctKept) {
  std::vector<DedupItem> items = {
      {4, "h-other", Tokens(200, "b")},        // unrelated: kept
      {1, "h-a", Tokens(200, "a")},            // representative
      {2, "h-a", Tokens(200, "renamed")},      // same AST hash (renamed identifiers): exact
      {3, "h-a-edit", Tokens(200, "a", 100)},  // two tokens changed: near (Jaccard ~0.9)
      {5, "h-a-heavy", Tokens(200, "a", 4)},   // every 4th token changed: far below 0.7
  };
  Result<DedupResult> r = Deduplicate(items, 0.7);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->exact, 1);
  EXPECT_EQ(r->near, 1);
  ASSERT_EQ(r->merged.size(), 2u);
  EXPECT_TRUE(r->merged.at(2).exact);
  EXPECT_EQ(r->merged.at(2).merged_into, 1);
  EXPECT_EQ(DescribeVerdict(r->merged.at(2)), "exact duplicate of 1");
  EXPECT_FALSE(r->merged.at(3).exact);
  EXPECT_EQ(r->merged.at(3).merged_into, 1);
  EXPECT_GT(r->merged.at(3).jaccard, 0.75);
  EXPECT_LT(r->merged.at(3).jaccard, 1.0);
  EXPECT_NE(DescribeVerdict(r->merged.at(3)).find("near-duplicate of 1 (Jaccard 0."),
            std::string::npos);
  EXPECT_EQ(r->merged.count(4), 0u);
  EXPECT_EQ(r->merged.count(5), 0u);
}

TEST(DedupTest, ThresholdDecidesAndResultIsDeterministic) {
  std::vector<DedupItem> items = {{1, "x", Tokens(300, "a")}, {2, "y", Tokens(300, "a", 20)}};
  Result<DedupResult> loose = Deduplicate(items, 0.5);
  Result<DedupResult> strict = Deduplicate(items, 0.99);
  ASSERT_TRUE(loose.ok() && strict.ok());
  ASSERT_EQ(loose->merged.size(), 1u);
  double j = loose->merged.at(2).jaccard;
  EXPECT_GT(j, 0.5);
  EXPECT_LT(j, 0.99);
  EXPECT_TRUE(strict->merged.empty());
  Result<DedupResult> again = Deduplicate(items, 0.5);
  EXPECT_EQ(again->merged.at(2).jaccard, j);
  // Just above and just below the measured estimate.
  EXPECT_EQ(Deduplicate(items, j)->merged.size(), 1u);
  EXPECT_TRUE(Deduplicate(items, j + 1e-9)->merged.empty());
}

TEST(DedupTest, ExactCopyOfANearDuplicateFollowsItToTheRepresentative) {
  std::vector<DedupItem> items = {
      {1, "a", Tokens(200, "a")}, {2, "b", Tokens(200, "a", 100)}, {3, "b", Tokens(200, "z")}};
  Result<DedupResult> r = Deduplicate(items, 0.7);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->merged.size(), 2u);
  EXPECT_EQ(r->merged.at(3).duplicate_of, 2);
  EXPECT_EQ(r->merged.at(3).merged_into, 1);
  EXPECT_NE(DescribeVerdict(r->merged.at(3)).find("exact duplicate of 2, itself a near-duplicate of 1"),
            std::string::npos);
}

TEST(DedupTest, BadThresholdIsRejected) {
  EXPECT_FALSE(Deduplicate({}, 0).ok());
  EXPECT_FALSE(Deduplicate({}, 1.5).ok());
  EXPECT_TRUE(Deduplicate({}, 1).ok());
}

}  // namespace
}  // namespace ks
