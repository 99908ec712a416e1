// Where the process's CPU time goes: a SIGPROF handler that records the interrupted program
// counter, driven by ITIMER_PROF (the process's CPU time, all threads). The handler is
// installed once, before any candidate code runs. While the timer is armed (a whole
// cpu-backend request, or one sampled window) every signal is recorded with the thread that
// took it and the tag in effect (1 while a candidate call runs, set by the evaluator through
// ks_pc_tag's address). Loaded by pc_sample.py.
#include <signal.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>

namespace {
constexpr int kMax = 1 << 17;
uintptr_t g_pcs[kMax];
int32_t g_tids[kMax];  // the thread that took each sample
uint8_t g_tags[kMax];  // g_tag when it was taken
std::atomic<int> g_count{0};  // signals taken while armed (may exceed kMax)
std::atomic<bool> g_armed{false};
volatile int g_tag = 0;

void on_prof(int, siginfo_t*, void* uc) {
  if (!g_armed.load(std::memory_order_relaxed)) return;
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
    g_tags[i] = static_cast<uint8_t>(g_tag);
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

// Arms the timer and starts recording from sample 0. Returns 0, or -1 when the handler is no
// longer ours (someone replaced it) or the timer cannot be armed.
extern "C" __attribute__((visibility("default"))) int ks_pc_arm(int interval_us) {
  struct sigaction cur;
  if (sigaction(SIGPROF, nullptr, &cur) != 0 || !(cur.sa_flags & SA_SIGINFO) ||
      cur.sa_sigaction != on_prof)
    return -1;
  g_count.store(0);
  g_tag = 0;
  g_armed.store(true);
  struct itimerval it;
  it.it_interval.tv_sec = 0;
  it.it_interval.tv_usec = interval_us;
  it.it_value = it.it_interval;
  return setitimer(ITIMER_PROF, &it, nullptr);
}

// Disarms the timer (a signal still pending finds the handler installed and not armed).
// Returns the number of signals taken.
extern "C" __attribute__((visibility("default"))) int ks_pc_disarm() {
  struct itimerval it;
  std::memset(&it, 0, sizeof it);
  setitimer(ITIMER_PROF, &it, nullptr);
  g_armed.store(false);
  g_tag = 0;
  return g_count.load();
}

// Whether the handler is still ours.
extern "C" __attribute__((visibility("default"))) int ks_pc_ours() {
  struct sigaction cur;
  return sigaction(SIGPROF, nullptr, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
         cur.sa_sigaction == on_prof;
}

extern "C" __attribute__((visibility("default"))) int ks_pc_count() { return g_count.load(); }

extern "C" __attribute__((visibility("default"))) int ks_pc_capacity() { return kMax; }

extern "C" __attribute__((visibility("default"))) volatile int* ks_pc_tag() { return &g_tag; }

extern "C" __attribute__((visibility("default"))) const uintptr_t* ks_pc_samples() {
  return g_pcs;
}

extern "C" __attribute__((visibility("default"))) const int32_t* ks_pc_tids() {
  return g_tids;
}

extern "C" __attribute__((visibility("default"))) const uint8_t* ks_pc_tags() {
  return g_tags;
}
