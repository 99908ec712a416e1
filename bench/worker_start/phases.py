"""Where a worker's start-up time goes, phase by phase, in the order loop.build_context runs
them (a CUDA worker where a GPU is visible). Run from the repository root:

    PYTHONPATH=python python bench/worker_start/phases.py

Prints one line of seconds per phase. Run it twice: the first run may compile the kernel
log (cached per machine afterwards)."""

from __future__ import annotations

import time

_t = [time.perf_counter()]
_phases: list[tuple[str, float]] = []


def mark(name: str) -> None:
    now = time.perf_counter()
    _phases.append((name, now - _t[0]))
    _t[0] = now


import torch  # noqa: E402

mark("import torch")
from kernelsmith_worker import loop  # noqa: E402,F401

mark("import worker")
from kernelsmith_worker.backends import registry  # noqa: E402
from kernelsmith_worker.launches import LaunchRecorder, install  # noqa: E402

for b in registry().values():
    b.prepare()
mark("backends.prepare")
install(LaunchRecorder())
mark("launch hooks")
loop.load_time_pair()
import kernelsmith_worker.cpu_ext  # noqa: E402,F401
import kernelsmith_worker.gpu_profile  # noqa: E402,F401

mark("timing + profile modules")
import torch._dynamo  # noqa: E402,F401

mark("import torch._dynamo")
if torch.cuda.is_available():
    from kernelsmith_worker.device import device_info

    device_info()
    mark("device_info")
    torch.cuda.init()
    mark("torch.cuda.init")
    from kernelsmith_worker import kernel_log

    log = kernel_log.start()
    mark("kernel_log.start")
    torch.ones(1 << 20).sum()
    mark("CPU thread pool")
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]):
        torch.ones(1).add_(1)
    if log is not None:
        log.restart()
    mark("profiler thread + log restart")
from kernelsmith_worker.integrity import IntegrityGuard  # noqa: E402

IntegrityGuard()
mark("integrity snapshot")
total = sum(s for _, s in _phases)
print("  ".join(f"{n} {s:.2f}" for n, s in _phases) + f"  total {total:.2f}")
