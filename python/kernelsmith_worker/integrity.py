"""Evaluator integrity: the functions and settings the evaluation relies on must not change.

`IntegrityGuard` captures, at worker start and before any candidate is imported:
- the identity of timing/comparison/synchronisation functions of time, torch, torch.cuda,
  threading, builtins and Triton (the worker's launch hooks included),
- every public callable of torch, torch.nn.functional, torch.Tensor (operators included),
  torch.linalg/special/fft and the `forward` of torch.nn's module classes: the reference
  computes with them, so a replaced one could slow the reference down,
- the identity (and code object) of every function and class in the worker's own modules
  (timing.py included) and the methods of those classes, and by value (data_watch.py) their
  module data, plain class data and default arguments,
- global torch settings that change how fast or how exactly the *reference* runs
  (cuDNN/TF32/matmul precision/thread count/...).
`changes()` lists what differs now; `restore()` puts the originals back so the worker can
serve the next request (the loop still reports itself poisoned and gets replaced).
Thread-safety: none needed (the worker is serial).
"""

from __future__ import annotations

import ast
import builtins
import copy
import importlib
import inspect
import sys
import threading
import time
import types
from typing import Any
from collections.abc import Callable

import torch

from kernelsmith_worker.after_import import after_import
from kernelsmith_worker.data_watch import DataWatch
from kernelsmith_worker.dynamo_wrapper import code_of, is_disable_wrapper, redirected
from kernelsmith_worker.process_state import ProcessState

_MISSING = object()

# (dotted owner, attribute) pairs resolved at capture time; missing ones are skipped.
_WATCHED_ATTRS: tuple[tuple[str, str], ...] = tuple(
    (owner, attr)
    for owner, attrs in (
        ("time", "perf_counter perf_counter_ns time time_ns monotonic monotonic_ns sleep"),
        ("threading", "enumerate active_count Thread current_thread"),
        ("builtins", "type isinstance issubclass id len getattr setattr hasattr bool float int "
                     "str bytes list tuple dict set abs max min sum any all round repr iter "
                     "next sorted range zip enumerate map filter callable print object"),
        ("torch", "allclose isclose equal manual_seed no_grad inference_mode Tensor cuda "
                  "testing nn abs max min sum isnan isfinite where empty empty_like zeros "
                  "rand randn randint device get_num_threads set_num_threads "
                  "use_deterministic_algorithms set_float32_matmul_precision"),
        ("torch.testing", "assert_close"),
        ("os", "urandom getrandom"),
        ("random", "Random SystemRandom random sample choice choices shuffle seed getrandbits "
                   "randrange randint uniform"),
        ("random.Random", "sample choice choices shuffle random seed getrandbits randrange "
                          "randint uniform __init__"),
        ("torch.Tensor", "__eq__ __ne__ __sub__ __rsub__ __abs__ __getitem__ __setitem__ "
                         "__class__ sub abs max min float double to clone contiguous "
                         "copy_ equal isnan isfinite any all item data_ptr view reshape "
                         "flatten numel element_size untyped_storage fill_ cpu cuda"),
        ("torch.nn.Module", "__call__ _call_impl forward __getattr__"),
        ("torch.cuda", "synchronize Event CUDAGraph graph current_stream default_stream "
                       "Stream stream set_stream is_available device_count "
                       "make_graphed_callables _sleep empty_cache memory_allocated"),
        ("torch.cuda.Event", "record elapsed_time synchronize query wait"),
        ("torch.cuda.CUDAGraph", "capture_begin capture_end replay reset __init__ __new__"),
        ("torch.cuda.CUDAGraph", "replay capture_begin capture_end reset"),
        ("torch.cuda.graph", "__enter__ __exit__"),
        ("torch.profiler", "profile"),
        ("torch.profiler.profile", "__enter__ __exit__ events"),
        ("torch.autograd.profiler.profile", "__enter__ __exit__ _prepare_trace _start_trace "
                                            "_parse_kineto_results"),
        ("torch.utils._python_dispatch", "TorchDispatchMode _disable_current_modes"),
        ("torch.utils._python_dispatch.TorchDispatchMode", "__enter__ __exit__"),
        ("torch.utils.cpp_extension", "load_inline load"),
        ("triton.runtime.jit.JITFunction", "run __getitem__"),
        ("triton.runtime.interpreter.InterpretedFunction", "run __getitem__"),
        ("triton.runtime.autotuner.Autotuner", "run"),
        ("triton.testing", "do_bench do_bench_cudagraph"),
    )
    for attr in attrs.split()
)

# Modules not imported for the snapshot (slow: torch.utils.cpp_extension imports setuptools):
# their entries are watched from the moment something first imports them (after_import,
# after the backends' own hooks on them are in place).
_LATE_MODULES = frozenset({"torch.utils.cpp_extension"})


# Namespaces whose every public callable is watched: the reference model computes with
# them, so replacing one (say, torch.softmax with a slower version) would bias the speedup.
_BROAD_OWNERS: tuple[str, ...] = ("torch", "torch.nn.functional", "torch.Tensor", "torch.linalg",
                                  "torch.special", "torch.fft")
_SKIP_DUNDERS = frozenset({"__doc__", "__module__", "__dict__", "__weakref__", "__annotations__",
                           "__slots__", "__init_subclass__", "__subclasshook__",
                           "__class_getitem__"})


def _broad_entries() -> list[tuple[str, Any, str]]:
    """(label, owner, attr) for the public callables of _BROAD_OWNERS (and Tensor's operators)
    and the `forward` of every torch.nn module class."""
    out: list[tuple[str, Any, str]] = []
    for dotted in _BROAD_OWNERS:
        owner = _resolve(dotted)
        if owner is _MISSING:
            continue
        names = dir(owner) if isinstance(owner, type) else list(vars(owner))
        for name in names:
            dunder = name.startswith("__") and name.endswith("__")
            if (name.startswith("_") and not (dunder and isinstance(owner, type))) \
                    or name in _SKIP_DUNDERS:
                continue
            try:
                val = inspect.getattr_static(owner, name)
            except AttributeError:
                continue
            if callable(val) or isinstance(val, (staticmethod, classmethod, property)):
                if not isinstance(val, types.ModuleType):
                    out.append((f"{dotted}.{name}", owner, name))
    for cls_name, cls in vars(torch.nn).items():
        if isinstance(cls, type) and issubclass(cls, torch.nn.Module) and "forward" in vars(cls):
            out.append((f"torch.nn.{cls_name}.forward", cls, "forward"))
    return out


def _resolve(dotted: str) -> Any:
    """'torch.cuda.Event' → the object (importing the leading module); _MISSING if absent."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        modname = ".".join(parts[:i])
        mod = sys.modules.get(modname)
        if mod is None:
            try:
                mod = importlib.import_module(modname)
            except Exception:
                continue
        obj: Any = mod
        for p in parts[i:]:
            obj = getattr(obj, p, _MISSING)
            if obj is _MISSING:
                return _MISSING
        return obj
    return _MISSING


def _settings() -> dict[str, tuple[Callable[[], Any], Callable[[Any], None]]]:
    """Global torch settings: name → (getter, setter). The cuDNN and oneDNN flags come from
    _backend_flags(), which finds every flag torch.backends declares."""
    cmm = torch.backends.cuda.matmul

    def attr(obj: Any, name: str) -> tuple[Callable[[], Any], Callable[[Any], None]]:
        return (lambda: getattr(obj, name), lambda v: setattr(obj, name, v))

    out: dict[str, tuple[Callable[[], Any], Callable[[Any], None]]] = {
        "torch.backends.cuda.matmul.allow_tf32": attr(cmm, "allow_tf32"),
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction":
            attr(cmm, "allow_fp16_reduced_precision_reduction"),
        "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction":
            attr(cmm, "allow_bf16_reduced_precision_reduction"),
        "torch.get_float32_matmul_precision()":
            (torch.get_float32_matmul_precision, torch.set_float32_matmul_precision),
        "torch.are_deterministic_algorithms_enabled()":
            (torch.are_deterministic_algorithms_enabled, torch.use_deterministic_algorithms),
        "torch.get_num_threads()": (torch.get_num_threads, torch.set_num_threads),
        "torch.get_default_dtype()": (torch.get_default_dtype, torch.set_default_dtype),
    }
    sdp = torch.backends.cuda
    for getter, setter in (
        ("flash_sdp_enabled", "enable_flash_sdp"),
        ("mem_efficient_sdp_enabled", "enable_mem_efficient_sdp"),
        ("math_sdp_enabled", "enable_math_sdp"),
        ("cudnn_sdp_enabled", "enable_cudnn_sdp"),
    ):
        if hasattr(sdp, getter) and hasattr(sdp, setter):
            out[f"torch.backends.cuda.{getter}()"] = (getattr(sdp, getter), getattr(sdp, setter))
    if hasattr(cmm, "fp32_precision"):
        out["torch.backends.cuda.matmul.fp32_precision"] = attr(cmm, "fp32_precision")
    for lib in ("preferred_linalg_library", "preferred_blas_library"):
        fn = getattr(sdp, lib, None)
        if fn is not None:  # called with no argument it reports, with one it sets
            out[f"torch.backends.cuda.{lib}()"] = (fn, fn)
    tunable = getattr(torch.cuda, "tunable", None)
    if tunable is not None and hasattr(tunable, "is_enabled") and hasattr(tunable, "enable"):
        out["torch.cuda.tunable.is_enabled()"] = (tunable.is_enabled, tunable.enable)
    if torch.cuda.is_available():  # per-device caches: the current device's (the worker's)
        out["torch.backends.cuda.cufft_plan_cache.max_size"] = \
            attr(torch.backends.cuda.cufft_plan_cache, "max_size")
    out.update(_backend_flags())
    out.update(_context_settings())
    return out


# torch._C getters of per-process state the evaluator does not own or that changes by itself.
_CONTEXT_VOLATILE = frozenset({"_get_thread_name"})


def _context_settings() -> dict[str, tuple[Callable[[], Any], Callable[[Any], None]]]:
    """Every process-wide setting of torch's C++ context that has a `torch._C._get_X` /
    `_set_X` pair and a plain value (the SM carveout of cuBLASLt and cuDNN, deterministic
    fill, reduced-precision reductions, ...): a setting no list above names is watched all the
    same, and put back through its setter."""
    out: dict[str, tuple[Callable[[], Any], Callable[[Any], None]]] = {}
    plain = (bool, int, float, str, type(None))
    for name in dir(torch._C):
        if not name.startswith("_get_") or name in _CONTEXT_VOLATILE:
            continue
        get, set_ = getattr(torch._C, name), getattr(torch._C, "_set_" + name[5:], None)
        if set_ is None or not callable(get):
            continue
        try:
            value = get()
        except Exception:  # noqa: BLE001 - getters that take arguments
            continue
        if isinstance(value, plain) or (isinstance(value, tuple)
                                        and all(isinstance(v, plain) for v in value)):
            out[f"torch._C.{name}()"] = (get, _setter(set_))
    return out


def _setter(set_: Callable[..., None]) -> Callable[[Any], None]:
    """Tuple values (a setting with an override flag) go back as arguments."""
    return lambda v: set_(*v) if isinstance(v, tuple) else set_(v)


def _backend_flags() -> dict[str, tuple[Callable[[], Any], Callable[[Any], None]]]:
    """Every flag torch.backends declares as a property of its backend modules (cudnn,
    mkldnn, ...): a setting the list above does not name is watched all the same."""
    import importlib
    import pkgutil

    out: dict[str, tuple[Callable[[], Any], Callable[[Any], None]]] = {}
    for info in pkgutil.iter_modules(torch.backends.__path__):
        try:
            mod = importlib.import_module(f"torch.backends.{info.name}")
        except Exception:  # noqa: BLE001 - a backend this build lacks
            continue
        for key, val in vars(type(mod)).items():
            if not isinstance(val, (torch.backends.ContextProp, property)) or key.startswith("_"):
                continue
            try:
                getattr(mod, key)
            except Exception:  # noqa: BLE001 - not readable here: nothing to watch
                continue
            out[f"torch.backends.{info.name}.{key}"] = (
                lambda m=mod, k=key: getattr(m, k), lambda v, m=mod, k=key: setattr(m, k, v))
    return out


def _own_entries(prefix: str) -> list[tuple[str, Any, str]]:
    """(label, owner, attr) for every function/class in the worker's modules and their methods."""
    entries: list[tuple[str, Any, str]] = []
    for modname, mod in sorted(sys.modules.items()):
        if mod is None or not (modname == prefix or modname.startswith(prefix + ".")):
            continue
        for attr, val in sorted(vars(mod).items()):
            if not callable(val) or isinstance(val, types.ModuleType):
                continue
            entries.append((f"{modname}.{attr}", mod, attr))
            if isinstance(val, type) and str(getattr(val, "__module__", "")).startswith(prefix):
                for mattr, mval in sorted(vars(val).items()):
                    if isinstance(mval, (types.FunctionType, staticmethod, classmethod, property)):
                        entries.append((f"{modname}.{attr}.{mattr}", val, mattr))
    return entries


def _own_data(prefix: str) -> list[tuple[str, Any, str]]:
    """(label, module, attr) for the module-level data (tolerance tables, constants) of the
    worker's modules: a candidate that loosens `TOLERANCES` changes no function."""
    entries: list[tuple[str, Any, str]] = []
    for modname, mod in sorted(sys.modules.items()):
        if mod is None or not (modname == prefix or modname.startswith(prefix + ".")):
            continue
        for attr, val in sorted(vars(mod).items()):
            if attr.startswith("__") or callable(val) or isinstance(val, types.ModuleType):
                continue
            entries.append((f"{modname}.{attr}", mod, attr))
    return entries


def _snapshot(val: Any) -> Any:
    """A deep copy to compare against later (_MISSING when the value cannot be copied or
    compared: only its identity is watched then)."""
    try:
        snap = copy.deepcopy(val)
        return snap if bool(snap == val) else _MISSING
    except Exception:
        return _MISSING


_code_of = code_of


class IntegrityGuard:
    """Snapshot of what the evaluator relies on. Create it after the launch hooks are
    installed and the worker's modules (and timing.py) are imported."""

    def __init__(self, own_prefix: str = "kernelsmith_worker") -> None:
        # (label, owner, attr, original value, original code object, defined on owner itself)
        self._entries: list[tuple[str, Any, str, Any, Any, bool]] = []
        self._problem: list[tuple[str, Any, str, Any, Any, bool]] = []  # watch_problem
        for dotted, attr in _WATCHED_ATTRS:
            if dotted in _LATE_MODULES and dotted not in sys.modules:
                after_import(dotted, lambda mod, d=dotted, a=attr: self._add(f"{d}.{a}", mod, a))
                continue
            owner = _resolve(dotted)
            if owner is not _MISSING:
                self._add(f"{dotted}.{attr}", owner, attr)
        for label, owner, attr in _broad_entries() + _own_entries(own_prefix):
            self._add(label, owner, attr)
        # (label, module, attr, original object, deep snapshot of its contents)
        self._data: list[tuple[str, Any, str, Any, Any]] = [
            (label, mod, attr, vars(mod)[attr], _snapshot(vars(mod)[attr]))
            for label, mod, attr in _own_data(own_prefix)]
        self._values = DataWatch(own_prefix, [d[:3] for d in self._data if d[4] is not _MISSING])
        self._settings = _settings()
        self._setting_values = {name: self._read(get) for name, (get, _) in self._settings.items()}
        self._state = ProcessState.capture()

    def _add(self, label: str, owner: Any, attr: str,
             into: list[tuple[str, Any, str, Any, Any, bool]] | None = None) -> None:
        val = self._current(owner, attr)
        if val is _MISSING:
            return
        own = attr in getattr(owner, "__dict__", {})
        (self._entries if into is None else into).append(
            (label, owner, attr, val, _code_of(val), own))

    def watch_problem(self, module: types.ModuleType, label: str = "problem") -> None:
        """Also watches, until the next call, the functions and classes the problem's module
        defines and their methods: a candidate that patches `Model.forward` to slow the
        reference down is tampering. Call it after loading the problem, before the candidate."""
        self._problem = []
        for attr, val in sorted(vars(module).items()):
            if attr.startswith("__") or not callable(val) or isinstance(val, types.ModuleType) \
                    or getattr(val, "__module__", None) != module.__name__:
                continue  # names the problem imported (torch, nn) are watched elsewhere
            self._add(f"{label}.{attr}", module, attr, self._problem)
            if isinstance(val, type):
                for mattr, mval in sorted(vars(val).items()):
                    if isinstance(mval, (types.FunctionType, staticmethod, classmethod, property)):
                        self._add(f"{label}.{attr}.{mattr}", val, mattr, self._problem)

    @staticmethod
    def _read(getter: Callable[[], Any]) -> Any:
        try:
            return getter()
        except Exception:
            return _MISSING

    @staticmethod
    def _current(owner: Any, attr: str) -> Any:
        """The raw attribute (no descriptor invoked), looked up along the MRO for classes."""
        if isinstance(owner, types.ModuleType):
            return vars(owner).get(attr, _MISSING)
        if isinstance(owner, type):
            for klass in type.__getattribute__(owner, "__mro__"):
                d = type.__getattribute__(klass, "__dict__")
                if attr in d:
                    return d[attr]
            return _MISSING
        try:
            return inspect.getattr_static(owner, attr)
        except AttributeError:
            return _MISSING

    def watched(self) -> list[str]:
        """Labels of every watched function/class and setting (for tests and docs)."""
        return [e[0] for e in self._entries] + [d[0] for d in self._data] + list(self._settings)

    def changes(self, full: bool = False) -> list[str]:
        """What differs from the snapshot, one phrase each (empty when intact). `full` also
        compares torch's dispatcher tables (about 0.1 s; the rest takes microseconds)."""
        out: list[str] = self._state.changes() if full else self._state.quick_changes()
        for label, owner, attr, val, code, _ in self._entries + self._problem:
            cur = self._current(owner, attr)
            if cur is not val and not is_disable_wrapper(cur, val):
                out.append(f"{label} was replaced")
            elif code is not None and _code_of(val) is not code:
                out.append(f"{label}.__code__ was replaced")
            elif redirected(val):
                out.append(f"{label} was redirected (its __dynamo_disable was set)")
        for label, mod, attr, val, snap in self._data:
            cur = vars(mod).get(attr, _MISSING)
            if cur is not val:
                out.append(f"{label} was replaced")
            elif snap is not _MISSING and not _same(cur, snap):
                out.append(f"{label} was modified")
        out.extend(self._values.changes())
        for name, (get, _) in self._settings.items():
            now = self._read(get)
            if now != self._setting_values[name]:
                out.append(f"{name} changed from {self._setting_values[name]!r} to {now!r}")
        return out

    def restore(self) -> list[str]:
        """Puts every original back. Returns what could not be put back (empty when all was):
        a worker with anything listed must not be reused."""
        failed = self._state.restore()
        for label, owner, attr, val, code, own in self._entries + self._problem:
            try:
                cur = self._current(owner, attr)
                if cur is not val and not is_disable_wrapper(cur, val):
                    if own:
                        setattr(owner, attr, val)
                    else:  # the candidate shadowed an inherited attribute
                        delattr(owner, attr)
                fn = getattr(val, "__func__", val)
                if code is not None and getattr(fn, "__code__", None) is not code:
                    fn.__code__ = code
                if redirected(val):
                    del val.__dict__["__dynamo_disable"]
            except Exception as e:  # noqa: BLE001 - reported: the worker is replaced
                failed.append(f"{label}: {type(e).__name__}: {e}")
        for label, mod, attr, val, snap in self._data:
            try:
                if vars(mod).get(attr, _MISSING) is not val:
                    setattr(mod, attr, val)
                if snap is not _MISSING and not _same(val, snap):
                    _refill(val, snap)
            except Exception as e:  # noqa: BLE001 - reported: the worker is replaced
                failed.append(f"{label}: {type(e).__name__}: {e}")
        failed.extend(self._values.restore())
        for name, (get, set_) in self._settings.items():
            want = self._setting_values[name]
            try:
                if want is not _MISSING and self._read(get) != want:
                    set_(want)
            except Exception as e:  # noqa: BLE001 - reported: the worker is replaced
                failed.append(f"{name}: {type(e).__name__}: {e}")
        return failed


def _same(cur: Any, snap: Any) -> bool:
    try:
        return bool(cur == snap)
    except Exception:
        return False


def _refill(val: Any, snap: Any) -> None:
    """Puts a mutated container's original contents back in place (other modules hold the
    same object, so it is not replaced)."""
    fresh = copy.deepcopy(snap)
    if isinstance(val, dict):
        val.clear()
        val.update(fresh)
    elif isinstance(val, list):
        val[:] = fresh
    elif isinstance(val, set):
        val.clear()
        val.update(fresh)


# Threads: a candidate's thread still alive after forward returned.
_current_frames = sys._current_frames  # captured before any candidate is imported


def thread_idents() -> set[int]:
    """Idents of the Python threads alive now: every thread running Python code, those started
    with `_thread` (which `threading.enumerate` does not list) included."""
    idents = {t.ident for t in threading.enumerate() if t.ident is not None}
    return idents | set(_current_frames())


def new_threads(baseline: set[int]) -> list[str]:
    """Names of threads alive now that were not alive at `baseline` (a thread `threading`
    does not know is named by its ident)."""
    known = {t.ident: t.name for t in threading.enumerate() if t.ident is not None}
    return sorted(known.get(i, f"thread {i} (started with _thread)")
                  for i in thread_idents() - baseline)


# Introspection: candidate code reaching the evaluator's state (frames, gc, sys.modules, the
# audit's own dispatch mode or profiler) to copy the reference, loosen a check or detect when
# it is being watched. Two layers: a static scan of the source (catches it wherever it runs,
# import time included) and Python audit hooks while forward runs (catch it however the name
# was spelled).

# Attribute or imported names that only serve to look at the evaluator.
SUSPECT_NAMES: dict[str, str] = {
    "_getframe": "reads the caller's frames",
    "_current_frames": "reads the threads' frames",
    "_getframemodulename": "reads the caller's frames",
    "f_back": "walks the caller's frames",
    "f_locals": "reads a frame's local variables",
    "f_globals": "reads a frame's globals",
    "tb_frame": "reads frames through a traceback",
    "gi_frame": "reads frames through a generator",
    "cr_frame": "reads frames through a coroutine",
    "get_objects": "scans every object through gc",
    "get_referrers": "scans objects through gc",
    "get_referents": "scans objects through gc",
    "__subclasses__": "enumerates classes",
    "_disable_current_modes": "switches off the audit's dispatch mode",
    "_get_current_dispatch_mode": "detects the audit's dispatch mode",
    "_get_current_dispatch_mode_stack": "detects the audit's dispatch mode",
    "_len_torch_dispatch_stack": "detects the audit's dispatch mode",
    "_python_dispatch": "uses torch's dispatch-mode internals",
    "_profiler_enabled": "detects the audit's profiler",
    "is_current_stream_capturing": "detects CUDA graph capture (the timing stage)",
}
_INSPECT_FRAME_FUNCS = frozenset({"currentframe", "stack", "getouterframes", "trace",
                                  "getframeinfo"})
_ALLOWED_WORKER_MODULES = frozenset({"kernelsmith_worker", "kernelsmith_worker.cpu_ext"})


def _dotted(node: ast.AST) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id == "__import__":
        parts.append("sys" if any(isinstance(a, ast.Constant) and a.value == "sys"
                                  for a in node.args) else "__import__()")
    return ".".join(reversed(parts))


def scan_source(source: str) -> list[str]:
    """Static scan of a candidate's source: one 'line N: what (why)' per suspicious use of
    frames, gc, sys.modules, the worker's internals or the audit's machinery. [] when clean
    or when the source does not parse (the load stage reports that)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    hits: list[str] = []

    def hit(node: ast.AST, what: str, why: str) -> None:
        hits.append(f"line {getattr(node, 'lineno', '?')}: {what} ({why})")

    # names bound to the worker's package (`import kernelsmith_worker as ks`): through them
    # only cpu_ext may be reached
    package = {"kernelsmith_worker"} | {
        a.asname for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
        if a.name == "kernelsmith_worker" and a.asname}

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            name = _dotted(node)
            if node.attr in SUSPECT_NAMES:
                hit(node, name, SUSPECT_NAMES[node.attr])
            elif name == "sys.modules":
                hit(node, name, "reaches other modules, the evaluator's included")
            elif name.split(".")[0] in package and name.count(".") >= 1 \
                    and name.split(".")[1] != "cpu_ext":
                hit(node, name, "reaches the evaluator's modules")
            elif name.startswith("inspect.") and node.attr in _INSPECT_FRAME_FUNCS:
                hit(node, name, "reads the caller's frames")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "getattr" and node.args and _dotted(node.args[0]) == "sys":
            hit(node, "getattr(sys, ...)", "reaches sys internals by a computed name")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("getattr", "vars") and node.args \
                and _dotted(node.args[0]) in package:
            hit(node, f"{node.func.id}({_dotted(node.args[0])}, ...)",
                "reaches the evaluator's modules by a computed name")
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            for alias in node.names:
                full = f"{mod}.{alias.name}"
                if alias.name in SUSPECT_NAMES or "_python_dispatch" in mod:
                    hit(node, f"from {mod} import {alias.name}",
                        SUSPECT_NAMES.get(alias.name, SUSPECT_NAMES["_python_dispatch"]))
                elif mod == "sys" and alias.name == "modules":
                    hit(node, "from sys import modules", "reaches the evaluator's modules")
                elif mod == "inspect" and alias.name in _INSPECT_FRAME_FUNCS:
                    hit(node, f"from inspect import {alias.name}", "reads the caller's frames")
                elif mod.startswith("kernelsmith_worker") and full not in _ALLOWED_WORKER_MODULES \
                        and mod not in _ALLOWED_WORKER_MODULES - {"kernelsmith_worker"}:
                    hit(node, f"from {mod} import {alias.name}", "imports the evaluator")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("kernelsmith_worker") \
                        and alias.name not in _ALLOWED_WORKER_MODULES:
                    hit(node, f"import {alias.name}", "imports the evaluator")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            v = node.value
            if v in SUSPECT_NAMES or "kernelsmith_worker." in v \
                    or v.startswith(("ks_problem", "ks_candidate")):
                if v != "kernelsmith_worker.cpu_ext":
                    hit(node, repr(v[:40]), "names the evaluator's internals")
            elif "cupti" in v.lower() or "ks_klog" in v:
                hit(node, repr(v[:40]), "reaches the device's kernel records (CUPTI)")
    return hits


_ = (builtins, time)  # modules named in _WATCHED_ATTRS, imported so they are resolvable
