"""Backends: how a candidate of each kind runs, and where its kernels show up.

A backend says whether it can run here, on which device, what to set up once at worker
start (caches, hooks), and which kernel names in a profiler trace are the candidate's own.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

import torch

from kernelsmith_worker.launches import LaunchRecorder


def cache_root() -> Path:
    """$KS_CACHE_DIR, default ~/.cache/kernelsmith (compile caches of every backend)."""
    return Path(os.environ.get("KS_CACHE_DIR") or Path.home() / ".cache" / "kernelsmith")


class Backend(Protocol):
    name: str

    def unavailable_reason(self) -> str | None:
        """None when the backend can run in this process, else why not (one line)."""

    def device(self) -> torch.device:
        """The device problems and candidates run on."""

    def prepare(self) -> None:
        """One-time setup at worker start, before any candidate is imported."""

    def kernel_names(self, candidate_source: str, recorder: LaunchRecorder) -> set[str]:
        """Names of the candidate's own kernels, as a GPU profiler reports them."""


def registry() -> dict[str, Backend]:
    """Every backend the worker knows, by name."""
    from kernelsmith_worker.backends.cpu import CpuBackend
    from kernelsmith_worker.backends.cuda import CudaBackend
    from kernelsmith_worker.backends.triton import TritonBackend

    return {b.name: b for b in (TritonBackend(), CudaBackend(), CpuBackend())}


def available(backends: dict[str, Backend]) -> list[str]:
    """Names of the backends that can run here, in registry order."""
    return [name for name, b in backends.items() if b.unavailable_reason() is None]
