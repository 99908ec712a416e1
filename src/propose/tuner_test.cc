#include "propose/tuner.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "propose/test_programs.h"

namespace ks {
namespace {

using ::ks::testing::kSoftmaxSeed;

constexpr std::string_view kAnnotated = R"PY(import triton
# EVOLVE-BLOCK-START
# ks:tune BLOCK=[512, 128, 256], num_warps=[2, 4]
BLOCK = 256  # ks:tune ROWS=[1, 3, 5]
ROWS: tl.constexpr = 3
num_warps = 4
num_stages = 3
s = "BLOCK_SIZE = 64"
# BLOCK_M = 64
kernel[grid](x, BLOCK_K=32,
             GROUP_SIZE_M=8, dim=1)
# EVOLVE-BLOCK-END
num_warps = 4
)PY";

std::map<std::string, int64_t> Values(std::string_view code) {
  std::map<std::string, int64_t> out;
  for (const TunableParam& p : FindTunables(code)) out[p.key] = p.value;
  return out;
}

std::vector<int64_t> Pow2(int64_t lo, int64_t hi) {
  std::vector<int64_t> out;
  for (int64_t v = lo; v <= hi; v *= 2) out.push_back(v);
  return out;
}

TEST(TunerTest, FindsExplicitAndImplicitConstantsInTheBlockOnly) {
  Result<std::vector<TunableParam>> params = ScanTunables(kAnnotated);
  ASSERT_TRUE(params.ok()) << params.status().ToString();
  ASSERT_EQ(params->size(), 6u);
  const auto& p = *params;
  EXPECT_EQ(p[0].name, "BLOCK");
  EXPECT_EQ(p[0].value, 256);
  EXPECT_EQ(p[0].line, 4);
  EXPECT_TRUE(p[0].explicit_range);
  EXPECT_EQ(p[0].choices, (std::vector<int64_t>{128, 256, 512}));
  EXPECT_EQ(p[1].name, "ROWS");
  EXPECT_EQ(p[1].choices, (std::vector<int64_t>{1, 3, 5}));
  EXPECT_EQ(p[2].name, "num_warps");
  EXPECT_EQ(p[2].choices, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(p[3].name, "num_stages");
  EXPECT_FALSE(p[3].explicit_range);
  EXPECT_EQ(p[3].choices, (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(p[4].name, "BLOCK_K");
  EXPECT_EQ(p[4].choices, Pow2(16, 256));
  EXPECT_EQ(p[5].name, "GROUP_SIZE_M");
  EXPECT_EQ(p[5].value, 8);
  EXPECT_EQ(p[5].line, 11);
  EXPECT_EQ(p[5].choices, Pow2(1, 32));
  EXPECT_EQ(kAnnotated.substr(p[5].offset, p[5].length), "8");
}

TEST(TunerTest, SoftmaxSeedImplicitRanges) {
  std::vector<TunableParam> params = FindTunables(kSoftmaxSeed);
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params[0].key, "BLOCK_SIZE");
  EXPECT_EQ(params[0].value, 16384);
  std::vector<int64_t> block = Pow2(16, 8192);
  block.push_back(16384);  // the current value stays a choice
  EXPECT_EQ(params[0].choices, block);
  EXPECT_EQ(params[1].key, "num_warps");
  EXPECT_EQ(params[1].line, 26);
  EXPECT_EQ(params[1].choices, Pow2(1, 32));
}

TEST(TunerTest, MutationsStayInRangeChangeOneOrTwoAndDescribeThemselves) {
  const std::vector<TunableParam> before = FindTunables(kAnnotated);
  std::set<size_t> change_counts;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    std::mt19937_64 rng(seed);
    std::string description;
    Result<std::string> child = Mutate(kAnnotated, rng, 2, &description);
    ASSERT_TRUE(child.ok()) << child.status().ToString();
    const std::vector<TunableParam> after = FindTunables(*child);
    ASSERT_EQ(after.size(), before.size());
    std::string expected;
    size_t changed = 0;
    for (size_t i = 0; i < before.size(); ++i) {
      const auto& c = before[i].choices;
      EXPECT_TRUE(std::find(c.begin(), c.end(), after[i].value) != c.end())
          << before[i].key << "=" << after[i].value << " (seed " << seed << ")";
      if (after[i].value == before[i].value) continue;
      ++changed;
      if (!expected.empty()) expected += ", ";
      expected += before[i].key + " " + std::to_string(before[i].value) + "\u2192" +
                  std::to_string(after[i].value);
    }
    EXPECT_GE(changed, 1u);
    EXPECT_LE(changed, 2u);
    change_counts.insert(changed);
    EXPECT_EQ(description, expected);
    // Only the literals change: the rest of the program is untouched.
    EXPECT_NE(child->find("s = \"BLOCK_SIZE = 64\"\n# BLOCK_M = 64\n"), std::string::npos);
    EXPECT_TRUE(child->ends_with("# EVOLVE-BLOCK-END\nnum_warps = 4\n"));
  }
  EXPECT_EQ(change_counts, (std::set<size_t>{1, 2}));
}

TEST(TunerTest, MaxChangesOneChangesExactlyOne) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    std::mt19937_64 rng(seed);
    Result<std::string> child = Mutate(kSoftmaxSeed, rng, 1);
    ASSERT_TRUE(child.ok());
    auto a = Values(kSoftmaxSeed), b = Values(*child);
    int changed = (a["BLOCK_SIZE"] != b["BLOCK_SIZE"]) + (a["num_warps"] != b["num_warps"]);
    EXPECT_EQ(changed, 1);
  }
}

TEST(TunerTest, DeterministicForASeed) {
  std::mt19937_64 r1(42), r2(42);
  std::string d1, d2;
  Result<std::string> c1 = Mutate(kSoftmaxSeed, r1, 2, &d1);
  Result<std::string> c2 = Mutate(kSoftmaxSeed, r2, 2, &d2);
  ASSERT_TRUE(c1.ok() && c2.ok());
  EXPECT_EQ(*c1, *c2);
  EXPECT_EQ(d1, d2);
  std::set<std::string> children;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    std::mt19937_64 rng(seed);
    children.insert(*Mutate(kSoftmaxSeed, rng));
  }
  EXPECT_GE(children.size(), 10u);
}

TEST(TunerTest, NeverReturnsTheInputUnchanged) {
  // A has a single allowed value (its current one): every mutation must change num_warps.
  constexpr std::string_view kCode =
      "# EVOLVE-BLOCK-START\nA = 64  # ks:tune A=[64]\nnum_warps = 4\n# EVOLVE-BLOCK-END\n";
  for (uint64_t seed = 0; seed < 100; ++seed) {
    std::mt19937_64 rng(seed);
    Result<std::string> child = Mutate(kCode, rng, 2);
    ASSERT_TRUE(child.ok()) << child.status().ToString();
    EXPECT_NE(*child, kCode);
    EXPECT_EQ(Values(*child)["A"], 64);
    EXPECT_NE(Values(*child)["num_warps"], 4);
  }
}

TEST(TunerTest, ErrorsSayWhatToDo) {
  std::mt19937_64 rng(1);
  EXPECT_EQ(
      Mutate("# EVOLVE-BLOCK-START\nx = 1\ny = f(dim=2)\n# EVOLVE-BLOCK-END\nnum_warps = 4\n", rng)
          .status()
          .message(),
      "no tunable constants in the EVOLVE-BLOCK (add `# ks:tune NAME=[...]` comments)");
  EXPECT_EQ(Mutate("# EVOLVE-BLOCK-START\nA = 1  # ks:tune A=[1]\n# EVOLVE-BLOCK-END\n", rng)
                .status()
                .message(),
            "the tunable constants in the EVOLVE-BLOCK have no other values to try (widen their "
            "`# ks:tune` lists)");
  EXPECT_EQ(Mutate("# EVOLVE-BLOCK-START\nA = 1\n# ks:tune A=[1, 2\n# EVOLVE-BLOCK-END\n", rng)
                .status()
                .message(),
            "malformed `# ks:tune` comment on line 3: expected NAME=[v1, v2, ...]");
  EXPECT_EQ(Mutate("# EVOLVE-BLOCK-START\n# ks:tune B=[1, 2]\nA = 1\n# EVOLVE-BLOCK-END\n", rng)
                .status()
                .message(),
            "`# ks:tune B=[...]` on line 2 names a constant the EVOLVE-BLOCK never sets "
            "(expected `B = <int>` or `B=<int>`)");
  EXPECT_FALSE(Mutate("num_warps = 4\n", rng).ok());
  EXPECT_TRUE(FindTunables("num_warps = 4\n").empty());
}

TEST(TunerTest, RepeatedNamesAreKeyedByLine) {
  constexpr std::string_view kCode =
      "# EVOLVE-BLOCK-START\nk1[g](x, num_warps=4)\nk2[g](y, num_warps=8)\n"
      "self.BLOCK_SIZE = 64\n# EVOLVE-BLOCK-END\n";
  std::vector<TunableParam> params = FindTunables(kCode);
  ASSERT_EQ(params.size(), 3u);
  EXPECT_EQ(params[0].key, "num_warps@2");
  EXPECT_EQ(params[1].key, "num_warps@3");
  EXPECT_EQ(params[2].key, "BLOCK_SIZE");
  EXPECT_EQ(params[2].value, 64);
}

constexpr std::string_view kParentA =
    "# EVOLVE-BLOCK-START\nBLOCK = 128\nnum_stages = 2\nk[g](x, num_warps=4, VEC=4)\n"
    "# EVOLVE-BLOCK-END\n";
constexpr std::string_view kParentB =
    "# EVOLVE-BLOCK-START\nBLOCK = 512\nnum_stages = 2\nk[g](x, num_warps=8, VEC=1)\n"
    "# EVOLVE-BLOCK-END\n";

TEST(TunerTest, CrossoverTakesEachValueFromAParentAndMakesANewProgram) {
  const auto a = Values(kParentA), b = Values(kParentB);
  std::set<std::string> children;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    std::mt19937_64 rng(seed);
    std::string description;
    Result<std::string> child = Crossover(kParentA, kParentB, rng, &description);
    ASSERT_TRUE(child.ok()) << child.status().ToString();
    EXPECT_NE(*child, kParentA);
    EXPECT_NE(*child, kParentB);
    const auto c = Values(*child);
    for (const auto& [key, value] : c) {
      EXPECT_TRUE(value == a.at(key) || value == b.at(key)) << key << "=" << value;
    }
    EXPECT_EQ(c.at("num_stages"), 2);
    EXPECT_FALSE(description.empty());
    children.insert(*child);
  }
  EXPECT_EQ(children.size(), 6u);  // every proper, non-empty subset of the 3 differing values

  std::mt19937_64 r1(7), r2(7);
  EXPECT_EQ(*Crossover(kParentA, kParentB, r1), *Crossover(kParentA, kParentB, r2));
}

TEST(TunerTest, CrossoverEdgeCases) {
  std::mt19937_64 rng(3);
  std::string description;
  constexpr std::string_view kOneDiff =
      "# EVOLVE-BLOCK-START\nBLOCK = 128\nnum_stages = 4\nk[g](x, num_warps=4, VEC=4)\n"
      "# EVOLVE-BLOCK-END\n";
  Result<std::string> child = Crossover(kParentA, kOneDiff, rng, &description);
  ASSERT_TRUE(child.ok());
  EXPECT_EQ(Values(*child).at("num_stages"), 4);
  EXPECT_EQ(description, "num_stages 2\u21924");
  EXPECT_EQ(Crossover(kParentA, kParentA, rng).status().message(),
            "the parents agree on every tunable constant");
  EXPECT_EQ(Crossover(kParentA, "# EVOLVE-BLOCK-START\nUNROLL = 2\n# EVOLVE-BLOCK-END\n", rng)
                .status()
                .message(),
            "the parents share no tunable constants");
  EXPECT_EQ(Crossover(kParentA, "x = 1\n", rng).status().message(),
            "parent B: no `# EVOLVE-BLOCK-START` / `# EVOLVE-BLOCK-END` markers found; mark the "
            "editable region with them");
}

}  // namespace
}  // namespace ks
