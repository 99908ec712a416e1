"""The `triton` backend: @triton.jit kernels on CUDA, or on the CPU under TRITON_INTERPRET=1."""

from __future__ import annotations

import os

import torch

from kernelsmith_worker.backends import cache_root
from kernelsmith_worker.gpu_profile import ExactNames
from kernelsmith_worker.launches import LaunchRecorder


def interpret_mode() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0").strip().lower() in ("1", "true", "on", "yes")


class TritonBackend:
    name = "triton"

    def unavailable_reason(self) -> str | None:
        try:
            import triton  # noqa: F401
        except Exception as e:
            return f"triton does not import: {e}"
        if interpret_mode() or torch.cuda.is_available():
            return None
        return "triton needs a CUDA GPU or TRITON_INTERPRET=1"

    def device(self) -> torch.device:
        if interpret_mode() or not torch.cuda.is_available():
            return torch.device("cpu")
        return torch.device("cuda", torch.cuda.current_device())

    def prepare(self) -> None:
        os.environ.setdefault("TRITON_CACHE_DIR", str(cache_root() / "triton"))

    def kernel_names(self, candidate_source: str, recorder: LaunchRecorder) -> set[str]:
        """The kernels the launch hooks saw launched, under the names Triton compiled them
        with; a device record is one of them only by its whole name (ExactNames). Names in
        the source text (a string, a function never launched) make nothing the candidate's."""
        return ExactNames(n.split(".")[-1] for n in recorder.names())
