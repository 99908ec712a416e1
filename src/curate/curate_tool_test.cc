#include "curate/curate_tool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "sandbox/sandbox.h"
#include "store/test_util.h"

namespace ks {
namespace {

namespace fs = std::filesystem;

// A tool that is a shell script: `args` of Run go to it as $1...
CurateTool ShellTool(const std::string& scratch, const std::string& script,
                     std::shared_ptr<const SandboxPlan> sandbox) {
  CurateToolOptions o;
  o.command = {"/bin/sh", "-c", script, "sh"};
  o.scratch_dir = scratch;
  o.sandbox = std::move(sandbox);
  return CurateTool(o);
}

std::shared_ptr<const SandboxPlan> FullSandbox() {
  SandboxPlan plan = PlanSandbox(SandboxOptions{});
  if (!plan.options.network_namespace || !plan.options.landlock) return nullptr;
  return std::make_shared<SandboxPlan>(plan);
}

// Writes in $TMPDIR and in the directory $1, and says where it ran.
constexpr const char* kWriter =
    "echo in > \"$TMPDIR/mine\" && echo \"{\\\"tmp\\\": \\\"$TMPDIR\\\", \\\"cwd\\\": "
    "\\\"$(pwd)\\\"}\"; echo out > \"$1/escaped\" 2>/dev/null; exit 0";

TEST(CurateToolSandboxTest, CallsWriteOnlyTheirOwnScratchDirectory) {
  std::shared_ptr<const SandboxPlan> plan = FullSandbox();
  if (plan == nullptr) GTEST_SKIP() << "no user namespace or Landlock on this machine";
  store_testing::ScratchDir dir;
  fs::create_directories(dir.File("scratch"));
  fs::create_directories(dir.File("outside"));
  CurateTool tool = ShellTool(dir.File("scratch"), kWriter, plan);
  Result<CurateToolOutput> out = tool.Run({dir.File("outside")}, "", 30);
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_EQ(out->records.size(), 1u);
  const std::string tmp = out->records[0]["tmp"];
  EXPECT_EQ(out->records[0]["cwd"], tmp);
  EXPECT_EQ(fs::path(tmp).parent_path(), fs::path(dir.File("scratch")));
  EXPECT_FALSE(fs::exists(dir.File("outside/escaped")));
  EXPECT_FALSE(fs::exists(tmp));  // the call's directory goes with the call
}

TEST(CurateToolSandboxTest, WithoutTheSandboxTheSameWriteLands) {
  store_testing::ScratchDir dir;
  fs::create_directories(dir.File("scratch"));
  fs::create_directories(dir.File("outside"));
  CurateTool tool = ShellTool(dir.File("scratch"), kWriter, nullptr);
  Result<CurateToolOutput> out = tool.Run({dir.File("outside")}, "", 30);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_TRUE(fs::exists(dir.File("outside/escaped")));
}

TEST(CurateToolSandboxTest, NoNetworkInside) {
  std::shared_ptr<const SandboxPlan> plan = FullSandbox();
  if (plan == nullptr) GTEST_SKIP() << "no user namespace or Landlock on this machine";
  store_testing::ScratchDir dir;
  fs::create_directories(dir.File("scratch"));
  // Only a loopback interface that is down: /proc/net/dev lists lo and nothing else.
  CurateTool tool = ShellTool(
      dir.File("scratch"),
      "n=$(tail -n +3 /proc/net/dev | grep -vc '^ *lo:'); echo \"{\\\"others\\\": $n}\"", plan);
  Result<CurateToolOutput> out = tool.Run({}, "", 30);
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_EQ(out->records.size(), 1u);
  EXPECT_EQ(out->records[0]["others"], 0);
}

TEST(CurateToolSandboxTest, AForkBombIsKilledByTheWatchdog) {
  std::shared_ptr<const SandboxPlan> plan = FullSandbox();
  if (plan == nullptr) GTEST_SKIP() << "no user namespace or Landlock on this machine";
  store_testing::ScratchDir dir;
  fs::create_directories(dir.File("scratch"));
  // 300 sleepers, each in a process group of its own (as curate's module children are).
  CurateTool tool =
      ShellTool(dir.File("scratch"),
                "i=0; while [ $i -lt 300 ]; do setsid sleep 600 & i=$((i+1)); done; wait", plan);
  auto t0 = std::chrono::steady_clock::now();
  Result<CurateToolOutput> out = tool.Run({}, "", 120);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("over the sandbox's limit of 128"), std::string::npos)
      << out.status().message();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(60));

  // The same after closing stdout and stderr (the call then only waits for the exit).
  CurateTool closed = ShellTool(dir.File("scratch"),
                                "exec >/dev/null 2>&1; i=0; while [ $i -lt 300 ]; do "
                                "setsid sleep 600 & i=$((i+1)); done; wait",
                                plan);
  out = closed.Run({}, "", 120);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("over the sandbox's limit of 128"), std::string::npos)
      << out.status().message();
}

}  // namespace
}  // namespace ks
