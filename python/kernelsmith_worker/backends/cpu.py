"""The `cpu` backend: C++ kernels compiled through kernelsmith_worker.cpu_ext."""

from __future__ import annotations

import shutil

import torch

from kernelsmith_worker import cpu_ext
from kernelsmith_worker.launches import LaunchRecorder


class CpuBackend:
    name = "cpu"

    def unavailable_reason(self) -> str | None:
        cxx = cpu_ext.compiler()
        if shutil.which(cxx) is None:
            return f"no C++ compiler {cxx!r} on PATH (set CXX)"
        return None

    def device(self) -> torch.device:
        return torch.device("cpu")

    def prepare(self) -> None:
        pass

    def kernel_names(self, candidate_source: str, recorder: LaunchRecorder) -> set[str]:
        return set(recorder.names())
