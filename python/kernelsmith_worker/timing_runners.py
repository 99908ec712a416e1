"""How a timed sample of k calls runs: replays of the CUDA graphs the two functions were
captured in, or (not capturable) k eager calls and a device-wide sync. Each keeps every call's
output of its last sample for the timed checks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from .timing_policy import SlotFn

if TYPE_CHECKING:
    from .timing_cuda import CudaApi


def _aliased_finding(unit: str) -> dict:
    return {"kind": "aliased_outputs",
            "detail": "the outputs of forward's successive calls share memory, so only the last "
                      f"call of a sample could be checked: timed one call per {unit} (its "
                      "overhead counts on both sides). Return a fresh output per call for the "
                      "usual samples of many calls",
            "severity": "info"}


def _aliasing_appeared_finding() -> dict:
    return {"kind": "timed_output_aliasing",
            "detail": "during timing, the outputs of one sample's calls came to share memory "
                      "although they did not when the sample size was chosen: all but the last "
                      "call of such a sample cannot be checked",
            "severity": "reject"}


def _no_flush() -> None:
    pass


class _GraphRunner:
    method = "cuda_graph"

    def __init__(self, graphs: dict[str, Any], k: int, flush: Callable[[], None],
                 outputs: dict[str, list[object]]) -> None:
        self.graphs, self.calls_per_sample, self.flush = graphs, k, flush
        self.outputs = outputs  # per graph, each call's output (rewritten by every replay)
        self.aliased = False  # one call per graph because the candidate's outputs share memory

    def run(self, name: str, e0: Any = None, e1: Any = None) -> None:
        self.flush()
        if e0 is not None:
            e0.record()
        self.graphs[name].replay()
        if e1 is not None:
            e1.record()

    def close(self) -> None:
        for g in self.graphs.values():
            g.reset()
        self.graphs, self.outputs = {}, {}
        self.flush = _no_flush


class _EagerRunner:
    method = "cuda_events"

    def __init__(self, api: CudaApi, fns: dict[str, SlotFn], k: int,
                 flush: Callable[[], None]) -> None:
        self.api, self.fns, self.calls_per_sample, self.flush = api, fns, k, flush
        self.outputs: dict[str, list[object]] = {}

    def run(self, name: str, e0: Any = None, e1: Any = None) -> None:
        self.flush()
        fn = self.fns[name]
        outs: list[object] = [None] * self.calls_per_sample
        self.outputs[name] = outs
        if e0 is not None:
            e0.record()
        for j in reversed(range(self.calls_per_sample)):  # the last call reads slot 0
            outs[j] = fn(j)
        if e1 is not None:
            e1.record()
        self.api.synchronize()  # device-wide: nothing of this sample leaks into the next

    def close(self) -> None:
        self.flush = _no_flush
        self.outputs = {}
