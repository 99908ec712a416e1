"""One candidate forward with the kernel log's window open: which kernels ran, on which
streams, and how much of the device time was the candidate's own kernels; and the launch
accounting findings of timed calls."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any
from collections.abc import Callable

import torch
from torch.autograd.profiler import profile as _profile


def _is_marker(name: str) -> bool:
    """torch.cuda._sleep's kernel (torch's own: at::cuda::...::spin_kernel), the marker the
    evaluator launches on the current stream first."""
    return "spin_kernel" in name and "at::cuda::" in name
# Kernels of torch/ATen itself never count as the candidate's, whatever their names.
_TORCH_NAMESPACES = ("at::native::", "at::cuda::", "at_cuda_detail", "c10::")


class ExactNames(set):
    """Kernel names a device record matches only whole (the argument list CUPTI may add
    aside): a Triton kernel runs under exactly the name it was compiled with, so a word of
    a longer name (torch's at::native::...vectorized_layer_norm_kernel<float>) is not it."""


def _base(kernel: str) -> str:
    """A record's name without the argument list and return type CUPTI reports for C++."""
    return re.sub(r"^void\s+", "", kernel.split("(", 1)[0]).strip()


def kernel_matches(kernel: str, names: set[str]) -> str | None:
    """The candidate kernel name that `kernel` (a profiler kernel name, possibly demangled
    C++ like 'void ns::k<128>(float*, int)') is an instance of, else None."""
    if any(ns in kernel for ns in _TORCH_NAMESPACES):
        return None
    if isinstance(names, ExactNames):
        base = _base(kernel)
        return kernel if kernel in names else (base if base in names else None)
    for n in names:
        if kernel == n or re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", kernel):
            return n
    return None


# Device work that moves or fills memory: allowed next to the candidate's kernels. The
# kernel log names memcpy and memset records "[memcpy ...]" and "[memset]": no kernel's
# name can start with "[".
_GLUE = re.compile(r"^\[mem(?:cpy|set)\b|at::native::.*"
                   r"(copy|Copy|fill|Fill|CatArray|cat_|FillFunctor|zero)", re.S)
# Library compute kernels (cuBLAS, cuBLASLt, CUTLASS, cuDNN, torch's own flash attention):
# the problem's work done by a library, whoever launched it.
_LIBRARY = re.compile(r"gemm|xmma|cutlass|cublas|nvjet|sgemm|hgemm|gemv|splitKreduce|"
                      r"cudnn|conv2d|convolve|implicit_conv|wgrad|dgrad|fmha|flash_fwd|"
                      r"flash_bwd|pytorch_flash|attention_kernel|cusparse|cufft|fft_", re.I)
FOREIGN_REJECT_SHARE = 0.25  # other foreign device work above this share is a reject
GLUE_REJECT_SHARE = 0.5  # torch's copies and fills above this share are a reject


@dataclass
class KernelProfile:
    total_us: float = 0.0  # device time of every kernel/memcpy/memset in the forward
    custom_us: float = 0.0
    custom_launches: int = 0
    custom_names: set[str] = field(default_factory=set)
    kernels: int = 0
    marker_stream: int | None = None
    side_streams: dict[int, list[str]] = field(default_factory=dict)  # stream → kernel names
    foreign_us: float = 0.0  # device time of kernels neither the candidate's nor glue
    glue_us: float = 0.0  # device time of torch's copy and fill kernels
    foreign: dict[str, int] = field(default_factory=dict)  # name → launches
    library: dict[str, int] = field(default_factory=dict)  # library compute kernels
    host_ops: dict[str, int] = field(default_factory=dict)  # aten ops the profiler saw
    # launches the hooks counted that the kernel log did not record (it was switched off)
    unrecorded: dict[str, int] = field(default_factory=dict)
    log_error: str = ""  # the kernel log's window of the call failed: why

    def share(self) -> float | None:
        return self.custom_us / self.total_us if self.total_us > 0 else None

    def foreign_share(self) -> float | None:
        return self.foreign_us / self.total_us if self.total_us > 0 else None


def _own(kernel: str, names: set[str], hooked: dict[str, int], seen: dict[str, int],
         n: int = 1) -> tuple[str | None, int]:
    """The candidate kernel `kernel` is an instance of (or None), and how many of its `n`
    launches are the candidate's. A name the launch hooks counted is the candidate's only as
    many times as the hooks saw it launched (a Triton kernel named like a cuBLAS kernel does
    not make the cuBLAS kernel the candidate's); a library-looking name must match exactly,
    but for the argument list CUPTI reports with a C++ kernel's name (wmma_tf32_gemm(float
    const*, ...) is the candidate's wmma_tf32_gemm)."""
    base = _base(kernel)  # CUPTI adds the arguments
    if kernel in names:
        match: str | None = kernel
    elif _LIBRARY.search(kernel):
        if base not in names:
            return None, 0
        match = base
    else:
        match = kernel_matches(kernel, names)
    if match is None:
        return None, 0
    if match not in hooked:
        return match, n
    own = max(0, min(n, hooked[match] - seen.get(match, 0)))
    seen[match] = seen.get(match, 0) + n
    return match, own


def classify_events(events: list[Any], names: set[str],
                    hooked: dict[str, int] | None = None, markers: int = 0) -> KernelProfile:
    """Summarises device kernels: objects with `name`, `device_resource_id` (the stream),
    `time_range.elapsed_us()` (device time) and optionally `count` (launches summed in that
    time, default 1). `markers`: how many of torch's marker kernels (torch.cuda._sleep) the
    evaluator launched: they are left out, and the first names the current stream; any other
    kernel counts, whatever its name. `hooked`: launches per kernel name that the launch
    hooks counted in the same call."""
    result = KernelProfile()
    seen: dict[str, int] = {}
    for e in events:
        if markers and _is_marker(e.name):
            result.marker_stream = e.device_resource_id
            break
    left = markers
    for e in events:
        n = int(getattr(e, "count", 1))
        us = float(e.time_range.elapsed_us())
        if left and _is_marker(e.name):
            skip = min(left, n)
            left -= skip
            us, n = us * (n - skip) / n, n - skip
        if n <= 0:
            continue
        result.kernels += n
        result.total_us += us
        match, own = _own(e.name, names, hooked or {}, seen, n)
        if match is not None and own > 0:
            result.custom_us += us * own / n
            result.custom_launches += own
            result.custom_names.add(match)
        rest = n - own
        if rest > 0 and _GLUE.search(e.name):
            result.glue_us += us * rest / n
        elif rest > 0:
            result.foreign_us += us * rest / n
            short = e.name[:100]
            result.foreign[short] = result.foreign.get(short, 0) + rest
            if _LIBRARY.search(e.name):
                result.library[short] = result.library.get(short, 0) + rest
        if result.marker_stream is not None and e.device_resource_id != result.marker_stream:
            result.side_streams.setdefault(e.device_resource_id, []).append(e.name[:80])
    return result


def foreign_findings(prof: KernelProfile, where: str) -> list[dict[str, str]]:
    """Reject findings for device work the candidate's own kernels do not account for:
    library compute kernels, or other foreign work above FOREIGN_REJECT_SHARE of the time;
    below that, a warning."""
    from kernelsmith_worker.findings import finding

    out: list[dict[str, str]] = []
    if prof.library:
        shown = ", ".join(f"{n} x{c}" for n, c in sorted(prof.library.items())[:3])
        out.append(finding("foreign_compute", f"{where}, library compute kernels ran that the "
                           f"candidate's own kernels do not account for ({shown}): the "
                           "problem's work is done by a library (cuBLAS/cuDNN/...), however it "
                           "was called", "reject"))
        return out
    if prof.total_us > 0 and prof.glue_us > GLUE_REJECT_SHARE * prof.total_us:
        out.append(finding("glue_compute", f"{where}, {prof.glue_us / prof.total_us:.0%} of the "
                           "device time is in torch's copy and fill kernels: copies do not "
                           "take most of the time of a kernel that computes", "reject"))
        return out
    share = prof.foreign_share()
    if prof.foreign and share is not None:
        shown = ", ".join(f"{n} x{c}" for n, c in sorted(prof.foreign.items())[:3])
        severe = share >= FOREIGN_REJECT_SHARE
        out.append(finding("foreign_compute" if severe else "torch_compute_light",
                           f"{where}, {share:.0%} of the device time is in kernels that are not "
                           f"the candidate's ({shown})", "reject" if severe else "warn"))
    return out


def host_op_findings(prof: KernelProfile) -> list[dict[str, str]]:
    """Heavy aten ops the profiler saw inside forward (it sees ops in custom ops, launch
    hooks and under dispatch guards, which a TorchDispatchMode does not)."""
    from kernelsmith_worker import opclass
    from kernelsmith_worker.findings import finding

    heavy = {op: n for op, n in prof.host_ops.items() if opclass.classify(op) == "heavy"}
    if not heavy:
        return []
    return [finding("torch_compute", "forward ran torch ops that do the problem's work "
                    f"{opclass.format_ops(heavy)} (seen by the profiler: hidden from the "
                    "dispatch-level audit)", "reject")]


def _groups(kernels: list[Any]) -> list[SimpleNamespace]:
    """Kernel-log groups as the events classify_events reads."""
    return [SimpleNamespace(name=g.name, device_resource_id=g.stream, count=g.count,
                            time_range=SimpleNamespace(elapsed_us=lambda us=g.total_us: us))
            for g in kernels]


def profile_forward(call: Callable[[], Any], names: set[str],
                    hooked: Callable[[], dict[str, int]] | None = None,
                    again: Callable[[], Any] | None = None) -> KernelProfile:
    """Runs call() once with the kernel log's window open and classifies the kernels it ran;
    a short spin kernel launched first on the current stream identifies that stream.
    `hooked()` (read after the call): launches per kernel name counted by the launch hooks
    during it. Then runs call() again under torch's CPU profiler for the aten ops it ran
    (ops in custom ops, launch hooks and under dispatch guards, which a TorchDispatchMode
    does not see), and registers the log with CUPTI again (the profiler takes it over).
    Raises KernelLogError when the worker has no kernel log."""
    from kernelsmith_worker import kernel_log

    log = kernel_log.current()
    if log is None:
        raise kernel_log.KernelLogError(kernel_log.why_not())
    torch.cuda.synchronize()
    missing = ""
    try:
        log.take("none")
    except kernel_log.KernelLogError as e:  # paused by someone else before the call
        missing = str(e)
    torch.cuda._sleep(1000)
    call()
    torch.cuda.synchronize()
    try:
        kernels = log.take("strict")
    except kernel_log.KernelLogError as e:  # records switched off by the call
        kernels, missing = [], missing or str(e)
    hooks = hooked() if hooked is not None else {}
    result = classify_events(_groups(kernels), names, hooks, markers=1)
    result.log_error = missing
    seen = {n: sum(g.count for g in kernels if kernel_matches(g.name, {n})) for n in hooks}
    result.unrecorded = {n: c - seen[n] for n, c in hooks.items() if c > seen[n]}
    try:
        result.host_ops = host_ops_of(again or call).host_ops
    finally:
        log.restart()
    return result


# A timed sample of k calls must launch at least this share of k times the candidate's
# launches in one profiled forward of the audit.
TIMED_LAUNCH_SHARE = 0.5


def timed_findings(kernels: list[list] | None, names: set[str], calls: int = 1,
                   per_call: int = 0) -> list[dict[str, str]]:
    """foreign_findings over the kernels of the accounted timed calls ([name, us, launches]
    from the kernel log; launches default to 1), and a reject when those `calls` calls
    launched far fewer of the candidate's kernels than `per_call` (the audit's accounted
    forward) each: calls batched into one launch, or skipped, while timed."""
    if kernels is None:  # not accounted (CPU)
        return []
    events = [SimpleNamespace(name=k[0], device_resource_id=0,
                              count=int(k[2]) if len(k) > 2 else 1,
                              time_range=SimpleNamespace(elapsed_us=lambda us=k[1]: us))
              for k in kernels]
    prof = classify_events(events, names)
    out = foreign_findings(prof, "in the timed calls")
    expected = calls * per_call
    if calls >= 2 and per_call >= 1 and prof.custom_launches < TIMED_LAUNCH_SHARE * expected:
        from kernelsmith_worker.findings import finding

        out.append(finding(
            "timed_launch_deficit",
            f"{calls} timed calls launched {prof.custom_launches} of the candidate's "
            f"kernels, where one forward launches {per_call}: the calls are batched into "
            "fewer launches or skipped while timed; every call must compute its own output",
            "reject"))
    return out


def accounting_findings(timed: dict | None, per_call: int) -> list[dict[str, str]]:
    """Rejects when the launch accounting of timed calls could not be made: a sample raised
    while it was accounted, or the kernel log stopped recording (a candidate that behaves
    differently when observed, or that switched the recording off). A check that cannot run
    must not pass silently."""
    from kernelsmith_worker.findings import finding

    if timed and timed.get("error"):
        return [finding("timed_sample_failed",
                        "a candidate sample run like a timed one (accounted for the launch "
                        f"accounting) raised: {timed['error']}", "reject")]
    if timed and timed.get("interference"):
        shown = ", ".join(f"{name[:60]} x{count} on stream {stream} ({us:.0f} us)"
                          for name, stream, us, count in sorted(
                              timed["interference"], key=lambda i: -i[2])[:3])
        return [finding("reference_interference",
                        "while the reference was timed, the device ran work that is neither "
                        f"the reference's nor the evaluator's: {shown}. Work launched while "
                        "the candidate is not called (a thread, a callback, a stream left "
                        "running) slows the reference and inflates the speedup", "reject")]
    if timed and timed.get("log_error"):
        return [finding("accounting_failed", "the launch accounting of the timed calls could "
                        f"not be made: {timed['log_error']}", "reject")]
    if timed is None and per_call >= 1:
        return [finding("accounting_failed",
                        "the timed calls were not accounted, although the audit accounted the "
                        "candidate: the launch accounting of timing is missing", "reject")]
    return []


def _all_threads() -> dict[str, Any]:
    """The profiler's setting that records every thread's ops, not only the calling one's
    (torch ops in a thread that forward starts and joins), where this torch has it."""
    try:
        from torch._C._profiler import _ExperimentalConfig

        return {"experimental_config": _ExperimentalConfig(profile_all_threads=True)}
    except (ImportError, TypeError):
        return {}


def host_ops_of(call: Callable[[], Any], all_threads: bool = False) -> KernelProfile:
    """The aten ops call() ran, from the profiler's CPU activity (any device); `all_threads`:
    in every thread, not only the calling one (the cpu backend's audit: on a GPU the kernel
    log sees the device work of other threads). torch's own low-level profiler:
    torch.profiler.profile would import torch._inductor (and dynamo) on its first use, inside
    the candidate's audited call."""
    extra = _all_threads() if all_threads else {}
    with _profile(use_cpu=True, use_device=None, use_kineto=True, **extra) as prof:
        call()
    result = KernelProfile()
    for e in prof.function_events:
        if e.name.startswith("aten::"):
            op = "aten." + e.name[len("aten::"):]
            result.host_ops[op] = result.host_ops.get(op, 0) + 1
    return result
