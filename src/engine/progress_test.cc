#include "engine/progress.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace ks {
namespace {

std::string Contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string text;
  char buf[256];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
  return text;
}

TEST(ProgressTest, PlainStatusLinesAreThrottledEventsAreNot) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  {
    Progress progress(out, false, "", 3600);
    progress.Status("extract 1/3");
    progress.Status("extract 2/3");  // within the interval: not printed
    progress.Log("extract done");
    progress.Status("extract 2/3");  // unchanged: not printed
  }
  EXPECT_EQ(Contents(out), "extract 1/3\nextract done\n");
  std::fclose(out);
}

TEST(ProgressTest, EveryChangeWithoutAnIntervalAndOnATerminal) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  {
    Progress progress(out, false, "");
    ProgressState s;
    s.rounds = 2;
    progress.Update(s);
    s.round = 1;
    progress.Update(s);
  }
  EXPECT_EQ(Contents(out), "round 0/2  best -  evals 0\nround 1/2  best -  evals 0\n");
  std::fclose(out);

  std::FILE* tty = std::tmpfile();
  ASSERT_NE(tty, nullptr);
  {
    Progress progress(tty, true, "", 3600);
    progress.Status("a");
    progress.Status("b");  // a terminal's line is redrawn on every change
    progress.Log("event");
  }
  EXPECT_EQ(Contents(tty), "\r\033[Ka\r\033[Kb\r\033[Kevent\nb\n");
  std::fclose(tty);
}

}  // namespace
}  // namespace ks
