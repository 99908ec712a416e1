#include "sandbox/processes.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

namespace ks {
namespace {

struct StatFields {
  pid_t pgid = 0;
  uint64_t utime = 0, stime = 0;  // clock ticks
  uint64_t rss_pages = 0;
};

// Parses /proc/PID/stat. False if the process is gone or the line is malformed.
bool ReadStat(pid_t pid, StatFields* out) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(f, text)) return false;
  size_t paren = text.rfind(')');  // the command name may contain spaces and parens
  if (paren == std::string::npos) return false;
  std::istringstream rest(text.substr(paren + 2));
  // Fields from 3 on: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
  // utime stime cutime cstime priority nice threads itrealvalue starttime vsize rss
  std::string state;
  long ppid = 0, pgrp = 0, skip = 0;
  uint64_t utime = 0, stime = 0, vsize = 0;
  int64_t rss = 0;
  rest >> state >> ppid >> pgrp;
  for (int i = 0; i < 8; ++i) rest >> skip;  // session .. cmajflt
  rest >> utime >> stime;
  for (int i = 0; i < 7; ++i) rest >> skip;  // cutime .. starttime
  rest >> vsize >> rss;
  if (!rest) return false;
  out->pgid = static_cast<pid_t>(pgrp);
  out->utime = utime;
  out->stime = stime;
  out->rss_pages = rss > 0 ? static_cast<uint64_t>(rss) : 0;
  return true;
}

uint64_t NamespaceInodeAt(const std::string& link) {
  char buf[64];
  ssize_t n = readlink(link.c_str(), buf, sizeof(buf) - 1);
  if (n <= 0) return 0;
  buf[n] = '\0';
  const char* open = strchr(buf, '[');
  return open == nullptr ? 0 : strtoull(open + 1, nullptr, 10);
}

// Calls fn(pid) for every process in /proc.
template <typename Fn>
void ForEachProcess(Fn fn) {
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return;
  while (struct dirent* e = readdir(dir)) {
    char* end = nullptr;
    long pid = strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || pid <= 0) continue;
    fn(static_cast<pid_t>(pid));
  }
  closedir(dir);
}

}  // namespace

ProcessUsage MeasureProcesses(pid_t pgid, uint64_t userns_inode) {
  ProcessUsage usage;
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  ForEachProcess([&](pid_t pid) {
    StatFields st;
    if (!ReadStat(pid, &st)) return;
    bool member = st.pgid == pgid;
    if (!member && userns_inode != 0) member = UserNamespaceInode(pid) == userns_inode;
    if (!member) return;
    usage.processes += 1;
    usage.rss_bytes += st.rss_pages * page;
  });
  return usage;
}

uint64_t UserNamespaceInode(pid_t pid) {
  return NamespaceInodeAt("/proc/" + std::to_string(pid) + "/ns/user");
}

int KillUserNamespace(uint64_t inode) {
  if (inode == 0 || inode == NamespaceInodeAt("/proc/self/ns/user")) return 0;
  int killed = 0;
  // Two passes: a process may fork while the first pass runs.
  for (int pass = 0; pass < 2; ++pass) {
    ForEachProcess([&](pid_t pid) {
      if (UserNamespaceInode(pid) == inode && kill(pid, SIGKILL) == 0) ++killed;
    });
  }
  return killed;
}

Status ArmCpuLimit(pid_t pid, double seconds) {
  StatFields st;
  if (!ReadStat(pid, &st)) {
    return Status::IOError("cannot read the CPU time of process " + std::to_string(pid));
  }
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double used = static_cast<double>(st.utime + st.stime) / ticks;
  struct rlimit rl;
  rl.rlim_cur = static_cast<rlim_t>(std::ceil(used + seconds));
  rl.rlim_max = rl.rlim_cur + 2;
  if (prlimit(pid, RLIMIT_CPU, &rl, nullptr) != 0) {
    return Status::IOError("cannot set the CPU time limit of worker " + std::to_string(pid) +
                           ": " + strerror(errno));
  }
  return Status::Ok();
}

uint64_t PhysicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(size) : 0;
}

}  // namespace ks
