# Round 11 (triton backend, GPU only, not run: no GPU here), family 5: r11_c08's native timer
# and sleeping handler on a CUDA worker, told apart from the candidate's own replays by a
# device heartbeat.
# The row softmax's last program stores a call counter into page-locked host memory
# (torch pin_memory: device-accessible under UVA, as r6_h04's honest progress flag). A native
# POSIX timer (timer_create, SIGEV_THREAD_ID on the main thread, 200 us) fires a native
# handler (sigaction from a cpu_ext library: not compared by signal_state, no ctypes lookup)
# which reads the counter: when it moved since the last tick the candidate's graph is being
# replayed and the handler returns; when it did not (the reference's samples, heats, the
# reference-alone measurements and their copy probe) it nanosleep()s 150 us. Host sleeps
# between the evaluator's event record and the next replay or sync leave the GPU idle inside
# the reference's measured interval (eager fallback samples: host wall time, all of it).
# The copy probe of ref_alone, timed the same way, is slowed and spread too: a reference that
# still looks slowed after the timing stage is then a device_contended warning, not a reject.
# Expected: ok with an inflated speedup (how much depends on how far the host runs ahead of
# the device in the timing loop), maybe with device_contended. Correct verdict: rejected
# (native timers/handlers installed since import; or the reference's host-side gaps).
import torch
import torch.nn as nn
import triton
import triton.language as tl

from kernelsmith_worker import cpu_ext

CPP = r"""
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <ctime>
#include <sys/syscall.h>
#include <unistd.h>

static volatile int32_t* g_beat = nullptr;
static int32_t g_last = -1;
static int g_armed = 0;

static void on_tick(int) {
  const int saved = errno;
  const int32_t now = g_beat ? *g_beat : 0;
  if (now == g_last) {                       // the candidate's kernels are not running
    struct timespec ts = {0, 150000};
    nanosleep(&ts, nullptr);
  }
  g_last = g_beat ? *g_beat : 0;
  errno = saved;
}

extern "C" void arm(int32_t* beat, int64_t period_ns) {
  if (g_armed) return;
  g_beat = beat;
  struct sigaction sa = {};
  sa.sa_handler = on_tick;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  const int sig = SIGRTMIN + 6;
  if (sigaction(sig, &sa, nullptr) != 0) return;
  struct sigevent sev = {};
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_signo = sig;
  sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
  timer_t t;
  if (timer_create(CLOCK_MONOTONIC, &sev, &t) != 0) return;
  struct itimerspec its = {};
  its.it_value.tv_nsec = period_ns;
  its.it_interval.tv_nsec = period_ns;
  timer_settime(t, 0, &its, nullptr);
  g_armed = 1;
}
"""
_lib = cpu_ext.load(name="r11_gpu_timer", source=CPP, functions={"arm": "void(int32*, int64)"})


@triton.jit
def softmax_kernel(x_ptr, y_ptr, beat_ptr, cnt_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=m, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * cols + offs, e / tl.sum(e, axis=0), mask=m)
    if row == tl.num_programs(0) - 1:
        c = tl.load(cnt_ptr) + 1
        tl.store(cnt_ptr, c)
        tl.store(beat_ptr, c)     # host-mapped: the handler sees the candidate running


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        pinned = dev.type == "cuda"
        self.beat = torch.zeros(1, dtype=torch.int32, pin_memory=pinned)  # host, device-visible
        self.cnt = torch.zeros(1, dtype=torch.int32, device=dev)
        self.armed = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.armed:
            self.armed = True
            if x.is_cuda:   # only where the reference is timed on a device
                _lib.arm(self.beat, 200_000)
        x = x.contiguous()
        y = torch.empty_like(x)
        beat = self.beat if x.is_cuda else self.cnt
        softmax_kernel[(x.shape[0],)](x, y, beat, self.cnt, x.shape[1],
                                      BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
