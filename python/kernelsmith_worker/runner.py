"""Calling the candidate: forward under no_grad, device sync, then the integrity checks that
must follow every call of candidate code."""

from __future__ import annotations

import time
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import torch

from kernelsmith_worker import malloc_state, native_builds
from kernelsmith_worker.compiled_code import CompiledCodeWatch
from kernelsmith_worker.device_state import DeviceState
from kernelsmith_worker.findings import Hacked, finding
from kernelsmith_worker.cpu_account import evaluator_threads_are
from kernelsmith_worker.inputs import present
from kernelsmith_worker.integrity import IntegrityGuard, new_threads, thread_idents
from kernelsmith_worker.os_threads import ThreadWatch
from kernelsmith_worker.pc_sample import candidate_call
from kernelsmith_worker.signal_state import SignalState
from kernelsmith_worker.thread_state import ThreadState

_synchronize = torch.cuda.synchronize
_perf_counter_ns = time.perf_counter_ns
_no_grad = torch.no_grad


def _current_stream_id(dev: torch.device) -> int | None:
    if dev.type != "cuda":
        return None
    return int(torch.cuda.current_stream(dev).cuda_stream)


class CandidateChecks:
    """Checks after candidate code ran: evaluator intact, no candidate thread alive, torch's
    current CUDA stream unchanged, no compiled torch model loaded (full checks). Each failure
    raises Hacked (after undoing what it can)."""

    def __init__(self, guard: IntegrityGuard, thread_baseline: set[int],
                 dev: torch.device, native: ThreadWatch | None = None,
                 device_state: DeviceState | None = None,
                 signals: SignalState | None = None,
                 thread_state: ThreadState | None = None) -> None:
        self._guard = guard
        self._thread_state = thread_state
        self._signals = signals
        self._threads = thread_baseline
        self.native = native  # None: threads and child processes are not checked
        self._device_state = device_state
        self._dev = dev
        self._stream = _current_stream_id(dev)
        self._stream_obj = torch.cuda.current_stream(dev) if dev.type == "cuda" else None
        self._compiled = CompiledCodeWatch()  # libraries mapped before the candidate's import

    @classmethod
    def before_import(cls, guard: IntegrityGuard, dev: torch.device,
                      device_state: DeviceState | None,
                      signals: SignalState | None) -> CandidateChecks:
        """The checks of a candidate about to be imported, with what they compare against
        taken now: the process's threads; new native threads allowed (none on CUDA workers,
        a CPU candidate's pool up to its thread budget); the evaluator's threads' scheduling
        state (CUDA: the timing thread's only, the driver's threads are not compared)."""
        cpu = dev.type == "cpu"
        baseline = thread_idents()
        watch = ThreadWatch(allowed=torch.get_num_threads() if cpu else 0)
        sched = ThreadState.capture(only_current=not cpu)
        if cpu:
            evaluator_threads_are(sched.tids())
            malloc_state.pin()
        return cls(guard, baseline, dev, watch, device_state if dev.type == "cuda" else None,
                   signals, sched)

    def __call__(self, when: str, full: bool = False) -> None:
        """`full`: also the slower checks (torch's dispatcher tables); run at stage ends."""
        self._check_thread_state(when)  # first: a demoted main thread runs the rest slowly
        changed = self._guard.changes(full)
        if changed:
            self._guard.restore()
            shown = "; ".join(changed[:6])
            if len(changed) > 6:
                shown += f"; and {len(changed) - 6} more"
            raise Hacked([finding("evaluator_tampering",
                                  f"{when}, the candidate changed what the evaluator relies on: "
                                  f"{shown}", "reject")])
        signals = self._signals.changes() if self._signals is not None else []
        if signals:
            raise Hacked([finding("signal_handler",
                                  f"{when}, the candidate changed the process's signal handling: "
                                  f"{'; '.join(signals[:4])}. A handler or timer runs candidate "
                                  "code at any moment of the evaluation (while the reference is "
                                  "timed, inside the evaluator's own code); a candidate must not "
                                  "install one", "reject")])
        mapped = self._compiled.mapped_since() if full else set()
        compiled = self._compiled.new(mapped) if mapped else []
        if compiled:
            raise Hacked([finding("torch_compute",
                                  f"{when}, the candidate loaded compiled torch code: "
                                  f"{'; '.join(compiled[:3])}. Code inductor generated is "
                                  "torch's work, not the candidate's kernel", "reject")])
        brought = native_builds.foreign(mapped, self._compiled.since_ns) if mapped else []
        if brought:
            raise Hacked([finding("library_code",
                                  f"{when}, native code the evaluator did not build was loaded: "
                                  f"{'; '.join(brought[:3])}. A kernel's native code comes from "
                                  "its backend's builder (cpu_ext, Triton, the cuda backend's "
                                  "load_inline), which checks it", "reject")])
        threads = new_threads(self._threads)
        if threads:
            raise Hacked([finding("background_thread",
                                  f"{when}, thread(s) started by the candidate are still "
                                  f"running: {', '.join(threads[:5])}", "reject")])
        children = self.native.new_children() if self.native is not None else []
        if children:
            raise Hacked([finding("child_process",
                                  f"{when}, process(es) started since the candidate was "
                                  f"imported are still running: {', '.join(children[:5])}. "
                                  "A candidate must not leave processes behind (one with a "
                                  "GPU context of its own shares the GPU with the reference "
                                  "unseen)", "reject")])
        state = self._device_state.changes() if self._device_state is not None else []
        if state:
            raise Hacked([finding("device_state_changed",
                                  f"{when}, the candidate changed device or library state the "
                                  f"reference shares: {'; '.join(state[:4])}. Set such state "
                                  "on your own kernels or handles, never process-wide",
                                  "reject")])
        native = self.native.new() if self.native is not None else []
        if native:
            raise Hacked([finding("native_thread",
                                  f"{when}, native thread(s) started since the candidate was "
                                  f"imported are still running: {', '.join(native[:5])}. A "
                                  "candidate must not leave threads behind (they can work "
                                  "while the reference is timed); on the CPU, a pool of no "
                                  "more threads than the thread budget that waits between "
                                  "calls", "reject")])
        if self._stream_obj is not None and _current_stream_id(self._dev) != self._stream:
            torch.cuda.set_stream(self._stream_obj)
            raise Hacked([finding("side_stream",
                                  f"{when}, torch's current CUDA stream was switched to another "
                                  "stream", "reject")])


    def _check_thread_state(self, when: str) -> None:
        changed = self._thread_state.changes() if self._thread_state is not None else []
        if not changed:
            return
        failed = self._thread_state.restore()
        raise Hacked([finding("thread_state_changed",
                              f"{when}, the candidate changed the scheduling of the worker's "
                              f"threads: {'; '.join(changed[:4])}"
                              + (f" (not restored: {'; '.join(failed[:2])})" if failed else "")
                              + ". The main thread times the reference: a candidate must not "
                              "change any thread's CPU affinity, scheduling policy or nice "
                              "but its own threads'", "reject")])


class CandidateRunner:
    """`runner(args)` runs ModelNew.forward under no_grad on new objects over args' tensors
    (inputs.present: the one constructor of every candidate call's arguments; args, the
    caller's, stay held for the call), syncs, and checks."""

    def __init__(self, model: torch.nn.Module, dev: torch.device, checks: CandidateChecks) -> None:
        self.model = model
        self.dev = dev
        self.checks = checks
        self.last_forward_ns = 0  # host time of the last forward (+ device sync), checks excluded

    def __call__(self, args: list[Any], mode: AbstractContextManager[Any] | None = None) -> Any:
        try:
            start = _perf_counter_ns()
            handed = present(args)  # held in a list for the call, as a timed call's are
            with _no_grad(), (mode if mode is not None else nullcontext()), candidate_call():
                out = self.model(*handed)
            if self.dev.type == "cuda":
                _synchronize(self.dev)
            self.last_forward_ns = _perf_counter_ns() - start
        finally:
            self.checks("after ModelNew.forward")
        return out
