"""The `triton` backend: @triton.jit kernels on CUDA, or on the CPU under TRITON_INTERPRET=1."""

from __future__ import annotations

import os
import re

import torch

from kernelsmith_worker.backends import cache_root
from kernelsmith_worker.launches import LaunchRecorder

_JIT_DEF = re.compile(r"@(?:triton\.)?jit\b[^\n]*\n(?:\s*@[^\n]*\n)*\s*def\s+([A-Za-z_]\w*)")


def interpret_mode() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0").strip().lower() in ("1", "true", "on", "yes")


def jit_function_names(source: str) -> set[str]:
    """Names of functions decorated with @triton.jit / @jit in `source`."""
    return set(_JIT_DEF.findall(source))


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
        names = set(recorder.names()) | jit_function_names(candidate_source)
        return {n.split(".")[-1] for n in names}
