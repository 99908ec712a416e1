#include "curate/minhash.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ks {
namespace {

std::vector<uint64_t> Range(uint64_t from, uint64_t to) {
  std::vector<uint64_t> v;
  for (uint64_t i = from; i < to; ++i) v.push_back(i * 0x9e3779b97f4a7c15ULL + 7);
  return v;
}

MinHasher Hasher(MinHashOptions o = {}) {
  Result<MinHasher> h = MinHasher::Create(o);
  EXPECT_TRUE(h.ok()) << h.status().message();
  return *h;
}

TEST(MinHashTest, EstimateTracksKnownJaccard) {
  MinHashOptions o;
  o.num_hashes = 256;
  o.bands = 64;
  MinHasher h = Hasher(o);
  // |A|=|B|=1000 with overlaps 0, 200, 500 and 900 elements.
  for (uint64_t overlap : {0u, 200u, 500u, 900u}) {
    std::vector<uint64_t> a = Range(0, 1000), b = Range(1000 - overlap, 2000 - overlap);
    double exact = ExactJaccard(a, b);
    EXPECT_NEAR(exact, static_cast<double>(overlap) / static_cast<double>(2000 - overlap), 1e-12);
    double est = MinHasher::Estimate(h.SignatureOfHashes(a), h.SignatureOfHashes(b));
    // 3.5 standard errors of a 256-slot estimate.
    double se = std::sqrt(std::max(exact * (1 - exact), 0.01) / 256.0);
    EXPECT_NEAR(est, exact, 3.5 * se) << "overlap " << overlap;
  }
  EXPECT_EQ(MinHasher::Estimate(h.SignatureOfHashes(Range(0, 50)), h.SignatureOfHashes(Range(0, 50))),
            1.0);
}

// Over many pairs of known Jaccard (0 to 1 in steps of 0.02), the estimate's errors average
// what a 128-slot estimate allows, and banding finds pairs at the rate of its S-curve.
TEST(MinHashTest, ManyPairsOfKnownJaccardAndTheBandingCurve) {
  MinHasher h = Hasher();  // 128 slots, 32 bands x 4 rows
  double abs_err = 0;
  int pairs = 0;
  int found_at_03 = 0, tried_at_03 = 0;
  for (uint64_t overlap = 0; overlap <= 1000; overlap += 20) {
    uint64_t base = overlap * 100000;  // disjoint universes per pair
    std::vector<uint64_t> a = Range(base, base + 1000);
    std::vector<uint64_t> b = Range(base + 1000 - overlap, base + 2000 - overlap);
    double exact = static_cast<double>(overlap) / static_cast<double>(2000 - overlap);
    ASSERT_NEAR(ExactJaccard(a, b), exact, 1e-12);
    abs_err +=
        std::fabs(MinHasher::Estimate(h.SignatureOfHashes(a), h.SignatureOfHashes(b)) - exact);
    ++pairs;
  }
  // Mean absolute error of a binomial share over 128 slots is at most about 0.8 * 0.044.
  EXPECT_LT(abs_err / pairs, 0.04);
  // Jaccard 0.3 (overlap 462 of 1000 + 1000): P(share a band) = 1 - (1 - 0.3^4)^32 = 0.229.
  for (uint64_t i = 0; i < 400; ++i) {
    uint64_t base = 1000000000ULL + i * 100000;
    LshIndex index(&h);
    index.Insert(1, h.SignatureOfHashes(Range(base, base + 1000)));
    std::vector<uint64_t> b = Range(base + 538, base + 1538);
    found_at_03 += index.Candidates(h.SignatureOfHashes(b)).size();
    ++tried_at_03;
  }
  const double p = 1 - std::pow(1 - std::pow(462.0 / 1538.0, 4), 32);
  const double se = std::sqrt(p * (1 - p) / tried_at_03);
  EXPECT_NEAR(static_cast<double>(found_at_03) / tried_at_03, p, 4 * se);
}

TEST(MinHashTest, TokenShinglesOfRenamedCodeAreEqualAndOneEditIsNear) {
  std::vector<std::string> a;
  for (int i = 0; i < 100; ++i) a.push_back(i % 7 == 0 ? "ID" : "tok" + std::to_string(i));
  std::vector<std::string> b = a;
  b[50] = "NUM";  // one token changed: 5 of 96 shingles differ on each side
  EXPECT_EQ(ExactJaccard(ShingleHashes(a, 5), ShingleHashes(a, 5)), 1.0);
  EXPECT_NEAR(ExactJaccard(ShingleHashes(a, 5), ShingleHashes(b, 5)), 91.0 / 101.0, 1e-12);
  EXPECT_EQ(ShingleHashes(a, 5).size(), 96u);
  EXPECT_EQ(ShingleHashes({"x", "y"}, 5).size(), 1u);  // shorter than a shingle: one shingle
  EXPECT_TRUE(ShingleHashes({}, 5).empty());
  // Shingles of ["ab","c"] and ["a","bc"] differ: tokens are separated.
  EXPECT_NE(ShingleHashes({"ab", "c"}, 2), ShingleHashes({"a", "bc"}, 2));
}

TEST(MinHashTest, BandingFindsSimilarPairsAndNotDissimilarOnes) {
  MinHasher h = Hasher();  // 32 bands x 4 rows: S-curve midpoint about 0.42
  LshIndex index(&h);
  std::vector<uint64_t> base = Range(0, 1000);
  index.Insert(1, h.SignatureOfHashes(base));
  index.Insert(2, h.SignatureOfHashes(Range(5000, 6000)));  // unrelated
  // Jaccard 0.82 (overlap 900): found; Jaccard 0.05 (overlap 100): not.
  std::vector<int64_t> near = index.Candidates(h.SignatureOfHashes(Range(100, 1100)));
  EXPECT_EQ(near, (std::vector<int64_t>{1}));
  std::vector<int64_t> far = index.Candidates(h.SignatureOfHashes(Range(900, 1900)));
  EXPECT_TRUE(far.empty());
  // Identical sets always collide, and candidates come back in insertion order, once each.
  index.Insert(3, h.SignatureOfHashes(base));
  EXPECT_EQ(index.Candidates(h.SignatureOfHashes(base)), (std::vector<int64_t>{1, 3}));
}

TEST(MinHashTest, DeterministicForASeedAndDifferentAcrossSeeds) {
  std::vector<std::string> tokens = {"class", "ID", "(", "ID", ".", "Module", ")", ":", "def"};
  MinHasher a = Hasher(), b = Hasher();
  EXPECT_EQ(a.Signature(tokens), b.Signature(tokens));
  EXPECT_EQ(a.BandKeys(a.Signature(tokens)), b.BandKeys(b.Signature(tokens)));
  MinHashOptions other;
  other.seed = 1;
  EXPECT_NE(Hasher(other).Signature(tokens), a.Signature(tokens));
  EXPECT_EQ(ShingleHashes({"a"}, 5), ShingleHashes({"a"}, 5));
  EXPECT_NE(ShingleHashes({"a"}, 5), ShingleHashes({"b"}, 5));
}

TEST(MinHashTest, RejectsInconsistentBanding) {
  MinHashOptions o;
  o.bands = 10;
  Result<MinHasher> h = MinHasher::Create(o);
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("bands * rows"), std::string::npos);
  o = {};
  o.shingle = 0;
  EXPECT_FALSE(MinHasher::Create(o).ok());
}

}  // namespace
}  // namespace ks
