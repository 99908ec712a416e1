// MakeCommandClient (llm_proposer.h): a user command as a completion source.
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "core/file.h"
#include "core/subprocess.h"
#include "engine/llm_proposer.h"
#include "eval/feedback.h"

namespace ks {
namespace {

class CommandClient : public LlmClient {
 public:
  CommandClient(std::string command, double timeout_s)
      : command_(std::move(command)), timeout_s_(timeout_s) {}

  std::string Endpoint() const override { return "command:" + command_; }

  Result<ChatResponse> Complete(const ChatRequest& request) override {
    auto start = std::chrono::steady_clock::now();
    std::string prompt;
    for (const ChatMessage& m : request.messages)
      prompt += "## " + m.role + "\n" + m.content + "\n";
    std::string tmpl = (std::filesystem::temp_directory_path() / "ks-prompt-XXXXXX").string();
    int fd = mkstemp(tmpl.data());
    if (fd < 0) return Status::IOError("cannot create a prompt file in " + tmpl);
    close(fd);
    struct Remove {
      std::string path;
      ~Remove() { std::remove(path.c_str()); }
    } remove{tmpl};
    Status s = WriteFileAtomic(tmpl, prompt);
    if (!s.ok()) return s;

    SubprocessOptions options;
    options.argv = {"/bin/sh", "-c", "exec <\"$KS_PROMPT_FILE\"\n" + command_};
    options.env = {{"KS_PROMPT_FILE", tmpl}};
    Result<std::unique_ptr<Subprocess>> child = Subprocess::Spawn(options);
    if (!child.ok()) return child.status();
    std::string out, err;
    bool out_open = true, err_open = true;
    auto deadline = start + std::chrono::duration<double>(timeout_s_);
    while (out_open || err_open) {
      if (std::chrono::steady_clock::now() > deadline) {
        (*child)->KillAndReap();
        return Status::Timeout("proposer command ran past " + std::to_string(timeout_s_) +
                               " s: " + command_);
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
    }
    std::optional<ExitStatus> exit;
    while (!(exit = (*child)->WaitExitFor(std::chrono::milliseconds(100)))) {
      if (std::chrono::steady_clock::now() > deadline) {
        (*child)->KillAndReap();
        return Status::Timeout("proposer command did not exit in time: " + command_);
      }
    }
    (*child)->KillAndReap();
    if (!exit->success()) {
      return Status::IOError("proposer command failed (" + exit->ToString() + "): " + command_ +
                             "\n" + LastLines(err, 20));
    }
    if (out.empty()) return Status::Protocol("proposer command printed nothing: " + command_);
    ChatResponse response;
    response.content = std::move(out);
    response.finish_reason = "stop";
    response.latency_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    response.model = "command";
    response.attempts = 1;
    return response;
  }

 private:
  const std::string command_;
  const double timeout_s_;
};

}  // namespace

std::shared_ptr<LlmClient> MakeCommandClient(std::string command, double timeout_s) {
  return std::make_shared<CommandClient>(std::move(command), timeout_s);
}

}  // namespace ks
