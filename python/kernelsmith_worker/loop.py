"""The worker loop: hello, then one result per eval request until shutdown or EOF.

This is the only long-lived state of the worker: the protocol channel and the
WorkerContext (launch hooks, integrity snapshot, input cache, module loader).
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import Any

import torch

from kernelsmith_worker import (PROTOCOL_VERSION, __version__, cpu_account, errors,
                                library_reach, native_builds, observer_switches, pc_sample,
                                triton_hosts)
from kernelsmith_worker.after_import import after_import
from kernelsmith_worker.backends import available, registry
from kernelsmith_worker.device import (apply_cpu_threads, cpu_device_info, cpu_threads,
                                       device_info, hello_message)
from kernelsmith_worker.device_state import DeviceState
from kernelsmith_worker.evaluate import WorkerContext, evaluate
from kernelsmith_worker.gpu_profile import host_ops_of
from kernelsmith_worker.inputs import InputCache
from kernelsmith_worker.integrity import IntegrityGuard
from kernelsmith_worker.launches import LaunchRecorder, install
from kernelsmith_worker.loader import ModuleLoader
from kernelsmith_worker.os_threads import become_subreaper
from kernelsmith_worker.signal_state import SignalState
from kernelsmith_worker.protocol import Channel, EngineGone, ProtocolError
from kernelsmith_worker.request import EvalRequest
from kernelsmith_worker.start_clock import StartClock


class ProtocolEvents:
    """Stage announcements and the GPU lease over the protocol, for one request."""

    def __init__(self, channel: Channel, request_id: str) -> None:
        self._channel = channel
        self._id = request_id
        self._held = False

    def stage(self, name: str) -> None:
        self._channel.send({"type": "stage", "id": self._id, "stage": name})

    def acquire_lease(self) -> None:
        self._channel.send({"type": "lease", "id": self._id, "op": "acquire"})
        while True:
            msg = self._channel.receive()
            if msg is None or msg.get("type") == "shutdown":
                raise EngineGone("the engine went away while the worker waited for the GPU lease")
            if msg.get("type") == "lease_granted":
                self._held = True
                return
            print(f"kernelsmith_worker: ignoring {msg.get('type')!r} while waiting for the lease",
                  file=sys.stderr, flush=True)

    def release_lease(self) -> None:
        if self._held:
            self._held = False
            self._channel.send({"type": "lease", "id": self._id, "op": "release"})


def load_time_pair() -> tuple[Any, Any, str]:
    """(timing.time_pair, ref_alone.time_alone, ""), or (None, None, why they cannot be
    loaded)."""
    try:
        timing = importlib.import_module("kernelsmith_worker.timing")
        alone = importlib.import_module("kernelsmith_worker.ref_alone")
    except Exception as e:
        return None, None, f"kernelsmith_worker's timing does not import: {errors.describe(e)}"
    fn, fn_alone = getattr(timing, "time_pair", None), getattr(alone, "time_alone", None)
    if not callable(fn) or not callable(fn_alone):
        return None, None, "kernelsmith_worker has no timing.time_pair() or ref_alone.time_alone()"
    return fn, fn_alone, ""


def build_context(scratch: Path, clock: StartClock | None = None) -> WorkerContext:
    """Sets up everything that must exist before a candidate is imported: backend caches and
    hooks, launch hooks, the integrity snapshot (last, so it sees the hooks). `clock` is told
    where each phase ends."""
    clock = clock or StartClock()
    # Triton's host modules built in this worker's own folder, before anything loads one
    after_import("triton.runtime.build", triton_hosts.install)
    backends = registry()
    for b in backends.values():
        b.prepare()
    # torch extensions refused to candidates of other backends than cuda (after the cuda
    # backend's own hook, so this one is called first)
    after_import("torch.utils.cpp_extension", native_builds.install)
    recorder = LaunchRecorder()
    install(recorder)
    time_pair, time_alone, why = load_time_pair()
    import kernelsmith_worker.cpu_ext  # noqa: F401 - imported so the snapshot covers it
    library_reach.install()  # ctypes lookups and map reads by candidate code, from import on
    observer_switches.collect()  # torch's switches of the audit's observers, by identity
    observer_switches.install()  # ... and stand-ins for them, whatever route calls them
    if not pc_sample.install():  # the CPU sampler's SIGPROF handler, before the signal snapshot
        print(f"kernelsmith_worker: {pc_sample._Sampler.why_not}", file=sys.stderr, flush=True)
    clock.mark("backends, launch hooks, timing")
    # CPU timings: both sides the same threads, on a GPU host too (a cpu-backend candidate
    # there is held to the same budget); before the snapshot, which watches it
    apply_cpu_threads(cpu_threads())
    gpu = device_info() if torch.cuda.is_available() else None
    if gpu is not None:
        torch.cuda.init()
        clock.mark("CUDA init")
        # every kernel from here on is recorded, before any candidate can run
        from kernelsmith_worker import kernel_log

        log = kernel_log.start()
        if log is None:
            print(f"kernelsmith_worker: {kernel_log.why_not()}", file=sys.stderr, flush=True)
        clock.mark("kernel log")
        # Threads torch starts once, started now so that none of them is later taken for a
        # candidate's (os_threads.ThreadWatch): its CPU thread pool, and the profiler's thread
        # (the audit's CPU-only profiler, gpu_profile.host_ops_of; the log is registered
        # again after it).
        torch.ones(1 << 20).sum()
        host_ops_of(lambda: torch.ones(1).add_(1))
        if log is not None:
            log.restart()
        device_state = DeviceState()  # before any candidate can change it
        clock.mark("thread pools, device state")
    else:
        host_ops_of(lambda: torch.ones(1).add_(1))  # the audit profiler's thread, started now
        device_state = None
    become_subreaper()  # a candidate's process that double-forks stays the worker's child
    native_builds.at_worker_start()  # the folders libraries were loaded from so far
    cpu_account.calibrate()  # what a thread that never blocks reads as blocked here
    guard = IntegrityGuard()
    clock.mark("integrity snapshot")
    return WorkerContext(backends=backends, recorder=recorder, guard=guard, cache=InputCache(),
                         loader=ModuleLoader(scratch), gpu_info=gpu, time_pair=time_pair,
                         time_alone=time_alone,
                         timing_unavailable=why, device_state=device_state,
                         signal_state=SignalState())


def handle_eval(channel: Channel, ctx: WorkerContext, msg: dict[str, Any]) -> None:
    """Sends exactly one result for msg (an eval request)."""
    request_id = str(msg.get("id", ""))
    events = ProtocolEvents(channel, request_id)
    poisoned = False
    try:
        req = EvalRequest.from_message(msg)
    except ValueError as e:
        result: dict[str, Any] = {"status": "infra_error", "message": f"bad eval request: {e}",
                                  "backend": str(msg.get("backend", "")), "findings": [],
                                  "stages": {}, "speedup": None, "speedup_ci95": None,
                                  "ref_us": None, "cand_us": None, "cv": None,
                                  "device": ctx.gpu_info or {"kind": "cpu"}}
    else:
        try:
            native_builds.request_backend(req.backend)
            result, poisoned = evaluate(req, ctx, events)
        finally:
            events.release_lease()
    sys.stdout.flush()
    sys.stderr.flush()
    channel.send({"type": "result", "id": request_id, "result": result,
                  "worker_poisoned": poisoned})


def serve(channel: Channel, ctx: WorkerContext) -> int:
    """Answers requests until shutdown (0) or EOF (0)."""
    while True:
        msg = channel.receive()
        if msg is None:
            return 0
        kind = msg.get("type")
        if kind == "shutdown":
            return 0
        if kind == "eval":
            try:
                handle_eval(channel, ctx, msg)
            except EngineGone:
                return 0
            continue
        print(f"kernelsmith_worker: ignoring unknown message type {kind!r}", file=sys.stderr,
              flush=True)


def main(clock: StartClock | None = None) -> int:
    """Serves the protocol; `clock` (started when the process began) times the start-up
    phases that hello reports."""
    clock = clock or StartClock()
    try:
        channel = Channel.from_env()
    except ProtocolError as e:
        print(f"kernelsmith_worker: {e}", file=sys.stderr, flush=True)
        return 2
    try:
        ctx = build_context(Path(os.getcwd()), clock)
    except ValueError as e:  # a bad setting (KS_CPU_THREADS): said once, clearly
        print(f"kernelsmith_worker: {e}", file=sys.stderr, flush=True)
        return 2
    names = available(ctx.backends)
    device = ctx.gpu_info or cpu_device_info()
    try:
        hello = hello_message(__version__, PROTOCOL_VERSION, names, device)
        clock.mark("hello")
        hello["start_phases"] = clock.phases()
        channel.send(hello)
        return serve(channel, ctx)
    except ProtocolError as e:
        print(f"kernelsmith_worker: {e}", file=sys.stderr, flush=True)
        return 3
