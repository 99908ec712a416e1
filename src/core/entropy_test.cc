#include "core/entropy.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>

#include "core/file.h"

namespace ks {
namespace {

TEST(EntropyTest, RandomHexHasTheAskedLengthAndDiffersBetweenCalls) {
  std::set<std::string> seen;
  for (int i = 0; i < 16; ++i) {
    Result<std::string> h = RandomHex(8);
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    EXPECT_EQ(h->size(), 16u);
    EXPECT_EQ(h->find_first_not_of("0123456789abcdef"), std::string::npos) << *h;
    seen.insert(*h);
  }
  EXPECT_EQ(seen.size(), 16u);  // 64-bit draws: a repeat means the source is not random
  Result<std::string> empty = RandomHex(0);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, "");
}

TEST(EntropyTest, ReadEntropyFillsTheWholeBuffer) {
  std::string buf(1 << 16, '\0');
  ASSERT_TRUE(ReadEntropy(buf.data(), buf.size()).ok());
  // 64 zero bytes at either end of random data happen with probability 2^-512.
  EXPECT_NE(buf.substr(0, 64), std::string(64, '\0'));
  EXPECT_NE(buf.substr(buf.size() - 64), std::string(64, '\0'));
}

TEST(EntropyTest, WrappedArc4randomDrawsFromTheKernel) {
  std::set<uint32_t> seen;
  for (int i = 0; i < 8; ++i) seen.insert(__wrap_arc4random());
  EXPECT_GT(seen.size(), 1u);  // 8 equal 32-bit draws: not random
}

TEST(EntropyTest, FallbackFileReadsAndSaysWhatFailed) {
  std::array<unsigned char, 32> out{};
  ASSERT_TRUE(ReadEntropyFromFileForTest("/dev/urandom", out.data(), out.size()).ok());

  Status missing = ReadEntropyFromFileForTest("/nonexistent/urandom", out.data(), out.size());
  EXPECT_EQ(missing.code(), Status::Code::kIOError);
  EXPECT_NE(missing.message().find("/nonexistent/urandom: cannot open"), std::string::npos)
      << missing.message();

  std::string path = ::testing::TempDir() + "/entropy_short";
  ASSERT_TRUE(WriteFileAtomic(path, "abc").ok());
  Status shrt = ReadEntropyFromFileForTest(path, out.data(), out.size());
  EXPECT_EQ(shrt.code(), Status::Code::kIOError);
  EXPECT_NE(shrt.message().find("end of file after 3 of 32 bytes"), std::string::npos)
      << shrt.message();
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ks
