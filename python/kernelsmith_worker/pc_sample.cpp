// Where the process's CPU time goes: a SIGPROF handler that records the interrupted program
// counter, driven by ITIMER_PROF (the process's CPU time, all threads). The handler is
// installed once, before any candidate code runs; it records only between ks_pc_begin and
// ks_pc_end, with the thread that took each signal. Loaded by pc_sample.py.
#include <signal.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>

namespace {
constexpr int kMax = 1 << 16;
uintptr_t g_pcs[kMax];
int32_t g_tids[kMax];             // the thread that took each sample
std::atomic<int> g_count{0};     // signals taken while recording (may exceed kMax)
std::atomic<bool> g_recording{false};

void on_prof(int, siginfo_t*, void* uc) {
  if (!g_recording.load(std::memory_order_relaxed)) return;
  const auto* ctx = static_cast<const ucontext_t*>(uc);
#if defined(__x86_64__)
  const uintptr_t pc = static_cast<uintptr_t>(ctx->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  const uintptr_t pc = static_cast<uintptr_t>(ctx->uc_mcontext.pc);
#else
  const uintptr_t pc = 0;
#endif
  const int i = g_count.fetch_add(1, std::memory_order_relaxed);
  if (i < kMax) {
    g_pcs[i] = pc;
    g_tids[i] = static_cast<int32_t>(syscall(SYS_gettid));
  }
}
}  // namespace

extern "C" __attribute__((visibility("default"))) int ks_pc_install() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_prof;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  return sigaction(SIGPROF, &sa, nullptr);
}

// Returns 0, or -1 when the handler is no longer ours (someone replaced it) or the timer
// cannot be armed.
extern "C" __attribute__((visibility("default"))) int ks_pc_begin(int interval_us) {
  struct sigaction cur;
  if (sigaction(SIGPROF, nullptr, &cur) != 0 || !(cur.sa_flags & SA_SIGINFO) ||
      cur.sa_sigaction != on_prof)
    return -1;
  g_count.store(0);
  g_recording.store(true);
  struct itimerval it;
  it.it_interval.tv_sec = 0;
  it.it_interval.tv_usec = interval_us;
  it.it_value = it.it_interval;
  return setitimer(ITIMER_PROF, &it, nullptr);
}

// Disarms the timer (a signal still pending finds the handler installed and not recording).
// Returns the number of signals taken.
extern "C" __attribute__((visibility("default"))) int ks_pc_end() {
  struct itimerval it;
  std::memset(&it, 0, sizeof it);
  setitimer(ITIMER_PROF, &it, nullptr);
  g_recording.store(false);
  return g_count.load();
}

extern "C" __attribute__((visibility("default"))) const uintptr_t* ks_pc_samples() {
  return g_pcs;
}

extern "C" __attribute__((visibility("default"))) const int32_t* ks_pc_tids() {
  return g_tids;
}
