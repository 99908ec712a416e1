#include "curate/curate_tool.h"

#include <fmt/format.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "core/file.h"
#include "core/resources.h"
#include "core/subprocess.h"
#include "eval/feedback.h"
#include "sandbox/processes.h"

namespace ks {
namespace {

std::string EnvOr(const char* name, std::string fallback) {
  const char* v = getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : std::move(fallback);
}

std::string CommandText(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

}  // namespace

CurateTool::CurateTool(CurateToolOptions options) : options_(std::move(options)) {
  if (options_.command.empty()) options_.command = {options_.python, "-m", "kernelsmith_curate"};
  std::string path = options_.pythonpath;
  if (path.empty()) {
    Result<Resources> resources = FindResources();
    if (resources.ok()) path = resources->python_dir;  // else the interpreter's own packages
  }
  std::string inherited = EnvOr("PYTHONPATH", "");
  if (!inherited.empty()) path += (path.empty() ? "" : ":") + inherited;
  if (!path.empty()) env_["PYTHONPATH"] = path;
  env_["PYTHONUNBUFFERED"] = "1";
  env_["PYTHONDONTWRITEBYTECODE"] = "1";
}

Result<CurateToolOutput> CurateTool::Run(const std::vector<std::string>& args,
                                         const std::string& stdin_text, double deadline_s) const {
  auto start = std::chrono::steady_clock::now();
  std::string dir = options_.scratch_dir + "/call-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) {
    return Status::IOError("cannot create a directory under " + options_.scratch_dir +
                           " for the curate tool (is the output directory writable?)");
  }
  struct Remove {
    std::string path;
    ~Remove() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } remove{dir};
  const std::string stdin_path = dir + "/stdin";
  Status s = WriteFileAtomic(stdin_path, stdin_text);
  if (!s.ok()) return s;

  std::vector<std::string> argv = options_.command;
  argv.insert(argv.end(), args.begin(), args.end());
  // stdin comes from the file; the shell only redirects, then execs the argv as given.
  SubprocessOptions so;
  so.argv = {"/bin/sh", "-c", "exec <\"$KS_CURATE_STDIN\" && exec \"$@\"", "sh"};
  so.argv.insert(so.argv.end(), argv.begin(), argv.end());
  so.env = env_;
  so.env["KS_CURATE_STDIN"] = stdin_path;
  so.env["TMPDIR"] = dir;
  so.cwd = dir;
  std::unique_ptr<WorkerSandbox> sandbox;
  const bool sandboxed = options_.sandbox != nullptr && options_.sandbox->options.enabled;
  if (sandboxed) {
    Result<std::unique_ptr<WorkerSandbox>> sb = WorkerSandbox::Prepare(*options_.sandbox, dir);
    if (!sb.ok())
      return Status::IOError("cannot sandbox the curate tool: " + sb.status().message());
    sandbox = std::move(*sb);
    so.child_setup = sandbox.get();
  }
  Result<std::unique_ptr<Subprocess>> child = Subprocess::Spawn(so);
  if (!child.ok()) return child.status();
  uint64_t userns = 0;
  if (sandboxed && options_.sandbox->options.network_namespace) {
    userns = UserNamespaceInode((*child)->pid());
  }
  // Kills the child, its process group and whatever it left in its user namespace.
  auto kill_all = [&] {
    (*child)->KillAndReap();
    KillUserNamespace(userns);
  };
  const std::string what = CommandText(argv).substr(0, 200);
  std::string out, err;
  bool out_open = true, err_open = true;
  auto deadline = start + std::chrono::duration<double>(deadline_s);
  // The sandbox's watchdog, at most every 100 ms (a census reads /proc).
  auto next_watch = start;
  auto over_limit = [&]() -> std::string {
    auto now = std::chrono::steady_clock::now();
    if (!sandboxed || now < next_watch) return "";
    next_watch = now + std::chrono::milliseconds(100);
    return SandboxLimitExceeded(options_.sandbox->options, (*child)->pid(), userns, "curate tool");
  };
  while (out_open || err_open) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill_all();
      return Status::Timeout(fmt::format("curate tool ran past {:.0f} s: {}", deadline_s, what));
    }
    if (std::string over = over_limit(); !over.empty()) {
      kill_all();
      return Status::IOError(over + ": " + what);
    }
    pollfd fds[2] = {{(*child)->stdout_fd(), POLLIN, 0}, {(*child)->stderr_fd(), POLLIN, 0}};
    poll(fds, 2, 100);
    for (int which : {1, 2}) {
      bool& open = which == 1 ? out_open : err_open;
      if (!open) continue;
      Result<ReadOutcome> r =
          Subprocess::ReadAvailable((*child)->ParentFd(which), which == 1 ? &out : &err, 1 << 20);
      if (!r.ok() || r->eof) {
        (*child)->CloseParentFd(which);
        open = false;
      }
    }
    if (err.size() > (1u << 20)) err.erase(0, err.size() - (64u << 10));  // keep the tail
  }
  std::optional<ExitStatus> exit;
  while (!(exit = (*child)->WaitExitFor(std::chrono::milliseconds(100)))) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill_all();
      return Status::Timeout(fmt::format("curate tool did not exit in {:.0f} s: {}", deadline_s,
                                         what));
    }
    if (std::string over = over_limit(); !over.empty()) {
      kill_all();
      return Status::IOError(over + ": " + what);
    }
  }
  kill_all();  // nothing of a finished call outlives it
  CurateToolOutput output;
  output.stderr_tail = LastLines(err, 20);
  if (!exit->success()) {
    return Status::IOError(fmt::format("curate tool failed ({}): {}\n{}", exit->ToString(), what,
                                       output.stderr_tail));
  }
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object()) {
      output.records.push_back(std::move(j));
    } else {
      output.bad_lines.push_back(line.substr(0, 200));
    }
  }
  return output;
}

Status CurateTool::Probe() const {
  Result<CurateToolOutput> r = Run({"--help"}, "", 120);
  if (r.ok()) return Status::Ok();
  return Status::IOError(
      "cannot run the curate package (" + r.status().message() +
      ")\nIt lives in python/kernelsmith_curate of the kernelsmith checkout; install its "
      "requirements (pip install -r python/requirements.txt), or pass --python with an "
      "interpreter that has torch and scikit-learn.");
}

Result<CurateToolOutput> CurateTool::Extract(const std::string& root,
                                             const std::vector<std::string>& files,
                                             double deadline_s) const {
  std::vector<std::string> args = {"extract", "--root", root};
  args.insert(args.end(), files.begin(), files.end());
  return Run(args, "", deadline_s);
}

Result<CurateToolOutput> CurateTool::Inputs(const std::vector<nlohmann::json>& records,
                                            double timeout_s, uint64_t seed,
                                            double deadline_s) const {
  std::string text;
  for (const nlohmann::json& r : records) text += r.dump() + "\n";
  return Run({"inputs", "--timeout", fmt::format("{}", timeout_s), "--seed", std::to_string(seed)},
             text, deadline_s);
}

Result<nlohmann::json> CurateTool::Cluster(const std::vector<nlohmann::json>& records, bool embed,
                                           int min_cluster_size, double deadline_s,
                                           std::string* stderr_tail) const {
  std::string text;
  for (const nlohmann::json& r : records) text += r.dump() + "\n";
  std::vector<std::string> args = {"cluster"};
  if (embed) args.push_back("--embed");
  if (min_cluster_size > 0) {
    args.push_back("--min-cluster-size");
    args.push_back(std::to_string(min_cluster_size));
  }
  Result<CurateToolOutput> r = Run(args, text, deadline_s);
  if (!r.ok()) return r.status();
  if (stderr_tail != nullptr) *stderr_tail = r->stderr_tail;
  if (r->records.size() != 1 || !r->records[0].contains("clusters")) {
    return Status::Protocol(fmt::format(
        "curate tool `cluster` printed {} JSON object(s), expected one with \"clusters\"",
        r->records.size()));
  }
  return r->records[0];
}

}  // namespace ks
