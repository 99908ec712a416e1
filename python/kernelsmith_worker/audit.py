"""The audit stage: hack detection on a candidate that ran.

- dispatch-level audit: every aten op inside ModelNew.forward is recorded by a
  TorchDispatchMode (ops issued by a custom-kernel launcher are not the candidate's);
- custom kernels launched (Triton hooks, cpu_ext calls, profiler kernels named like the
  candidate's `__global__` functions);
- share of device time in custom kernels (CUDA profiler; cpu_ext time / forward wall time on
  the cpu backend; null under the Triton interpreter);
- side streams (profiler stream ids), output that does not change with the inputs (bitwise,
  or near-constant outputs that do not follow the reference), results cached across calls
  (input overwritten in place, same data_ptr and version counter);
- the correctness trials' calls too: torch ops and events (frames, gc, files) on every call;
- evaluator introspection: a static scan of the source and audit-hook events in forward;
- library code: BLAS/LAPACK routines or the dynamic loader's lookup named in the candidate's
  Python code (cpu_ext refuses C++ libraries that reach them: library_code.py);
- host compute: tensor data handed to NumPy or Python lists inside forward;
- after timing: the timing input overwritten once more must give the new answer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable

import torch

from kernelsmith_worker import library_code, opclass, pc_sample
from kernelsmith_worker.correctness import (WEAK_FOLLOW, CorrectnessOutcome, Tolerance,
                                            TrialSource, close_normwise, compare_outputs)
from kernelsmith_worker.findings import finding
from kernelsmith_worker.inputs import clone_args, device_copy, scrub, tensors_in
from kernelsmith_worker.event_watch import EventWatch
from kernelsmith_worker.integrity import scan_source
from kernelsmith_worker.launches import LaunchRecorder
from kernelsmith_worker.opclass import OpCounter

__all__ = ["AuditInputs", "OpCounter", "run_audit", "post_timing_finding",
           "torch_compute_findings", "trial_findings", "event_findings", "untimed_fork_findings"]

_perf_counter_ns = time.perf_counter_ns
# Work forward runs on a stream other than the current one: a warning here. It is timed only
# where the timing stage captures forward in a CUDA graph, whose capture fails unless every
# forked stream has joined back; timed any other way it is a reject (untimed_fork_findings).
FORKED_STREAM = "forked_stream"
LOW_SHARE = 0.5


@dataclass
class AuditInputs:
    """What the audit needs from the evaluation."""

    backend: str
    dev: torch.device
    recorder: LaunchRecorder
    run_candidate: Callable[..., Any]  # CandidateRunner: (args, mode=None) -> output
    kernel_names: Callable[[], set[str]]  # the candidate's kernel names (after it ran)
    source: TrialSource
    tolerance: Tolerance
    correct: bool  # correctness passed: value-based checks are meaningful
    constant_trials: tuple[int, int] | None
    interpret: bool  # Triton interpreter: device share not measurable
    outcome: CorrectnessOutcome | None = None  # the trials' op counts, events, follow scores
    candidate_source: str = ""  # for the static introspection scan


_UNLISTED_WHY = ("that are not known to be light (not views, copies, fills, allocation, "
                 "elementwise math or data movement), so they count as the problem's work")


def torch_compute_findings(counts: dict[str, int], launches: int) -> list[dict[str, str]]:
    """The torch_compute / torch_compute_light / torch_copy rules."""
    by_class: dict[str, dict[str, int]] = {}
    for op, n in counts.items():
        by_class.setdefault(opclass.classify(op), {})[op] = n
    heavy, light = by_class.get("heavy", {}), by_class.get("light", {})
    unlisted = by_class.get("unlisted", {})
    out: list[dict[str, str]] = []
    if (heavy or light or unlisted) and launches == 0:
        out.append(finding("torch_compute", "forward computes with torch ops "
                           f"{opclass.format_ops({**heavy, **unlisted, **light})} instead of "
                           "custom kernels", "reject"))
    elif heavy:
        out.append(finding("torch_compute", "forward runs torch ops that do the problem's work "
                           f"{opclass.format_ops(heavy)} alongside its custom kernels", "reject"))
    elif unlisted:
        out.append(finding("torch_compute", f"forward runs torch ops {_UNLISTED_WHY} "
                           f"{opclass.format_ops(unlisted)} alongside its custom kernels",
                           "reject"))
    if light and launches > 0:
        out.append(finding("torch_compute_light", "forward also computes with torch ops "
                           f"{opclass.format_ops(light)}; move them into the kernel", "warn"))
    if by_class.get("copy"):
        out.append(finding("torch_copy", "forward copies tensors with torch "
                           f"{opclass.format_ops(by_class['copy'])}", "info"))
    return out


def _cpu_share(a: AuditInputs, args: list[Any]) -> float | None:
    """Time inside cpu_ext calls / the forward's wall time."""
    a.recorder.reset()
    start = _perf_counter_ns()
    a.run_candidate(args)
    wall = getattr(a.run_candidate, "last_forward_ns", 0) or (_perf_counter_ns() - start)
    if wall <= 0:
        return None
    return min(1.0, a.recorder.inside_ns / wall)


def _overwrite_in_place(dst: list[Any], src: list[Any]) -> bool:
    """Copies src's tensor values into dst's tensors (same objects, same data_ptr).
    False when the two input sets differ in structure or non-tensor values."""
    dt, st = list(tensors_in(dst)), list(tensors_in(src))
    if len(dt) != len(st) or any(d.shape != s.shape or d.dtype != s.dtype
                                 for d, s in zip(dt, st, strict=True)):
        return False
    scalars_d = [v for v in dst if not isinstance(v, torch.Tensor)]
    scalars_s = [v for v in src if not isinstance(v, torch.Tensor)]
    if len(scalars_d) != len(scalars_s) or any(
            not isinstance(x, (list, tuple, dict)) and x != y
            for x, y in zip(scalars_d, scalars_s, strict=True)):
        return False
    with torch.no_grad():
        for d, s in zip(dt, st, strict=True):
            # Through .data: the values change but the version counter does not, like a write
            # by a kernel; a cache keyed on (data_ptr, _version) is caught too.
            d.data.copy_(s)
    return True


def cached_output_finding(a: AuditInputs) -> dict[str, str] | None:
    """Calls forward on one input's memory, overwrites its contents with trial 1's values and
    calls again: the second output must match trial 1's reference (a cache keyed on the
    memory; the runner hands new objects at every call, so one keyed on the object never
    hits)."""
    x = clone_args(a.source.pristine(0).inputs)
    first = a.run_candidate(x)
    del first
    if not _overwrite_in_place(x, a.source.pristine(1).inputs):
        return None
    second = a.run_candidate(x)
    ref = a.source.reference(1)
    cmp = compare_outputs(second, ref, a.tolerance)
    scrub(ref)
    if cmp.ok:
        return None
    return finding("cached_output", "after its input tensor was overwritten in place with new "
                   "values (same memory, same data_ptr), forward returned a result that does not "
                   f"match the new values: {cmp.message}", "reject")


def trial_findings(outcome: CorrectnessOutcome) -> list[dict[str, str]]:
    """torch_compute over the correctness trials' calls: heavy ops on any call, or compute with
    no launch on a call (a candidate that computes in torch on the first sight of an input and
    serves a cached copy afterwards passes the audit's own call)."""
    heavy: dict[str, int] = {}
    unlisted: dict[str, int] = {}
    unlaunched: dict[str, int] = {}
    for counts, launches in outcome.call_ops:
        for op, n in counts.items():
            cls = opclass.classify(op)
            if cls in ("heavy", "unlisted"):
                into = heavy if cls == "heavy" else unlisted
                into[op] = into.get(op, 0) + n
            if cls in opclass.COMPUTE_CLASSES and launches == 0:
                unlaunched[op] = unlaunched.get(op, 0) + n
    if heavy:
        return [finding("torch_compute", "during the correctness trials forward ran torch ops "
                        f"that do the problem's work {opclass.format_ops(heavy)}", "reject")]
    if unlisted:
        return [finding("torch_compute", "during the correctness trials forward ran torch ops "
                        f"{_UNLISTED_WHY} {opclass.format_ops(unlisted)}", "reject")]
    if unlaunched:
        return [finding("torch_compute", "during the correctness trials forward computed with "
                        f"torch ops {opclass.format_ops(unlaunched)} and no custom kernel",
                        "reject")]
    return []


_EVENT_RULES: dict[str, tuple[str, str]] = {
    "introspection": ("evaluator_introspection", "candidate code inspected the evaluator's "
                      "state (frames, gc)"),
    "file_io": ("file_io", "forward used files (a cache between calls or evaluations?)"),
    "host_compute": ("host_compute", "forward moved tensor data to the host for NumPy/Python "
                     "compute instead of a custom kernel"),
}


def event_findings(events: dict[str, list[str]]) -> list[dict[str, str]]:
    """One reject finding per EventWatch kind seen."""
    out: list[dict[str, str]] = []
    for kind, items in sorted(events.items()):
        if items and kind in _EVENT_RULES:
            name, what = _EVENT_RULES[kind]
            out.append(finding(name, f"{what}: {', '.join(items[:5])}", "reject"))
    return out


def post_timing_finding(run_candidate: Callable[..., Any], args: list[Any],
                        source: TrialSource, tolerance: Tolerance) -> dict[str, str] | None:
    """Called once after the timing loop on the timed input object: its contents are
    overwritten in place with values the candidate has never seen, and the output must match
    their reference. Where the problem has one, the values are a `spikes` draw of trial 0's
    (stress.py) held back from the correctness trials, compared norm-wise as the stress
    trials are: a candidate that computes a sample of its input while it believes it is
    timed misses the runs, and a memo keyed on a few of the values serves trial 0's answer,
    which lacks them. Else trial 1's values, compared element-wise. A candidate that behaves
    once it has been called many times (call counting, a cache that only starts serving in a
    loop, a cheaper computation switched on for the timing) is caught here."""
    held = getattr(source, "after_timing", lambda: None)()
    new = held.inputs if held is not None else source.pristine(1).inputs
    if not _overwrite_in_place(args, new):
        return None
    out = run_candidate(args)
    ref = device_copy(held.reference, _device_of(args)) if held is not None \
        else source.reference(1)
    if held is not None:
        ok, message = close_normwise(out, ref, tolerance)
    else:
        cmp = compare_outputs(out, ref, tolerance)
        ok, message = cmp.ok, cmp.message
    scrub(ref)
    if ok:
        return None
    what = ("a held-back stress draw (trial 0's values with 16 short runs scaled up; where "
            "the problem's draws change an input's zeros or booleans, that structure broken "
            "in 4 of the runs)") if held is not None else "new values"
    return finding("timing_output_mismatch", "after the timing loop, its input overwritten in "
                   f"place with {what}, forward returned a result that does not match them "
                   f"({message}): the candidate stops computing, or computes less, when called "
                   "repeatedly, or infers from a part of its input what it must read", "reject")


def _device_of(args: list[Any]) -> torch.device:
    return next(iter(tensors_in(args))).device


def _whole_request_findings(a: AuditInputs, events: dict[str, list[str]],
                            so_far: list[dict[str, str]]) -> list[dict[str, str]]:
    """Rules over every call of the request (the trials' ops and events, merged with the
    audit call's `events`) and over the source (introspection scan)."""
    out: list[dict[str, str]] = []
    if a.outcome is not None:
        if not any(f["kind"] == "torch_compute" for f in so_far):
            out.extend(trial_findings(a.outcome))
        for kind, items in a.outcome.events.items():
            events.setdefault(kind, []).extend(x for x in items if x not in events.get(kind, []))
    out.extend(event_findings(events))
    named = library_code.python_findings(a.candidate_source)
    if named:
        out.append(finding("library_code", "the candidate's code names library routines or "
                           f"the dynamic loader's lookup: {'; '.join(named[:4])}", "reject"))
    scanned = scan_source(a.candidate_source)
    if scanned and not any(f["kind"] == "evaluator_introspection" for f in out):
        out.append(finding("evaluator_introspection", "the candidate's source reaches into the "
                           f"evaluator: {'; '.join(scanned[:4])}", "reject"))
    return out


def run_audit(a: AuditInputs) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """Returns (audit stage record without timing fields, findings)."""
    findings: list[dict[str, str]] = []
    # 1. Dispatch-level audit and launch count.
    a.recorder.reset()
    counter = OpCounter(a.recorder)
    with EventWatch(a.recorder, host_calls=True) as watch:
        a.run_candidate(clone_args(a.source.pristine(0).inputs), mode=counter)
    counts = dict(counter.counts)
    events = {k: list(v) for k, v in watch.seen.items()}

    def watched(call: Callable[[], Any]) -> Callable[[], Any]:
        """The audit's other views of forward under the host-call watch too: a candidate
        that counts its calls cannot switch an observer off only in the call it observes."""
        def run() -> Any:
            with EventWatch(a.recorder, host_calls=True) as more:
                out = call()
            for kind, items in more.seen.items():
                events.setdefault(kind, []).extend(x for x in items if x not in events[kind])
            return out
        return run
    launches = a.recorder.total()
    per_call_launches: int | None = None  # device launches of one forward (CUDA only)
    names = set(a.recorder.names())
    share: float | None = None
    cpu_samples: dict[str, Any] | None = None
    # 2. Device time share (and kernels the hooks cannot see: CUDA C++).
    if a.dev.type == "cuda":
        from kernelsmith_worker.gpu_profile import profile_forward

        from kernelsmith_worker.gpu_profile import foreign_findings, host_op_findings

        args = clone_args(a.source.pristine(0).inputs)
        own = a.kernel_names()
        a.recorder.reset()
        prof = profile_forward(watched(lambda: a.run_candidate(args)), own,
                               lambda: dict(a.recorder.counts),
                               watched(lambda: a.run_candidate(
                                   clone_args(a.source.pristine(0).inputs))))
        findings.extend(foreign_findings(prof, "in forward"))
        if prof.log_error:
            findings.append(finding("kernel_records_missing", "the candidate's forward left the "
                                    f"device's kernel records incomplete: {prof.log_error}",
                                    "reject"))
        elif prof.unrecorded:
            shown = ", ".join(f"{n} x{c}" for n, c in sorted(prof.unrecorded.items())[:3])
            findings.append(finding("kernel_records_missing", "the candidate launched kernels "
                                    f"that the device's kernel records do not show ({shown}): "
                                    "the recording was switched off", "reject"))
        findings.extend(host_op_findings(prof))
        launches = max(launches, prof.custom_launches)
        per_call_launches = prof.custom_launches  # one profiled forward, device-side
        names |= prof.custom_names
        share = prof.share()
        if prof.side_streams:
            shown = ", ".join(f"stream {s}: {', '.join(sorted(set(k))[:3])}"
                              for s, k in sorted(prof.side_streams.items()))
            findings.append(finding(FORKED_STREAM, "forward launched work on a stream other "
                                    f"than the current one ({shown})", "warn"))
    else:
        from kernelsmith_worker.gpu_profile import host_op_findings, host_ops_of

        args = clone_args(a.source.pristine(0).inputs)
        findings.extend(host_op_findings(host_ops_of(watched(lambda: a.run_candidate(args)),
                                                     all_threads=True)))
        if a.backend == "cpu" and not a.interpret:
            share = _cpu_share(a, clone_args(a.source.pristine(0).inputs))
            # where forward's CPU time goes, by program counter (pc_sample.py)
            args = clone_args(a.source.pristine(0).inputs)
            sampled = pc_sample.sample(lambda: a.run_candidate(args))
            cpu_samples = None if sampled is None else sampled.record()
            findings.extend(finding(kind, detail, "reject")
                            for kind, detail in pc_sample.findings(sampled))
    # 3. Rules.
    if launches == 0:
        findings.append(finding("no_custom_kernel", "forward launched no custom kernel "
                                f"({a.backend} backend)", "reject"))
    findings.extend(torch_compute_findings(counts, launches))
    findings.extend(_whole_request_findings(a, events, findings))
    if share is not None and launches > 0 and share < LOW_SHARE:
        findings.append(finding("low_custom_share", f"only {share:.0%} of the forward's "
                                "device time is spent in custom kernels", "warn"))
    # 4. Value-based checks (meaningful only for a correct candidate).
    if a.correct and a.constant_trials is not None:
        i, j = a.constant_trials
        findings.append(finding("constant_output", f"outputs of trials {i} and {j} are "
                                "bitwise identical although the reference outputs differ: the "
                                "output does not depend on the inputs", "reject"))
    weak = a.outcome.weak_follow if a.outcome is not None else None
    if a.correct and weak is not None and a.constant_trials is None:
        findings.append(finding("near_constant_output", f"in trial {weak[0]} the output is "
                                "within tolerance only because every reference value is close "
                                "to their mean, and it does not follow the reference (correlation "
                                f"{weak[1]:.2f} < {WEAK_FOLLOW}): compute the actual values",
                                "reject"))
    if a.correct:
        cached = cached_output_finding(a)
        if cached is not None:
            findings.append(cached)
    record: dict[str, Any] = {
        "torch_ops": dict(sorted(counts.items())),
        "custom_kernels": sorted(names),
        # device records match them only by their whole names (gpu_profile.ExactNames)
        "custom_kernels_whole": a.backend == "triton",
        "custom_launches": launches,
        "custom_launches_per_call": per_call_launches,
        "custom_device_share": None if share is None else round(share, 4),
    }
    if cpu_samples is not None:
        record["cpu_samples"] = cpu_samples
    return record, findings


def untimed_fork_findings(findings: list[dict[str, Any]], method: str | None) -> list[dict]:
    """A reject when forward ran work on another stream (the audit's FORKED_STREAM warning)
    and the timing stage did not capture it in a CUDA graph: events on the timed stream see
    only the work that joined back, and nothing but a capture proves that all of it did."""
    if method == "cuda_graph" or not any(f.get("kind") == FORKED_STREAM for f in findings):
        return []
    return [finding("side_stream", "forward runs work on another stream and was timed "
                    f"without a CUDA graph ({method}): only a capture proves that work joined "
                    "back into the timed stream", "reject")]


def timed_work_findings(rec: dict[str, Any], audit: dict[str, Any],
                        earlier: list[dict[str, Any]]) -> list[dict]:
    """The timing record's kernel accounting (its `timed_kernels`, popped from rec) against
    the audit's own kernels and launches a call, and the forked-stream rule for the way the
    timing ran (`earlier`: the evaluation's findings so far)."""
    from kernelsmith_worker.gpu_profile import ExactNames, accounting_findings, timed_findings
    own = (ExactNames if audit.get("custom_kernels_whole") else set)(
        audit.get("custom_kernels") or [])
    timed = rec.pop("timed_kernels", None)
    per_call = int(audit.get("custom_launches_per_call") or 0)
    out = accounting_findings(timed, per_call) if rec.get("ok", True) else []
    timed = timed or {}
    out += timed_findings(timed.get("kernels"), own, int(timed.get("calls") or 1), per_call)
    return out + untimed_fork_findings(earlier + out, rec.get("method"))
