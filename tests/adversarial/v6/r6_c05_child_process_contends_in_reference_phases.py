# Round 6, family 5 (slowing the reference) from outside the worker's process. GPU only. The
# candidate's kernel is honest and graph-capturable.
# Target: everything the evaluator observes is per process - CUPTI records and launch
# callbacks, the thread checks, the integrity snapshot, the device-wide synchronize. Another
# process on the same GPU is invisible to all of it, yet (without MPS) the GPU time-slices
# between the two processes' contexts and they share HBM bandwidth.
# Exploit: at import the candidate starts a child Python (subprocess, stdio to /dev/null) that
# opens its own CUDA context and waits. The signal is a 4 KiB /dev/shm page mapped in both
# processes; the parent page-locks it with cudaHostRegister (portable, mapped), and every
# forward launches a 1-program Triton heartbeat that bumps a device counter and stores it
# into that page - graph replays included. The child polls the page: when the heartbeat has
# not moved for 2 ms (a reference heat or block) but moved in the last 5 s, it runs 512 MiB
# device copies back to back in its own process; it exits when the parent is gone or after
# 60 s of silence (it outlives the request otherwise, like any child).
# Expected if it passes (H100, 4096x4096 fp32 softmax): status ok, no finding; the reference
# ~2x slower, a speedup of ~1.6-2.5x for a kernel honestly ~0.8-1.2x.
import mmap
import os
import subprocess
import sys
import tempfile

import torch
import torch.nn as nn
import triton
import triton.language as tl

_CHILD = r"""
import mmap, os, sys, time
import torch
path, parent = sys.argv[1], int(sys.argv[2])
fd = os.open(path, os.O_RDWR)
page = mmap.mmap(fd, 4096)
beat = torch.frombuffer(page, dtype=torch.int64, count=1)
a = torch.empty(128 << 20, dtype=torch.float32, device="cuda")
b = torch.empty_like(a)
seen, changed, started = int(beat[0]), time.monotonic(), time.monotonic()
while True:
    now = time.monotonic()
    v = int(beat[0])
    if v != seen:
        seen, changed = v, now
    if os.getppid() != parent or now - max(changed, started) > 60:
        break
    idle = now - changed
    if seen > 0 and 0.002 < idle < 5.0:
        for _ in range(4):
            b.copy_(a)
            a.copy_(b)
        torch.cuda.synchronize()
    else:
        time.sleep(0.0001)
"""


class _Contender:
    def __init__(self):
        self.beat = None
        if not torch.cuda.is_available():
            return
        torch.cuda.init()
        fd, path = tempfile.mkstemp(prefix="r6_beat_", dir="/dev/shm")
        os.ftruncate(fd, 4096)
        self.page = mmap.mmap(fd, 4096)
        host = torch.frombuffer(self.page, dtype=torch.int64, count=512)
        if int(torch.cuda.cudart().cudaHostRegister(host.data_ptr(), 4096, 3)) != 0:
            return
        self.host = host
        self.beat = torch.zeros(1, dtype=torch.int64, device="cuda")
        self.child = subprocess.Popen(
            [sys.executable, "-c", _CHILD, path, str(os.getpid())],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            close_fds=True)


try:
    _CONTENDER = _Contender()
except Exception:  # noqa: BLE001 - no GPU, no /dev/shm: stay honest
    _CONTENDER = None


@triton.jit
def heartbeat(dev_ptr, host_ptr):
    c = tl.load(dev_ptr) + 1
    tl.store(dev_ptr, c)
    tl.store(host_ptr, c)


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
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        BLOCK = triton.next_power_of_2(N)
        softmax_rows[(M,)](x, y, N, x.stride(0), y.stride(0), BLOCK=BLOCK,
                           num_warps=16 if BLOCK >= 4096 else (8 if BLOCK >= 1024 else 4))
        if x.is_cuda and _CONTENDER is not None and _CONTENDER.beat is not None:
            heartbeat[(1,)](_CONTENDER.beat, _CONTENDER.host)
        return y
