#include "eval/tail_buffer.h"

#include <gtest/gtest.h>

#include "eval/gpu_lease.h"

namespace ks {
namespace {

TEST(TailBufferTest, KeepsTheLastBytesWithinCapacity) {
  TailBuffer t(8);
  t.Append("abc");
  EXPECT_EQ(t.Tail(100), "abc");
  for (int i = 0; i < 1000; ++i) t.Append("0123456789");
  t.Append("XYZ");
  EXPECT_EQ(t.total(), 3u + 10000u + 3u);
  EXPECT_EQ(t.Tail(100), "56789XYZ");
  EXPECT_EQ(t.Tail(3), "XYZ");
  t.Append(std::string(50, 'q'));
  EXPECT_EQ(t.Tail(100), "qqqqqqqq");
}

TEST(TailBufferTest, TailSinceMarkOnlyCoversNewOutput) {
  TailBuffer t(64);
  t.Append("old output\n");
  uint64_t mark = t.total();
  EXPECT_EQ(t.TailSince(mark, 100), "");
  t.Append("new\n");
  EXPECT_EQ(t.TailSince(mark, 100), "new\n");
  EXPECT_EQ(t.TailSince(mark, 2), "w\n");
}

TEST(SanitizeUtf8Test, RepairsCutAndInvalidSequences) {
  EXPECT_EQ(SanitizeUtf8("plain"), "plain");
  EXPECT_EQ(SanitizeUtf8("\xC3\xA9t\xC3\xA9"), "\xC3\xA9t\xC3\xA9");  // "été"
  EXPECT_EQ(SanitizeUtf8("\xA9t\xC3"), "t\xEF\xBF\xBD");              // cut both ends
  EXPECT_EQ(SanitizeUtf8("a\xFF"
                         "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(SanitizeUtf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(SanitizeUtf8("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");                  // emoji
}

TEST(GpuLeaseTest, GrantsInArrivalOrderAndReleases) {
  GpuLease lease;
  GpuLease::Ticket a = lease.Enqueue();
  GpuLease::Ticket b = lease.Enqueue();
  GpuLease::Ticket c = lease.Enqueue();
  EXPECT_FALSE(lease.TryAcquire(b));  // a is first in line
  EXPECT_TRUE(lease.TryAcquire(a));
  EXPECT_TRUE(lease.TryAcquire(a));  // idempotent for the holder
  EXPECT_FALSE(lease.TryAcquire(b));
  lease.Release(b);  // b gives up while waiting
  lease.Release(a);
  EXPECT_FALSE(lease.held());
  EXPECT_TRUE(lease.TryAcquire(c));
  lease.Release(c);
  lease.Release(c);  // harmless
  GpuLease::Ticket d = lease.Enqueue();
  EXPECT_TRUE(lease.TryAcquire(d));
  EXPECT_TRUE(lease.held());
}

}  // namespace
}  // namespace ks
