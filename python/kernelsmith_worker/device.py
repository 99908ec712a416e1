"""What the worker runs on: the `device` object of hello and of every result."""

from __future__ import annotations

import os
import platform
import subprocess
from typing import Any

import torch


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown cpu"


def _cpu_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _nvidia_driver() -> str | None:
    """The NVIDIA kernel driver version (e.g. "580.159.04"), or None."""
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8", errors="replace") as f:
            for word in f.readline().split():
                parts = word.split(".")
                if len(parts) >= 2 and all(p.isdigit() for p in parts):
                    return word
    except OSError:
        pass
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL,
        )
        first = out.stdout.strip().splitlines()
        return first[0].strip() if out.returncode == 0 and first else None
    except (OSError, subprocess.SubprocessError):
        return None


def triton_version() -> str | None:
    try:
        import triton

        return str(triton.__version__)
    except Exception:
        return None


def cuda_device_info(index: int = 0) -> dict[str, Any]:
    """Properties of CUDA device `index` (the one CUDA_VISIBLE_DEVICES pins us to)."""
    p = torch.cuda.get_device_properties(index)
    return {
        "kind": "cuda",
        "name": p.name,
        "cc": f"{p.major}.{p.minor}",
        "driver": _nvidia_driver(),
        "cuda": torch.version.cuda,
        "sms": p.multi_processor_count,
        "l2_bytes": getattr(p, "L2_cache_size", None),
        "memory_bytes": p.total_memory,
    }


DEFAULT_CPU_THREADS = 1


def cpu_threads() -> int:
    """Threads each side of a CPU timing gets (the reference's torch intra-op threads, the
    candidate's OpenMP threads): $KS_CPU_THREADS, default 1. One thread by default makes the
    figure comparable across machines and leaves the engine and the OS a core of their own
    on a small machine; a multi-threaded comparison is one setting away."""
    env = os.environ.get("KS_CPU_THREADS", "").strip()
    if not env:
        return DEFAULT_CPU_THREADS
    try:
        n = int(env)
    except ValueError:
        raise ValueError(f"KS_CPU_THREADS={env!r}: expected a positive whole number") from None
    if n < 1:
        raise ValueError(f"KS_CPU_THREADS={env!r}: expected a positive whole number")
    return n


def apply_cpu_threads(n: int) -> None:
    """Gives the reference (torch) and candidate libraries loaded later (OpenMP reads
    OMP_NUM_THREADS when its runtime starts) the same thread count."""
    torch.set_num_threads(n)
    os.environ["OMP_NUM_THREADS"] = str(n)


def cpu_device_info() -> dict[str, Any]:
    return {"kind": "cpu", "name": _cpu_name(), "cores": _cpu_cores(),
            "threads": torch.get_num_threads()}


def device_info() -> dict[str, Any]:
    """hello's `device`: the GPU when one is visible, else the CPU."""
    if torch.cuda.is_available():
        return cuda_device_info(0)
    return cpu_device_info()


def result_device(dev: torch.device, gpu: dict[str, Any] | None) -> dict[str, Any]:
    """A result's `device` {kind, name, cc, driver, cuda, torch, triton, python} for the
    device the evaluation actually ran on (`gpu` is hello's CUDA info, if any)."""
    if dev.type == "cuda" and gpu is not None:
        base = {k: gpu.get(k) for k in ("kind", "name", "cc", "driver", "cuda")}
    else:
        cpu = cpu_device_info()
        base = {"kind": "cpu", "name": cpu["name"], "cc": None, "driver": None,
                "cuda": torch.version.cuda}
    base.update({"torch": torch.__version__.split("+")[0], "triton": triton_version(),
                 "python": platform.python_version()})
    return base


def hello_message(worker_version: str, protocol: int, backends: list[str],
                  device: dict[str, Any]) -> dict[str, Any]:
    """The hello line the worker sends once, right after start."""
    return {
        "type": "hello",
        "protocol": protocol,
        "worker_version": worker_version,
        "pid": os.getpid(),
        "python": platform.python_version(),
        "torch": torch.__version__.split("+")[0],
        "triton": triton_version(),
        "cuda_available": torch.cuda.is_available(),
        "triton_interpret":
            os.environ.get("TRITON_INTERPRET", "0").strip().lower() in ("1", "true", "on", "yes"),
        "device": device,
        "backends": backends,
    }
