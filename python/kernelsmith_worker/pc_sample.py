"""Where a cpu-backend candidate's CPU time goes, read from the program counter.

The audit names the torch ops forward dispatches, and library_reach.py refuses the ways a
candidate can look a library routine up. Neither sees machine code that reaches a routine
some other way (an address computed from the loader's own structures, say). What the CPU
executes cannot hide, though: pc_sample.cpp's SIGPROF handler, driven by ITIMER_PROF (the
process's CPU time, every thread), records the interrupted program counter, and the dynamic
loader names the library and the nearest exported symbol of each (dladdr). libtorch_cpu.so
exports its MKL's internals (mkl_blas_avx2_sgemm_kernel_..., 23,000 mkl_ names), Sleef's
and oneDNN's, so the samples that land in a math library's routines are counted:

- `library_code` (reject): at least MIN_SAMPLES samples and LIBRARY_SHARE of forward's
  samples in math-library code (BLAS/LAPACK/VML, Sleef, oneDNN, FBGEMM, XNNPACK, cuBLAS,
  OpenBLAS, ...), or in the compiled code of a library that is neither the candidate's
  builds, the runtime (judged by where the file is, not its name), the interpreter's
  extension modules nor torch's package (NumPy's loops, a renamed copy of a BLAS), or in
  machine code the loader does not know: a file mapped by hand is judged as that file, and
  code in anonymous memory (a routine copied there, a JIT's kernels) is foreign. An
  honest cpu_ext kernel runs its own code, libgomp, libm and libc, and the torch ops a
  kernel may call in forward (allocation, views, copies) are not math;
- `evaluator_tampering` (reject): the handler replaced, or far fewer samples than the CPU
  time forward used, measured against the rate this worker saw when it started. The signal
  is the process's, and the kernel hands it to the thread whose CPU time fired it unless
  that thread blocks it; then another thread takes it, with that thread's program counter.
  So the samples are also counted per thread against each thread's own CPU time (its
  per-thread CPU clock): a thread that used CPU time for at least MIN_EXPECTED samples and
  took fewer than MISSING_SHARE of them blocks SIGPROF, and a thread that took many more
  samples than its own CPU time explains (EXCESS_FACTOR) is taking another thread's.

Not seen, then: a thread that blocks SIGPROF and exits within forward while the signals it
sheds go to a thread that is itself busy enough to hide them (the excess is judged against a
factor, not exactly); a kernel-side sampler (perf_event_open, which the process cannot block)
would see it. cpu_ext libraries may not import pthread_sigmask or sigprocmask
(library_code.py), so the blocking itself needs a raw system call.

The handler is installed when the worker starts (before the signal snapshot) and records
only while `sample` runs; nothing is sampled where the library cannot be built (no C++
compiler: cpu_ext cannot build the candidate either).
"""

from __future__ import annotations

import bisect
import ctypes
import functools
import os
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from kernelsmith_worker import library_code, library_reach
from kernelsmith_worker.event_watch import unwatched

INTERVAL_US = 1000  # the timer's period; the kernel fires it at its own tick at the finest
MIN_SAMPLES = 5
LIBRARY_SHARE = 0.2
MISSING_SHARE = 0.5  # fewer than this share of the expected samples: the sampler was evaded
MIN_EXPECTED = 20  # ... judged only where at least this many were expected
EXCESS_FACTOR = 2.0  # a thread with more than this many times the samples its CPU time explains
EXCESS_SLACK = 10  # ... plus this many, took another thread's
TORCH_MIN_SAMPLES = 20  # a request's candidate calls with at least this many samples and
TORCH_SHARE = 0.5  # ... this share of them in torch's own kernels computed with torch
SAMPLE_CPU_S = 0.25  # forward is called until it has used this much CPU time, or
SAMPLE_CALLS = 64  # this many calls, or
SAMPLE_WALL_S = 3.0  # this much wall time

_SOURCE = Path(__file__).with_name("pc_sample.cpp")
_no_grad = torch.no_grad
# Math libraries by file, and math routines by exported name inside bundling libraries.
_MATH_LIBRARY_RE = re.compile(
    r"^lib(?:mkl|openblas|scipy_openblas|blas|cblas|lapack|flexiblas|blis|cublas|cublasLt|"
    r"cudnn|dnnl|mkldnn|xsmm|armpl|sleef|fftw|cufft|cusolver|cusparse)", re.IGNORECASE)
_MATH_SYMBOL_RE = re.compile(
    r"^(?:mkl_|MKL_|Sleef_|xnn_|nnp_|pytorch_q8|qnnp_|_ZN6fbgemm|_ZN4dnnl|_ZN6mkldnn|"
    r"_ZN4sgemm|cblas_|LAPACKE_|openblas_|gotoblas|vm?[sdcz][A-Z][a-z])")
# torch's own CPU kernels (the ATen operators, their dispatch stubs, the dispatcher): an
# honest forward reaches them only for allocation, views and the odd copy
_TORCH_LIBRARY_RE = re.compile(r"^libtorch_cpu\.so")


@dataclass
class Samples:
    """What sampled candidate calls showed (one window of forward, or a whole request)."""

    signals: int = 0  # SIGPROF signals taken (samples recorded: up to the buffer's size)
    cpu_s: float = 0.0
    calls: int = 0
    where: Counter = field(default_factory=Counter)  # (library, symbol) -> samples
    math: Counter = field(default_factory=Counter)  # the math-library ones
    torch: Counter = field(default_factory=Counter)  # the ones in torch's own kernels
    foreign: Counter = field(default_factory=Counter)  # in other packages' compiled code
    by_thread: Counter = field(default_factory=Counter)  # thread id -> samples it took
    thread_cpu_s: dict[int, float] = field(default_factory=dict)  # CPU time in the window of
    #                                      each thread alive at its end

    def record(self) -> dict[str, Any]:
        total = sum(self.where.values())
        return {"samples": total, "signals": self.signals, "cpu_s": round(self.cpu_s, 4),
                "calls": self.calls, "math_samples": sum(self.math.values()),
                "torch_samples": sum(self.torch.values()),
                "foreign_samples": sum(self.foreign.values()),
                "threads": {str(t): [self.by_thread.get(t, 0), round(c, 4)]
                            for t, c in sorted(self.thread_cpu_s.items())
                            if c > 0 or self.by_thread.get(t)},
                "top": [f"{lib}:{sym} {n}" for (lib, sym), n in self.where.most_common(5)]}


class _Sampler:
    __evaluator_state__ = True  # the evaluator's running state (data_watch.py)
    lib: Any = None
    tag: Any = None  # ctypes.c_int over the library's tag: 1 while a candidate call runs
    request: bool = False  # armed for the whole request (Request)
    window: bool = False  # armed for one sample() window
    rate: float = 0.0  # samples per CPU second seen at start
    why_not: str = "not started"


def is_math(library: str, symbol: str) -> bool:
    """A sample in `symbol` of `library` (a path, judged by identity, or a bare name) ran a
    math library's routine."""
    if library_reach.is_runtime(library):
        return False
    return bool(_MATH_LIBRARY_RE.match(os.path.basename(library)) or _MATH_SYMBOL_RE.match(symbol)
                or library_code.forbidden(symbol) == library_code.ROUTINE)


def is_torch(library: str, symbol: str) -> bool:
    """A sample in torch's own CPU kernels (not a math routine they call)."""
    return bool(_TORCH_LIBRARY_RE.match(os.path.basename(library))) \
        and not is_math(library, symbol)


def _allowed_dirs() -> tuple[str, ...]:
    """Where code a kernel's calls may run in lives besides the runtime and its own builds:
    the interpreter's extension modules and torch's package (its bindings, dispatcher and
    allocator; its kernels are judged apart, torch_compute)."""
    import sysconfig

    dynload = os.path.join(sysconfig.get_paths().get("platstdlib") or "/usr/lib", "lib-dynload")
    return (os.path.realpath(dynload), os.path.realpath(os.path.dirname(torch.__file__)))


_ALLOWED_DIRS = _allowed_dirs()


def kind_of(path: str, symbol: str) -> str:
    """What a sample at `symbol` of the library at `path` ran: "math" (a math library's
    routine), "torch" (torch's own kernels), "foreign" (a library that is neither the
    candidate's builds, the runtime, the interpreter's nor torch's: another package's compiled
    code, a copy of a library under another name), or "" (the kernel's own code, the
    runtime, the interpreter, torch's bindings; no library at all)."""
    if not path:
        return ""
    if is_math(path, symbol):
        return "math"
    if library_reach.is_runtime(path):
        return ""
    if is_torch(path, symbol):
        return "torch"
    real = os.path.realpath(path)
    if library_reach.in_system_dirs(real) or any(real.startswith(d + os.sep)
                                                 for d in _ALLOWED_DIRS):
        return ""
    return "foreign"


_open = open  # captured when the worker starts, before any candidate is imported


def executable_maps() -> list[tuple[int, int, str]]:
    """(start, end, path) of the process's executable mappings (/proc/self/maps), sorted;
    path "" for anonymous memory."""
    out = []
    with unwatched():  # the evaluator's read, not the candidate's
        try:
            with _open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            return out
    for line in lines:
        parts = line.split(None, 5)
        if len(parts) < 5 or "x" not in parts[1]:
            continue
        lo, _, hi = parts[0].partition("-")
        out.append((int(lo, 16), int(hi, 16), parts[5].strip() if len(parts) > 5 else ""))
    return sorted(out)


def unregistered(pc: int, maps: list[tuple[int, int, str]]) -> tuple[str, str]:
    """(name, kind_of) of a program counter the loader does not know: machine code mapped
    by hand from a file is judged as that file; code in anonymous memory (written at run
    time: a copy of a library's routines, a JIT's kernels such as oneDNN's) is foreign; the
    kernel's vDSO is the runtime."""
    i = bisect.bisect_right(maps, (pc, float("inf"), "")) - 1
    if i < 0 or not maps[i][0] <= pc < maps[i][1]:
        return "?", ""
    path = maps[i][2]
    if path.startswith("/"):
        return os.path.basename(path), kind_of(path, "")
    if path in ("[vdso]", "[vsyscall]"):
        return path, ""
    return path or "[anonymous]", "foreign"


def where(pc: int, maps: Callable[[], list[tuple[int, int, str]]] | None = None
          ) -> tuple[str, str, str]:
    """(library basename, nearest exported symbol, kind_of) of a program counter; `maps`
    gives the executable mappings for one the loader does not know."""
    path, sym = library_reach.locate(pc)
    if not path and maps is not None:
        name, kind = unregistered(pc, maps())
        return name, "?", kind
    return (os.path.basename(path) if path else "?"), sym or "?", kind_of(path or "", sym or "")


def thread_cpu_times() -> dict[int, float]:
    """CPU seconds of each thread of this process, read from its per-thread CPU clock
    (clockid of a thread id: Linux's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED))."""
    out: dict[int, float] = {}
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        return out
    for tid in tids:
        try:
            out[tid] = time.clock_gettime((~tid << 3) | 6)
        except OSError:  # the thread exited since the listing
            pass
    return out


def install() -> bool:
    """Builds and loads the handler (cached like cpu_ext libraries), installs it and measures
    the samples per CPU second. Once per worker, before any candidate code."""
    if _Sampler.lib is not None:
        return True
    from kernelsmith_worker import cpu_ext

    try:
        path, _ = cpu_ext.build("ks_pc_sample", _SOURCE.read_text(),
                                extra_cflags=["-fvisibility=hidden"], openmp=False)
        lib = ctypes.CDLL(str(path))
        lib.ks_pc_samples.restype = ctypes.POINTER(ctypes.c_uint64)
        lib.ks_pc_tids.restype = ctypes.POINTER(ctypes.c_int32)
        lib.ks_pc_tags.restype = ctypes.POINTER(ctypes.c_uint8)
        lib.ks_pc_tag.restype = ctypes.c_void_p
        if lib.ks_pc_install() != 0:
            raise OSError("sigaction(SIGPROF) failed")
    except (cpu_ext.CompileError, OSError) as e:
        _Sampler.why_not = f"the CPU sampler could not start: {e}"[:500]
        return False
    _Sampler.lib = lib
    _Sampler.tag = ctypes.c_int.from_address(lib.ks_pc_tag())
    spin = _window(lambda: sum(i * i for i in range(20000)), cpu_s=0.1, calls=10_000,
                   wall_s=2.0)
    _Sampler.rate = spin.signals / spin.cpu_s if spin.cpu_s > 0 else 0.0
    return True


def _tally(out: Samples, first: int, end: int, tagged_only: bool) -> None:
    """Samples first..end-1 into `out` (with tagged_only, those taken in candidate calls)."""
    lib = _Sampler.lib
    pcs, tids, tags = lib.ks_pc_samples(), lib.ks_pc_tids(), lib.ks_pc_tags()
    named: dict[int, tuple[str, str, str]] = {}
    counters = {"math": out.math, "torch": out.torch, "foreign": out.foreign}
    maps = functools.cache(executable_maps)  # read once, where a sample needs it
    for i in range(first, min(end, lib.ks_pc_capacity())):
        if tagged_only and not tags[i]:
            continue
        pc = int(pcs[i])
        base, sym, kind = named.get(pc) or named.setdefault(pc, where(pc, maps))
        out.by_thread[int(tids[i])] += 1
        out.where[(base, sym)] += 1
        if kind:
            counters[kind][(base, sym)] += 1


def _window(call: Callable[[], Any], cpu_s: float, calls: int, wall_s: float) -> Samples:
    """call() in a loop under the sampler (armed for the window unless a Request holds it),
    every sample of the window tallied."""
    lib = _Sampler.lib
    out = Samples()
    own = not _Sampler.request
    if (lib.ks_pc_arm(INTERVAL_US) != 0) if own else not lib.ks_pc_ours():
        out.signals = -1  # the handler is no longer ours
        return out
    _Sampler.window = own
    first = lib.ks_pc_count()
    before = thread_cpu_times()
    c0, w0 = time.process_time(), time.perf_counter()
    try:
        while out.calls < calls:
            call()
            out.calls += 1
            if time.process_time() - c0 >= cpu_s or time.perf_counter() - w0 >= wall_s:
                break
    finally:
        end = lib.ks_pc_disarm() if own else lib.ks_pc_count()
        out.cpu_s = time.process_time() - c0
        _Sampler.window = False
    out.signals = end - first
    out.thread_cpu_s = {t: c - before.get(t, 0.0) for t, c in thread_cpu_times().items()}
    _tally(out, first, end, tagged_only=False)
    return out


def recording() -> bool:
    """Whether the sampler's timer (ITIMER_PROF) is armed now: not a candidate's timer."""
    return _Sampler.request or _Sampler.window


def sample(call: Callable[[], Any]) -> Samples | None:
    """Calls `call` (forward) under the sampler; None where the sampler did not start."""
    if _Sampler.lib is None:
        return None
    return _window(call, SAMPLE_CPU_S, SAMPLE_CALLS, SAMPLE_WALL_S)


class Request:
    """ITIMER_PROF armed for a whole cpu-backend request, from before the candidate's import
    to the end, so the timer a candidate can read (getitimer) says nothing about which of its
    calls are sampled: every call the evaluator makes through CandidateRunner or `tagged` is
    (trials, stress, audit, timing, the checks after it). `findings()` judges all of them."""

    def __init__(self, active: bool) -> None:
        self.active = active and _Sampler.lib is not None
        self.samples: Samples | None = None

    def __enter__(self) -> "Request":
        if self.active and _Sampler.lib.ks_pc_arm(INTERVAL_US) == 0:
            _Sampler.request = True
        return self

    def __exit__(self, *exc: object) -> None:
        if not _Sampler.request:
            return
        end = _Sampler.lib.ks_pc_disarm()
        _Sampler.request = False
        self.samples = Samples(signals=end)
        _tally(self.samples, 0, end, tagged_only=True)

    def report(self, found: list[dict[str, str]], stages: dict[str, Any]) -> None:
        """Adds the request's rejects to `found` and its samples to the audit's record."""
        from kernelsmith_worker.findings import finding

        found.extend(finding(kind, detail, "reject") for kind, detail in self.findings())
        if self.samples is not None and "audit" in stages:
            stages["audit"]["cpu_samples_request"] = self.samples.record()

    def findings(self) -> list[tuple[str, str]]:
        """(kind, detail) rejects over every sampled candidate call of the request."""
        s = self.samples
        if s is None:
            return []
        total, torch_ = sum(s.where.values()), sum(s.torch.values())
        out = _library_findings(s, "of the candidate's calls in this request")
        if torch_ >= TORCH_MIN_SAMPLES and torch_ >= TORCH_SHARE * total:
            out.append(("torch_compute", f"{torch_} of {total} CPU samples of the candidate's "
                        f"calls in this request ran in torch's own kernels ({_top(s.torch)}): "
                        "the work is torch's, however it was reached"))
        return out


def _library_findings(s: Samples, calls: str) -> list[tuple[str, str]]:
    """library_code where MIN_SAMPLES and LIBRARY_SHARE of the samples ran in math library
    routines, or in other packages' compiled code."""
    total = sum(s.where.values())
    for counter, what in ((s.math, "math library routines"),
                          (s.foreign, "code of libraries that are neither its own builds, the "
                           "runtime, the interpreter's nor torch's")):
        n = sum(counter.values())
        if n >= MIN_SAMPLES and n >= LIBRARY_SHARE * total:
            return [("library_code", f"{n} of {total} CPU samples {calls} ran in {what} "
                     f"({_top(counter)}): a kernel must compute with its own code")]
    return []


def _top(c: Counter) -> str:
    return ", ".join(f"{lib}:{sym[:60]} x{n}" for (lib, sym), n in c.most_common(3))


class _Tag:
    """Within: samples are tagged as the candidate's (nests; restores the previous tag)."""

    def __enter__(self) -> None:
        tag = _Sampler.tag
        self.prev = tag.value if tag is not None else 0
        if tag is not None:
            tag.value = 1

    def __exit__(self, *exc: object) -> None:
        if _Sampler.tag is not None:
            _Sampler.tag.value = self.prev


def candidate_call() -> _Tag:
    return _Tag()


def tagged_slot(model: Callable[..., Any], slot_args: Callable[[int], list[Any]],
                candidate: bool) -> Callable[[int], Any]:
    """Call j of a timing loop: model(*slot_args(j)) without autograd, its samples tagged the
    candidate's (candidate) or not. The arguments are fetched before the tag is set (a timed
    check's private copies are the evaluator's work), and the reference's and the
    candidate's calls do the same two writes, so neither side's timed calls carry more of
    the evaluator's work. Untagged where no request is armed."""
    tag, value, armed = _Sampler.tag, int(candidate), _Sampler.request

    def run(j: int) -> Any:
        args = slot_args(j)
        with _no_grad():
            if not armed:
                return model(*args)
            tag.value = value
            try:
                return model(*args)
            finally:
                tag.value = 0

    return run


def findings(s: Samples | None) -> list[tuple[str, str]]:
    """(kind, detail) rejects for what a sampled forward showed."""
    if s is None:
        return []
    if s.signals < 0:
        return [("evaluator_tampering", "the CPU sampler's SIGPROF handler was replaced: "
                 "forward's CPU time could not be attributed")]
    out = _library_findings(s, "of forward")
    expected = s.cpu_s * _Sampler.rate
    if expected >= MIN_EXPECTED and s.signals < MISSING_SHARE * expected:
        out.append(("evaluator_tampering", f"forward used {s.cpu_s * 1e3:.0f} ms of CPU time "
                    f"but the CPU sampler saw {s.signals} of about {expected:.0f} samples: "
                    "SIGPROF blocked or taken in the threads that ran"))
    elif (shed := _threads_shedding(s)):
        out.append(("evaluator_tampering", shed))
    return out


def _threads_shedding(s: Samples) -> str:
    """Why the samples do not follow the threads' own CPU time ('' when they do)."""
    rate = _Sampler.rate
    for tid, cpu in sorted(s.thread_cpu_s.items(), key=lambda tc: -tc[1]):
        expected, took = cpu * rate, s.by_thread.get(tid, 0)
        if expected >= MIN_EXPECTED and took < MISSING_SHARE * expected:
            return (f"thread {tid} used {cpu * 1e3:.0f} ms of CPU time in forward but took "
                    f"{took} of about {expected:.0f} CPU samples: it blocks SIGPROF")
    for tid, took in s.by_thread.most_common():
        if tid not in s.thread_cpu_s:
            continue  # exited before the end: its CPU time is gone with it
        expected = s.thread_cpu_s[tid] * rate
        if took >= MIN_EXPECTED and took > EXCESS_FACTOR * expected + EXCESS_SLACK:
            return (f"thread {tid} took {took} CPU samples for {s.thread_cpu_s[tid] * 1e3:.0f} "
                    f"ms of its own CPU time (about {expected:.0f} expected): the samples of a "
                    "thread that blocks SIGPROF are being delivered to it")
    return ""
