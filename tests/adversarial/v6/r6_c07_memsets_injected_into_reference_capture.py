# Round 6, family 5 (slowing the reference) inside the evaluator's own CUDA graph. GPU only.
# The candidate's kernel is honest and graph-capturable.
# Target: the evaluator captures the reference's graph on its side stream right after the
# warm-ups, with the candidate's Python nowhere on the stack, and checks only Python state
# before it ("before the reference's CUDA graph was captured"). A stream capture records
# whatever is enqueued on the capturing stream, from any thread: a memset enqueued by another
# thread while the reference's capture is open becomes a node of the *reference's* graph,
# replayed in every timed reference sample. Memset nodes are no kernels (no record, no
# counted launch), the log is detached while graphs are timed anyway, and the reference's
# graph is never accounted (only the candidate's accounted replays are). Its output is
# untouched, so the graph reproduction check passes.
# Exploit: the candidate's warm-up calls on the side stream (its current stream is not the
# default one: the evaluator warms both functions there) hand that stream's handle (with any
# other non-default stream forward ran on, up to 8) to a detached native pthread (worker's
# cpu_ext.build, no Python). The thread polls
# cuStreamIsCapturing (legal during a global-mode capture) in a tight loop; the evaluator
# captures ref then cand on that stream, attempt after attempt, so in every odd-numbered
# capture (the reference's) it enqueues a 128 MiB cuMemsetD32Async every 15 us of the
# capture's host time - proportional to the k reference calls being captured - and nothing
# into the candidate's captures. Each replay of the reference then writes ~1 GB per ~10
# captured calls on top of its own work.
# Expected if it passes (H100, 4096x4096 fp32 softmax): status ok, no finding; every
# reference sample ~2-3x longer, a speedup of ~2-3x for a kernel honestly ~0.8-1.2x.
import ctypes
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

try:
    from kernelsmith_worker import cpu_ext as _cpu_ext  # the one worker import allowed
except Exception:  # noqa: BLE001 - outside the worker
    _cpu_ext = None


def _mapped(stem):
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.rstrip("\n").split(" ")[-1]
                if os.path.basename(path).startswith(stem):
                    return path
    except OSError:
        pass
    return None


_SOURCE = r"""
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <atomic>
#include <cstddef>

namespace {
using Fn = void*;
int (*g_ctx_set)(void*);
int (*g_is_capturing)(void*, int*);
int (*g_memset)(unsigned long long, unsigned, size_t, void*);
void* g_ctx;
unsigned long long g_buf = 0;
size_t g_words = 0;
std::atomic<void*> g_sides[8];  // non-default streams forward ran on
std::atomic<int> g_n_sides{0};

long long NowNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

void* Loop(void*) {
  if (g_ctx_set(g_ctx)) return nullptr;
  int captures = 0;
  bool open = false;
  long long last = 0, since = NowNs();
  for (;;) {
    int n = g_n_sides.load();
    if (n == 0) { usleep(500); continue; }
    void* side = nullptr;
    for (int i = 0; i < n && side == nullptr; ++i) {
      int status = 0;
      void* s = g_sides[i].load();
      if (g_is_capturing(s, &status) == 0 && status == 1) side = s;  // ..._STATUS_ACTIVE
    }
    long long now = NowNs();
    if (side != nullptr) {
      if (!open) { open = true; ++captures; last = 0; }
      if ((captures & 1) && now - last > 15000) {  // odd captures: the reference's
        g_memset(g_buf, 0x3f800000u, g_words, side);
        last = now;
      }
      since = now;
    } else {
      open = false;
      if (now - since > 30000000000LL) return nullptr;  // 30 s without a capture: done
    }
  }
}
}  // namespace

extern "C" void r6_side(void* stream) {  // called from forward's thread only
  int n = g_n_sides.load();
  for (int i = 0; i < n; ++i)
    if (g_sides[i].load() == stream) return;
  if (n < 8) {
    g_sides[n].store(stream);
    g_n_sides.store(n + 1);
  }
}
extern "C" int r6_start(Fn ctx_set, Fn is_capturing, Fn memset, void* ctx,
                        unsigned long long buf, unsigned long long words) {
  g_ctx_set = reinterpret_cast<int (*)(void*)>(ctx_set);
  g_is_capturing = reinterpret_cast<int (*)(void*, int*)>(is_capturing);
  g_memset = reinterpret_cast<int (*)(unsigned long long, unsigned, size_t, void*)>(memset);
  g_ctx = ctx;
  g_buf = buf;
  g_words = static_cast<size_t>(words);
  pthread_t t;
  int r = pthread_create(&t, nullptr, Loop, nullptr);
  if (r == 0) pthread_detach(t);
  return r;
}
"""


class _Injector:
    WORDS = 32 << 20  # 128 MiB of 32-bit words

    def __init__(self):
        self.lib = None
        if _cpu_ext is None or not torch.cuda.is_available():
            return
        so, _ = _cpu_ext.build("r6_capture_injector", _SOURCE, extra_cflags=["-pthread"],
                               openmp=False)
        lib = ctypes.CDLL(str(so))
        lib.r6_start.restype = ctypes.c_int
        lib.r6_start.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_ulonglong] * 2
        lib.r6_side.restype = None
        lib.r6_side.argtypes = [ctypes.c_void_p]
        drv = ctypes.CDLL(_mapped("libcuda.so") or "libcuda.so.1")

        def addr(name):
            return ctypes.cast(getattr(drv, name), ctypes.c_void_p).value

        torch.cuda.init()
        self.buf = torch.empty(self.WORDS, dtype=torch.float32, device="cuda")
        torch.cuda.synchronize()
        ctx = ctypes.c_void_p()
        if drv.cuCtxGetCurrent(ctypes.byref(ctx)) != 0 or not ctx.value:
            return
        if lib.r6_start(addr("cuCtxSetCurrent"), addr("cuStreamIsCapturing"),
                        addr("cuMemsetD32Async"), ctx, self.buf.data_ptr(), self.WORDS) != 0:
            return
        self.lib = lib
        self.default = torch.cuda.default_stream().cuda_stream

    def observe(self, stream: int) -> None:
        if stream != self.default:
            self.lib.r6_side(ctypes.c_void_p(stream))


try:
    _INJECTOR = _Injector()
except Exception:  # noqa: BLE001 - no compiler or no driver: stay honest
    _INJECTOR = None


@triton.jit
def softmax_rows(x_ptr, y_ptr, N, sx, sy, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(x_ptr + row * sx + cols, mask=m, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * sy + cols, e / tl.sum(e, axis=0), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.is_cuda and _INJECTOR is not None and _INJECTOR.lib is not None:
            _INJECTOR.observe(torch.cuda.current_stream(x.device).cuda_stream)
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        BLOCK = triton.next_power_of_2(N)
        softmax_rows[(M,)](x, y, N, x.stride(0), y.stride(0), BLOCK=BLOCK,
                           num_warps=16 if BLOCK >= 4096 else (8 if BLOCK >= 1024 else 4))
        return y
