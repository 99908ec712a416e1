"""What an evaluation runs against: the worker's long-lived context (hooks, integrity snapshot,
caches, the state recorded at start) and the events through which it talks to the engine."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from kernelsmith_worker.backends import Backend
from kernelsmith_worker.device_state import DeviceState
from kernelsmith_worker.inputs import InputCache
from kernelsmith_worker.integrity import IntegrityGuard
from kernelsmith_worker.launches import LaunchRecorder
from kernelsmith_worker.loader import ModuleLoader
from kernelsmith_worker.ref_alone import AloneCache
from kernelsmith_worker.roofline import RooflineCache
from kernelsmith_worker.signal_state import SignalState

TimePair = Callable[..., dict[str, Any]]


class Events(Protocol):
    """How the evaluation talks to the engine while it works (protocol or test fake)."""

    def stage(self, name: str) -> None: ...

    def acquire_lease(self) -> None: ...

    def release_lease(self) -> None: ...


@dataclass
class WorkerContext:
    """What lives as long as the worker: hooks, integrity snapshot, caches."""

    backends: dict[str, Backend]
    recorder: LaunchRecorder
    guard: IntegrityGuard
    cache: InputCache
    loader: ModuleLoader
    gpu_info: dict[str, Any] | None = None
    time_pair: TimePair | None = None
    time_alone: Callable[..., dict[str, Any]] | None = None  # the reference alone (ref_alone)
    timing_unavailable: str = "timing module not loaded"
    device_state: DeviceState | None = None  # CUDA context and cuBLAS state at start
    signal_state: SignalState | None = None  # signal handlers and timers at start
    roofline: RooflineCache = field(default_factory=RooflineCache)
    alone: AloneCache = field(default_factory=AloneCache)  # the references' times alone
