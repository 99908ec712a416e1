"""Every kernel the device runs in the worker's process, from CUPTI's activity API, recording
from worker start (before any candidate is imported) to the end, never switched off or on
around a check: a candidate cannot tell a call whose kernels are accounted from any other
call, so it cannot behave honestly only while observed.

The recorder is kernel_log.cpp, compiled (once per machine, cached like cpu_ext libraries)
against the CUPTI headers of the libcupti that torch has loaded. It sums kernels per name and
stream; `take()` (after a device synchronize) returns the sums since the previous take.

    log = kernel_log.current()          # None when the worker has no log (CPU, or no CUPTI)
    api.synchronize(); log.take()       # start a window
    ...                                 # device work
    api.synchronize(); window = log.take()
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from kernelsmith_worker.device_state import mapped_library
from kernelsmith_worker.os_threads import evaluator_threads

if TYPE_CHECKING:
    import torch

_SOURCE = Path(__file__).with_name("kernel_log.cpp")


@dataclass(frozen=True)
class KernelGroup:
    """Kernels of one name on one stream within a window."""
    name: str
    stream: int
    count: int
    total_us: float


class KernelLogError(Exception):
    """The kernel log cannot start or report; the text says why and what to do."""


class KernelLog:
    # no instance attributes but these: a method cannot be shadowed on the instance
    __slots__ = ("_lib", "_controls", "_counts")

    def __init__(self, lib: ctypes.CDLL) -> None:
        self._lib = lib
        lib.ks_klog_start.restype = ctypes.c_int
        lib.ks_klog_pause.restype = ctypes.c_int
        lib.ks_klog_resume.restype = ctypes.c_int
        lib.ks_klog_take.restype = ctypes.c_int64
        lib.ks_klog_group.restype = ctypes.c_char_p
        lib.ks_klog_group.argtypes = [ctypes.c_int64, ctypes.POINTER(ctypes.c_uint32),
                                      ctypes.POINTER(ctypes.c_uint64),
                                      ctypes.POINTER(ctypes.c_uint64)]
        lib.ks_klog_records.restype = ctypes.c_uint64
        lib.ks_klog_dropped.restype = ctypes.c_uint64
        lib.ks_klog_error.restype = ctypes.c_char_p
        lib.ks_klog_error.argtypes = [ctypes.c_int]
        lib.ks_klog_counts.restype = None
        lib.ks_klog_counts.argtypes = [ctypes.POINTER(ctypes.c_uint64)] * 3
        lib.ks_klog_controls.restype = ctypes.c_uint64
        self._controls = int(lib.ks_klog_controls())  # starts/pauses/resumes made here
        self._counts = (0, 0, 0)  # (launches, graph launches, direct records) at the last take

    def _error(self, code: int) -> str:
        return (self._lib.ks_klog_error(code) or b"?").decode(errors="replace")

    def start(self) -> None:
        self._controls += 1
        code = self._lib.ks_klog_start()
        if code != 0:
            raise KernelLogError(f"CUPTI would not record kernels: {self._error(code)}")

    def restart(self) -> None:
        """Registers the log with CUPTI again: a torch.profiler session (even a CPU-only one)
        takes CUPTI's activity callbacks over and leaves kernel records off."""
        with evaluator_threads():
            self.start()

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """CUPTI detached inside (pending records are delivered first): only around replays
        of the evaluator's own CUDA graphs, where no candidate code runs and CUPTI's per-kernel
        instrumentation (1-2 us a kernel, until CUPTI is finalized) would distort the timed
        figure."""
        # CUPTI's threads end when it detaches; attaching starts new ones (the evaluator's)
        with evaluator_threads():
            self._controls += 1
            code = self._lib.ks_klog_pause()
            if code != 0:
                raise KernelLogError(f"CUPTI cannot pause its kernel records: "
                                     f"{self._error(code)}")
            try:
                yield
            finally:
                self._controls += 1
                code = self._lib.ks_klog_resume()
                if code != 0:
                    raise KernelLogError(f"CUPTI cannot resume kernel records: "
                                         f"{self._error(code)}")

    def take(self, check: str = "strict") -> list[KernelGroup]:
        """The kernels that completed since the previous take, summed per (name, stream).
        Synchronize the device first. `check`: "none" (a window that is not read: only a
        pause someone else made is an error), "alive" (also: the log must record a marker
        kernel launched now, which is then left out), "strict" (also: every kernel launched
        since the previous take has a record, and no CUDA graph was launched: the windows of
        candidate calls). Raises KernelLogError saying what failed."""
        if check != "none":
            import torch

            torch.cuda._sleep(1)  # the marker: a log that stopped recording misses it
            torch.cuda.synchronize()
        if self._lib is not _LIB or any(getattr(self._lib, f).errcheck is not None
                                        for f in _FUNCTIONS):
            raise KernelLogError("the kernel log's library was replaced or wrapped by code "
                                 "other than the evaluator")
        n = int(self._lib.ks_klog_take())
        if n < 0:
            raise KernelLogError(f"CUPTI cannot flush its records: {self._error(-n)}")
        controls = int(self._lib.ks_klog_controls())
        if controls != self._controls:
            self._controls = controls
            raise KernelLogError("the kernel records were paused or restarted by code other "
                                 "than the evaluator")
        launches, graphs, direct = ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_uint64()
        self._lib.ks_klog_counts(ctypes.byref(launches), ctypes.byref(graphs),
                                 ctypes.byref(direct))
        before = self._counts
        self._counts = (int(launches.value), int(graphs.value), int(direct.value))
        delta = [now - then for now, then in zip(self._counts, before)]
        out = []
        stream, count, total = ctypes.c_uint32(), ctypes.c_uint64(), ctypes.c_uint64()
        for i in range(n):
            name = self._lib.ks_klog_group(i, ctypes.byref(stream), ctypes.byref(count),
                                           ctypes.byref(total))
            if name is None:
                break
            out.append(KernelGroup(name.decode(errors="replace"), int(stream.value),
                                   int(count.value), total.value / 1e3))
        if check == "none":
            return out
        marker = next((g for g in reversed(out) if _is_marker(g.name)), None)
        if marker is None or delta[0] < 1:
            raise KernelLogError("the kernel log did not record the evaluator's marker kernel: "
                                 "the records or the launch count were switched off")
        out.remove(marker)
        if marker.count > 1:
            out.append(KernelGroup(marker.name, marker.stream, marker.count - 1,
                                   marker.total_us * (marker.count - 1) / marker.count))
        if check == "strict":
            if delta[0] > delta[2]:
                raise KernelLogError(f"{delta[0] - delta[2]} kernel launch(es) have no kernel "
                                     "record: the records were switched off around them")
            if delta[1] > 0:
                raise KernelLogError(f"{delta[1]} CUDA graph launch(es) inside the accounted "
                                     "calls: kernels run by a graph of the candidate's own are "
                                     "not accounted; launch kernels directly (the evaluator "
                                     "captures forward in its own graph)")
        return out

    def records(self) -> int:
        return int(self._lib.ks_klog_records())

    def dropped(self) -> int:
        return int(self._lib.ks_klog_dropped())


def _is_marker(name: str) -> bool:
    """torch.cuda._sleep's kernel, the evaluator's marker (a kernel of torch's own)."""
    return "spin_kernel" in name and "at::cuda::" in name


_FUNCTIONS = ("ks_klog_take", "ks_klog_group", "ks_klog_counts", "ks_klog_controls")
_LIB: ctypes.CDLL | None = None  # set once at start, before any candidate (watched)
_current: KernelLog | None = None
_why_not = "the kernel log was not started (a CPU worker)"


def current() -> KernelLog | None:
    """The worker's kernel log, or None (see why_not())."""
    return _current


def why_not() -> str:
    return _why_not


@contextlib.contextmanager
def names_run(dev: "torch.device") -> Iterator[list[frozenset[str] | None]]:
    """The names of the kernels the device ran inside the block, in got[0] after it (used
    before any candidate code is imported, for what the reference runs); got[0] stays None
    on a CPU device, without a log, or when reading the log failed."""
    got: list[frozenset[str] | None] = [None]
    log = _current if dev.type == "cuda" else None
    if log is None:
        yield got
        return
    import torch

    try:
        torch.cuda.synchronize(dev)
        log.take("none")
    except KernelLogError:
        yield got
        return
    yield got
    try:
        torch.cuda.synchronize(dev)
        got[0] = frozenset(g.name for g in log.take("none"))
    except KernelLogError:
        got[0] = None


def _loaded_cupti() -> Path | None:
    """The libcupti this process has mapped (torch's CUDA build loads it on import)."""
    path = mapped_library("libcupti")
    return Path(path) if path is not None else None


def _headers_for(lib: Path) -> Path | None:
    """The CUPTI include directory shipped with `lib`: a pip package's lib/ and include/, or a
    CUDA toolkit's extras/CUPTI/lib64 and extras/CUPTI/include."""
    for inc in (lib.parent.parent / "include", lib.parent.parent.parent / "include"):
        if (inc / "cupti.h").is_file():
            return inc
    return None


def _cupti_library() -> tuple[Path, Path]:
    lib = _loaded_cupti()
    if lib is None:
        import torch

        if not torch.cuda.is_available():
            raise KernelLogError("no CUDA device")
        raise KernelLogError("torch has not loaded libcupti (a torch build without its CUDA "
                             "profiler?): install a CUDA build of torch from pytorch.org")
    inc = _headers_for(lib)
    if inc is None:
        raise KernelLogError(f"no cupti.h beside {lib}: install the CUPTI headers of that "
                             "CUDA version (pip install nvidia-cuda-cupti-cu12 or -cu13, "
                             "matching torch)")
    return lib, inc


def _fallback_includes() -> list[str]:
    """Directories with the CUDA runtime headers cupti.h includes (crt/host_defines.h, which a
    pip CUPTI package lacks): Triton's bundled CUDA headers, then a CUDA toolkit's."""
    dirs = []
    try:
        import triton

        dirs.append(Path(triton.__file__).parent / "backends" / "nvidia" / "include")
    except ImportError:
        pass
    for root in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if root:
            dirs.append(Path(root) / "include")
    return [f"-idirafter{d}" for d in dict.fromkeys(dirs)
            if (d / "crt" / "host_defines.h").is_file()]


def build() -> tuple[Path, Path]:
    """Compiles kernel_log.cpp (cached) for the libcupti torch loaded; (library, libcupti)."""
    from kernelsmith_worker import cpu_ext

    lib, inc = _cupti_library()
    version = (inc / "cupti_version.h").read_bytes() if (inc / "cupti_version.h").is_file() \
        else b""
    source = _SOURCE.read_text() + f"\n// cupti_version.h {hashlib.sha256(version).hexdigest()}\n"
    try:
        flags = [f"-I{inc}", "-fvisibility=hidden", *_fallback_includes()]
        path, _ = cpu_ext.build("ks_kernel_log", source, extra_cflags=flags, openmp=False)
    except cpu_ext.CompileError as e:
        raise KernelLogError(f"kernel_log.cpp does not compile against {inc}: {e}\n{e.log}") \
            from e
    return path, lib


def start() -> KernelLog | None:
    """Starts the worker's kernel log (CUDA workers, once, before any candidate import).
    Returns it, or None with why_not() saying why it could not start."""
    global _current, _why_not, _LIB
    if _current is not None:
        return _current
    try:
        path, cupti = build()
        # torch loaded libcupti with local scope: promote it so kernel_log's CUPTI symbols
        # resolve against it (one CUPTI in the process), then load kernel_log.
        ctypes.CDLL(str(cupti), mode=os.RTLD_GLOBAL | getattr(os, "RTLD_NOLOAD", 0))
        lib = ctypes.CDLL(str(path))
        log = KernelLog(lib)
        log.start()
        _LIB = lib
    except (KernelLogError, OSError) as e:
        _why_not = f"the kernel log could not start: {e}"[:2000]
        return None
    _current = log
    return log
