"""Audit-hook watch: what candidate code running in forward does beyond tensors.

`EventWatch` records, while active, the audit events (sys.addaudithook) and host conversions
that candidate code causes — frame and gc introspection, file traffic, tensor data handed to
NumPy — for the audit's `evaluator_introspection`, `file_io` and `host_compute` findings.
Calls made from library code (stdlib, site-packages, the worker) on the candidate's behalf,
and Triton compiling its kernels, are not the candidate's.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import Any, Iterator

import torch

from kernelsmith_worker import observer_switches


# Audit-hook events (sys.addaudithook) that candidate code running in forward must not raise.
_INTROSPECTION_EVENTS = frozenset({"sys._getframe", "sys._current_frames",
                                   "sys._getframemodulename", "gc.get_objects",
                                   "gc.get_referrers", "gc.get_referents", "sys.settrace",
                                   "sys.setprofile"})
_FRAME_ATTRS = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back"})
# Audit events that make code objects, or put one in a function (object.__setattr__ of
# __code__): a candidate's code must carry its own file name.
_CODE_EVENTS = frozenset({"compile", "code.__new__", "marshal.loads", "marshal.load",
                          "object.__setattr__"})
_FILE_EVENTS = frozenset({"open", "os.remove", "os.rename", "os.replace", "os.listdir",
                          "os.scandir", "os.mkdir", "os.rmdir", "os.truncate", "os.link",
                          "os.symlink", "shutil.copyfile", "shutil.rmtree", "shutil.move",
                          "os.chmod", "os.utime", "glob.glob", "os.walk"})
_IMPORT_SUFFIXES = (".py", ".pyc", ".so", ".pyi", ".pth", ".json")


def _library_roots() -> tuple[str, ...]:
    """Folders of installed code (stdlib, site-packages) and of the worker itself: calls made
    from there are on the candidate's behalf, not the candidate looking around."""
    import sysconfig

    roots = {sysconfig.get_paths().get(k, "") for k in ("stdlib", "platstdlib", "purelib",
                                                        "platlib")}
    roots.add(str(__file__).rsplit("/", 1)[0])
    return tuple(sorted(r for r in roots if r))


_LIBRARY_ROOTS = _library_roots()
_STDLIB = os.path.dirname(os.__file__) + os.sep


def _in_stdlib(filename: str) -> bool:
    """The standard library's own files, not the packages installed beside it."""
    return filename.startswith(_STDLIB) and "-packages" + os.sep not in filename


def is_library_file(filename: str) -> bool:
    return filename.startswith(_LIBRARY_ROOTS) or filename.startswith("<") \
        or "/site-packages/" in filename or "/dist-packages/" in filename


class EventWatch:
    """Records, while active, the audit events and host conversions candidate code causes:
    `introspection` (frames, gc), `file_io` (files opened, listed, removed) and
    `host_compute` (tensor data handed to NumPy or Python lists, seen with sys.setprofile).
    Events inside custom-kernel launches (`recorder.in_kernel()`) are the launcher's and are
    ignored. One audit hook per process (audit hooks cannot be removed); not thread-safe."""
    __evaluator_state__ = True  # the evaluator's running state (data_watch.py)

    _current: EventWatch | None = None
    _hooked: bool = False
    LIMIT = 20

    def __init__(self, recorder: Any = None, host_calls: bool = False,
                 kinds: frozenset[str] | None = None) -> None:
        self.recorder = recorder
        self.host_calls = host_calls
        self.kinds = kinds  # None: every kind; else only these are recorded
        self.seen: dict[str, list[str]] = {}
        self.busy = False  # inside the hook (it reads frames itself)
        self._outer: EventWatch | None = None

    def __enter__(self) -> EventWatch:
        if not EventWatch._hooked:
            sys.addaudithook(_audit_hook)
            EventWatch._hooked = True
        if self.host_calls:  # before activating: setprofile is itself an audit event
            observer_switches.collect()  # at worker start already; here for other callers
            sys.setprofile(self._profile)
            threading.setprofile(self._profile)  # threads candidate code starts meanwhile
        self._outer = EventWatch._current  # a watch of one call inside a whole evaluation's
        EventWatch._current = self
        return self

    def __exit__(self, *exc: Any) -> None:
        EventWatch._current = self._outer
        if self.host_calls:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]

    def note(self, kind: str, what: str, in_kernel_too: bool = False) -> None:
        if self.kinds is not None and kind not in self.kinds:
            return
        if not in_kernel_too and self.recorder is not None and self.recorder.in_kernel():
            return
        items = self.seen.setdefault(kind, [])
        if len(items) < self.LIMIT and what not in items:
            items.append(what)

    def _profile(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call":  # a Python function: switches torch's Python code wraps
            what = observer_switches.python(frame)
            if what is not None:
                caller = frame.f_back  # through contextlib's and functools' frames
                while caller is not None and _in_stdlib(caller.f_code.co_filename):
                    caller = caller.f_back
                # code compiled from a string ("<string>") is the candidate's here, and so
                # is a callback installed code was handed (torch's tree_map of a switch)
                if caller is not None and not (is_installed_code(caller.f_code.co_filename)
                                               and observer_switches.named_by(frame, caller)):
                    self.note("introspection", what, in_kernel_too=True)
            return
        if event != "c_call":
            return
        what = observer_switches.builtin(arg)
        if what is not None:  # by identity, whatever name reached it
            if not is_installed_code(frame.f_code.co_filename):
                self.note("introspection", what, in_kernel_too=True)
            return
        if not is_installed_code(frame.f_code.co_filename) \
                and observer_switches.python_key_excluded():
            self.note("introspection", "torch's Python dispatch key excluded around candidate "
                      "code (a guard such as torch._C._DisableTorchDispatch: the audit's "
                      "dispatch mode sees none of its ops)", in_kernel_too=True)
            return
        if is_library_file(frame.f_code.co_filename):
            return
        owner = getattr(arg, "__self__", None)
        name = getattr(arg, "__name__", "")
        if isinstance(owner, torch.Tensor) and name in ("numpy", "__array__", "tolist") \
                and (name != "tolist" or owner.numel() > 64):
            self.note("host_compute", f"Tensor.{name}() on a {list(owner.shape)} tensor")
        elif str(getattr(arg, "__module__", "") or "").startswith("numpy") \
                and name in ("asarray", "array", "asanyarray", "ascontiguousarray", "frombuffer"):
            self.note("host_compute", f"numpy.{name}()")


@contextlib.contextmanager
def unwatched() -> Iterator[None]:
    """The evaluator's own work while a watch is active (its checks after a forward read
    /proc): not noted."""
    watch = EventWatch._current
    if watch is None:
        yield
        return
    was, watch.busy = watch.busy, True
    try:
        yield
    finally:
        watch.busy = was


# Library code that compiles kernels when a candidate first launches them (JIT, autotune):
# its file traffic (sources, caches, temporary build folders) is not the candidate's.
_COMPILER_PATHS = tuple(os.sep + os.path.join("triton", d) + os.sep
                        for d in ("compiler", "runtime", "backends", "tools"))


def _in_kernel_compiler(frame: Any) -> bool:
    while frame is not None:
        name = frame.f_code.co_filename
        if is_library_file(name) and any(p in name for p in _COMPILER_PATHS):
            return True
        frame = frame.f_back
    return False


# Standard-library modules that hand frames to their caller (inspect.currentframe, stack,
# trace; traceback.walk_stack): the code that called them is the one that gets the frame.
# traceback's formatting of an exception reads tb_frame for itself and returns text, so only
# its sys._getframe (walk_stack and the stack printers) counts as handing frames on.
_INSPECT = os.sep + "inspect.py"
_TRACEBACK = os.sep + "traceback.py"
_CTYPES = os.sep + os.path.join("ctypes", "__init__.py")
_HELPERS = {"sys._getframe": (_INSPECT, _TRACEBACK), "ctypes.dlsym": (_CTYPES,)}
_SIGNAL_API = frozenset({"signal", "sigaction", "sigset", "bsd_signal", "sysv_signal",
                         "setitimer", "alarm", "ualarm", "timer_create", "timer_settime",
                         "timerfd_create", "pthread_sigmask", "sigprocmask", "raise", "kill",
                         "pthread_kill", "tgkill", "sigqueue", "signalfd"})


def is_installed_code(filename: str) -> bool:
    """Installed code (stdlib, site-packages, the worker) and frozen import machinery. Other
    `<...>` names are code compiled at run time, which may be the candidate's."""
    return filename.startswith(_LIBRARY_ROOTS) or filename.startswith("<frozen ") \
        or "/site-packages/" in filename or "/dist-packages/" in filename


def _getter(frame: Any, event: str) -> Any:
    """The frame of the code that gets what an audited call returns: `frame` (the audited
    function's caller), or above the standard-library helpers that pass frames on."""
    helpers = _HELPERS.get(event, (_INSPECT,))
    while frame is not None and frame.f_code.co_filename.endswith(helpers) \
            and frame.f_code.co_filename.startswith(_LIBRARY_ROOTS):
        frame = frame.f_back
    return frame


def _library_import(frame: Any) -> bool:
    """Library code (torch, Triton, the stdlib, Python's import machinery) running while a
    module is imported: a module a candidate imports lazily, or one torch loads on first use,
    listing its package or making its cache folder. Not the candidate's: its own code is
    not library code, at import time or later."""
    if frame is None or not is_installed_code(frame.f_code.co_filename):
        return False  # code compiled from a string ("<string>") may be anyone's
    while frame is not None:
        if frame.f_code.co_name == "_find_and_load" \
                and frame.f_code.co_filename == "<frozen importlib._bootstrap>":
            return True
        frame = frame.f_back
    return False


def _audit_hook(event: str, args: tuple[Any, ...]) -> None:
    watch = EventWatch._current
    if watch is None or watch.busy:
        return
    watch.busy = True
    try:
        if event in _INTROSPECTION_EVENTS or (event == "object.__getattr__" and len(args) > 1
                                              and args[1] in _FRAME_ATTRS):
            # Only when called straight from candidate code: library code (warnings, torch's
            # serialization) reads frames for its own reasons.
            caller = _getter(sys._getframe(1), event)  # who called the audited function
            if caller is not None and not is_installed_code(caller.f_code.co_filename):
                what = event if event != "object.__getattr__" \
                    else f"{type(args[0]).__name__}.{args[1]}"
                watch.note("introspection", what)
        elif event == "ctypes.dlsym" and len(args) > 1 and isinstance(args[1], str) \
                and (args[1].startswith(("Py", "_Py")) or args[1] in _SIGNAL_API):
            # the interpreter's C API (PyEval_GetFrame, PyThreadState_*...): frames and
            # objects with no audit event at all; the C library's signal handlers and timers:
            # candidate code run at any moment (signal_state.py watches Python's)
            caller = _getter(sys._getframe(1), event)
            if caller is not None and not is_installed_code(caller.f_code.co_filename):
                watch.note("introspection", f"ctypes lookup of {args[1][:60]}")
        elif event in _CODE_EVENTS:
            # code made under an installed file's (or the worker's) name would pass for
            # library code above: compiled, built (types.CodeType, code.replace), unmarshalled
            # (whatever name it carries), or put into a function in place of its own code
            named = args[1] if len(args) > 1 and isinstance(args[1], str) else ""
            if event == "object.__setattr__" and named != "__code__":
                return
            if event in ("compile", "code.__new__") and not is_installed_code(named):
                return
            caller = _getter(sys._getframe(1), event)
            if caller is not None and not is_installed_code(caller.f_code.co_filename):
                what = {"compile": "compile()", "code.__new__": "types.CodeType/code.replace"}
                watch.note("introspection", f"{what[event]} of code named {named[:100]}"
                           if event in what else f"{event}: code objects carry any file name")
        elif event in _FILE_EVENTS:
            path = args[0] if args else ""
            mode = args[1] if event == "open" and len(args) > 1 else ""
            if event == "open" and (not isinstance(path, (str, bytes)) or (
                    str(path).endswith(_IMPORT_SUFFIXES) and "w" not in str(mode or "r")
                    and "a" not in str(mode or "r"))):
                return  # module imports read sources; descriptors are not paths
            if _library_import(sys._getframe(1)):
                return  # a library module being imported: its package, its cache folder
            if _in_kernel_compiler(sys._getframe(1)):
                return  # Triton compiling or autotuning on first launch: its cache, its tools
            watch.note("file_io", f"{event} {str(path)[:120]}")
    except Exception:
        pass
    finally:
        watch.busy = False
