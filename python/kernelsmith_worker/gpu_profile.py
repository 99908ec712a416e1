"""One candidate forward under the CUDA profiler: which kernels ran, on which streams, and
how much of the device time was the candidate's own kernels."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

import torch

_MARKER = "spin_kernel"  # torch.cuda._sleep's kernel, launched on the current stream first
# Kernels of torch/ATen itself never count as the candidate's, whatever their names.
_TORCH_NAMESPACES = ("at::native::", "at::cuda::", "at_cuda_detail", "c10::")


def kernel_matches(kernel: str, names: set[str]) -> str | None:
    """The candidate kernel name that `kernel` (a profiler kernel name, possibly demangled
    C++ like 'void ns::k<128>(float*, int)') is an instance of, else None."""
    if any(ns in kernel for ns in _TORCH_NAMESPACES):
        return None
    for n in names:
        if kernel == n or re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", kernel):
            return n
    return None


@dataclass
class KernelProfile:
    total_us: float = 0.0  # device time of every kernel/memcpy/memset in the forward
    custom_us: float = 0.0
    custom_launches: int = 0
    custom_names: set[str] = field(default_factory=set)
    kernels: int = 0
    marker_stream: int | None = None
    side_streams: dict[int, list[str]] = field(default_factory=dict)  # stream → kernel names

    def share(self) -> float | None:
        return self.custom_us / self.total_us if self.total_us > 0 else None


def classify_events(events: list[Any], names: set[str]) -> KernelProfile:
    """Summarises device events (profiler FunctionEvents with `name`, `device_resource_id`
    (the stream) and `time_range`); the marker kernel names the current stream."""
    result = KernelProfile()
    for e in events:
        if _MARKER in e.name:
            result.marker_stream = e.device_resource_id
    for e in events:
        if _MARKER in e.name:
            continue
        us = float(e.time_range.elapsed_us())
        result.kernels += 1
        result.total_us += us
        match = kernel_matches(e.name, names)
        if match is not None:
            result.custom_us += us
            result.custom_launches += 1
            result.custom_names.add(match)
        if result.marker_stream is not None and e.device_resource_id != result.marker_stream:
            result.side_streams.setdefault(e.device_resource_id, []).append(e.name[:80])
    return result


def profile_forward(call: Callable[[], Any], names: set[str]) -> KernelProfile:
    """Runs call() once under torch.profiler (CUDA activity) and classifies its device events.
    A short spin kernel is launched first on the current stream to identify that stream."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        torch.cuda._sleep(1000)
        call()
        torch.cuda.synchronize()
    return classify_events([e for e in prof.events() if e.device_type == DeviceType.CUDA], names)
