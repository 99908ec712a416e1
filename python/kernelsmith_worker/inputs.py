"""Problem inputs and reference outputs, generated on the device and cached.

Inputs of trial i are `get_inputs()` called right after `torch.manual_seed(seed + i)` under
`with torch.device(dev)`, so `torch.rand(...)` allocates on the GPU directly (KernelBench
builds multi-GB inputs; creating them on the CPU and copying costs seconds). Tensors that
still end up on the CPU are moved; dtypes are kept. Before that, get_inputs() runs once on the
meta device to measure its tensors: inputs larger than the device's free memory are refused
with an InputError instead of crashing the worker; a return value that is not a list or tuple
is an InputError too (elements may be any values the reference takes).

`InputCache` keeps pristine inputs and reference outputs per (problem sha256, seed, trial,
device) across requests, least recently used first out, bounded by bytes. Callers never
hand cached tensors to a model: they clone them.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable

import torch

_manual_seed = torch.manual_seed


def tensors_in(obj: Any) -> Iterator[torch.Tensor]:
    """Every tensor in obj (nested lists/tuples/dicts), in order."""
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from tensors_in(v)
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from tensors_in(v)


def map_tensors(obj: Any, fn: Callable[[torch.Tensor], Any]) -> Any:
    """obj with every tensor replaced by fn(tensor) (same container types)."""
    if isinstance(obj, torch.Tensor):
        return fn(obj)
    if isinstance(obj, list):
        return [map_tensors(v, fn) for v in obj]
    if isinstance(obj, tuple):
        return tuple(map_tensors(v, fn) for v in obj)
    if isinstance(obj, dict):
        return {k: map_tensors(v, fn) for k, v in obj.items()}
    return obj


def present(obj: Any) -> list[Any]:
    """The arguments a candidate call is handed: for every tensor of `obj` a new tensor object
    over the same memory, shape and strides (not a view), version counter 0, while the caller
    holds `obj`'s tensor for the length of the call. Every call of the candidate -- trials,
    stress trials, audit calls, timed calls, timed checks, the call after the timing loop --
    gets its tensors from this one constructor with one evaluator tensor behind each, so
    nothing about the objects (storage use count, reference count, version counter, `_base`,
    identity) tells one kind of call from another."""
    return list(map_tensors(obj, alias))


def alias(t: torch.Tensor) -> torch.Tensor:
    """Another tensor object over t's memory, shape and strides, and not a view (`_is_view()`
    and `_base` are the same as a clone's), its version counter at 0."""
    return unversioned(torch.empty(0, dtype=t.dtype, device=t.device).set_(
        t.untyped_storage(), t.storage_offset(), t.size(), t.stride()))


_set_versions = getattr(torch._C._autograd, "_unsafe_set_version_counter", None)


def unversioned(t: torch.Tensor) -> torch.Tensor:
    """t with its version counter at 0, as a clone's: the in-place write that made it must not
    tell one kind of call from another."""
    if _set_versions is not None:
        _set_versions((t,), (0,))
    return t


def clone_args(obj: Any) -> Any:
    """A deep copy of the tensors in obj (strides kept); other values shared."""
    return map_tensors(obj, lambda t: t.detach().clone())


def device_copy(obj: Any, dev: torch.device) -> Any:
    """A fresh copy of obj's tensors on dev (always a copy, even when already there)."""
    return map_tensors(obj, lambda t: t.detach().to(dev, copy=True))


def host_copy(obj: Any, per_request: bool = False) -> Any:
    """A copy of obj's tensors in host memory. `per_request`: a copy freed when the request
    ends (stress trials' reference outputs, fresh draws) is page-locked where the worker's
    budget allows: torch keeps freed page-locked blocks for reuse, so the next request's copy
    of the same size costs neither an allocation nor page faults (a 2 GiB copy to fresh
    pageable memory takes ~1.5 s on an H100 host, to a reused page-locked block ~0.04 s, and
    the copy back ~0.3 s against ~0.05 s). Long-lived copies stay in pageable memory."""
    return map_tensors(obj, lambda t: _host_copy(t.detach(), per_request))


def _host_copy(t: torch.Tensor, per_request: bool) -> torch.Tensor:
    if per_request and t.device.type == "cuda" and _may_pin(t.numel() * t.element_size()):
        try:
            return torch.empty_like(t, device="cpu", pin_memory=True).copy_(t)
        except RuntimeError:  # page-locked memory refused: the ordinary copy below
            pass
    return t.to("cpu", copy=True)


def pinned_budget() -> int:
    """Bytes of page-locked host memory a worker may hold at once: $KS_PINNED_HOST_BYTES,
    else 1/16 of the host's memory (several workers share a host)."""
    value = os.environ.get("KS_PINNED_HOST_BYTES")
    if value:
        return int(value)
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 16


def _may_pin(n: int) -> bool:
    try:
        active = int(torch.cuda.host_memory_stats().get("active_bytes.current", 0))
    except Exception:  # noqa: BLE001 - an older torch without the statistics
        return False
    return active + n <= pinned_budget()


def scrub(obj: Any) -> None:
    """Zeroes obj's tensors in place: an evaluator copy (a reference output, say) that is no
    longer needed leaves nothing a later candidate call could read from freed memory."""
    for t in tensors_in(obj):
        if t.numel():
            t.detach().zero_()


def poison_free_blocks(dev: torch.device) -> None:
    """Overwrites every free block of the CUDA caching allocator with 0xFF: what the
    reference computed (outputs, intermediates) is gone before candidate code runs. Each
    block is taken by an allocation of its size (all held at once, so each gets its own)."""
    if dev.type != "cuda":
        return
    sizes = [b["size"] for seg in torch.cuda.memory_snapshot() if seg.get("device") == dev.index
             or dev.index is None for b in seg.get("blocks", []) if b.get("state") == "inactive"]
    held = [torch.empty(n, dtype=torch.uint8, device=dev).fill_(0xFF) for n in sizes if n > 0]
    del held


def nbytes(obj: Any) -> int:
    return sum(t.numel() * t.element_size() for t in tensors_in(obj))


def to_device(obj: Any, dev: torch.device) -> Any:
    def move(t: torch.Tensor) -> torch.Tensor:
        return t if t.device == dev else t.to(dev)

    return map_tensors(obj, move)


class InputError(Exception):
    """get_inputs() returned something the evaluator cannot use; the message says what to fix."""


def check_inputs_value(raw: Any) -> list[Any]:
    """raw as a list of forward arguments; InputError for anything but a list or tuple.

    Elements may be tensors or any other value the reference accepts (ints, floats, lists,
    None); only the container is checked."""
    if isinstance(raw, (list, tuple)):
        return list(raw)
    what = "None (a missing `return`?)" if raw is None else f"a {type(raw).__name__}"
    raise InputError(f"get_inputs() returned {what}; it must return a list of Model.forward's "
                     f"positional arguments, e.g. `return [torch.rand(N, N), 3]`")


def available_bytes(dev: torch.device) -> int | None:
    """Memory free for new inputs on dev: the GPU's free memory, or MemAvailable (lowered by
    RLIMIT_AS when set) for the CPU; None when unknown."""
    if dev.type == "cuda":
        try:
            return int(torch.cuda.mem_get_info(dev)[0])
        except Exception:  # noqa: BLE001 - no driver details: skip the check
            return None
    if dev.type != "cpu":
        return None
    free: int | None = None
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    free = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        free = None
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            free = soft if free is None else min(free, soft)
    except (ImportError, OSError, ValueError):
        pass
    return free


def planned_input_bytes(get_inputs: Callable[[], Any]) -> int | None:
    """Bytes of the tensors get_inputs() creates, measured by calling it on the meta device
    (nothing is allocated); None when it cannot run there (data-dependent code)."""
    try:
        with torch.device("meta"):
            raw = get_inputs()
    except Exception:  # noqa: BLE001 - the real call reports real errors
        return None
    if not isinstance(raw, (list, tuple)):
        return None
    return nbytes(list(raw))


def _gib(n: int) -> str:
    return f"{n / (1 << 30):.2f} GiB"


def check_input_size(get_inputs: Callable[[], Any], dev: torch.device) -> None:
    """InputError when get_inputs() would need more memory than dev has free, before anything
    is allocated (instead of an out-of-memory crash of the worker)."""
    if dev.type == "meta":
        return
    planned = planned_input_bytes(get_inputs)
    if planned is None:
        return
    free = available_bytes(dev)
    if free is not None and planned > free:
        raise InputError(f"get_inputs() would allocate {_gib(planned)} of inputs but only "
                         f"{_gib(free)} is available on {dev}; make the inputs smaller "
                         f"(the sizes in get_inputs) or evaluate on a device with more memory")


def generate_inputs(get_inputs: Callable[[], Any], seed: int, dev: torch.device) -> list[Any]:
    """get_inputs() under manual_seed(seed) and `with torch.device(dev)`, moved to dev.

    InputError when get_inputs() does not return a list or tuple, or would not fit in dev's
    free memory (checked first on the meta device)."""
    check_input_size(get_inputs, dev)
    _manual_seed(seed)
    with torch.device(dev):
        raw = get_inputs()
    return list(to_device(check_inputs_value(raw), dev))


@dataclass
class TrialData:
    inputs: list[Any]  # pristine; never given to a model
    reference: Any = None  # reference output for these inputs, None until computed
    has_reference: bool = False
    finite: bool = True  # every floating point value of the reference output is finite
    ops: frozenset[str] = frozenset()  # aten ops the reference ran (trial 0 only)
    ref_aliased: frozenset[int] = frozenset()  # inputs whose memory the reference's output shares


def free_memory_budget(dev: torch.device, env: str, share: int, cap: int, cpu: int) -> int:
    """Bytes a worker buffer may take: $env when set, else 1/share of the GPU's free memory
    up to cap, else `cpu` bytes on the CPU."""
    value = os.environ.get(env)
    if value:
        return int(value)
    if dev.type == "cuda":
        free, _ = torch.cuda.mem_get_info(dev)
        return min(free // share, cap)
    return cpu


def default_budget(dev: torch.device) -> int:
    """$KS_INPUT_CACHE_BYTES, else 1/4 of the GPU's memory, else 1 GiB for the CPU."""
    env = os.environ.get("KS_INPUT_CACHE_BYTES")
    if env:
        return int(env)
    if dev.type == "cuda":
        return torch.cuda.get_device_properties(dev).total_memory // 4
    return 1 << 30


def _same_request(a: tuple[str, int, int, str], b: tuple[str, int, int, str]) -> bool:
    """Keys (problem, seed, trial, device) of trials of one request."""
    return a[:2] == b[:2] and a[3] == b[3]


class InputCache:
    """LRU of TrialData bounded by total tensor bytes. Not thread-safe."""

    def __init__(self, budget_bytes: int | None = None) -> None:
        self.budget_bytes = budget_bytes
        self._entries: OrderedDict[tuple[str, int, int, str], tuple[TrialData, int]] = OrderedDict()
        self._bytes = 0

    @property
    def bytes_used(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: tuple[str, int, int, str]) -> TrialData | None:
        hit = self._entries.get(key)
        if hit is None:
            return None
        self._entries.move_to_end(key)
        return hit[0]

    def put(self, key: tuple[str, int, int, str], data: TrialData, budget: int) -> bool:
        """Stores data (replacing an older entry under key) unless it alone exceeds budget or
        making room would evict another trial of the same request (problem, seed, device):
        each request reads its trials in a loop, and an LRU smaller than the loop misses on
        every access (a problem whose five trials just overflow the budget would regenerate
        all five every request; kept this way, only the one that does not fit). Other
        requests' entries are evicted least recently used first. Returns whether it is
        stored."""
        limit = self.budget_bytes if self.budget_bytes is not None else budget
        size = nbytes(data.inputs) + (nbytes(data.reference) if data.has_reference else 0)
        self.discard(key)
        if not self.admits(key, size, budget):
            return False
        for old in [k for k in self._entries if not _same_request(k, key)]:
            if self._bytes + size <= limit:
                break
            self.discard(old)
        self._entries[key] = (data, size)
        self._bytes += size
        return True

    def admits(self, key: tuple[str, int, int, str], size: int, budget: int) -> bool:
        """Whether put() would store an entry of `size` bytes under key now."""
        limit = self.budget_bytes if self.budget_bytes is not None else budget
        siblings = sum(n for k, (_, n) in self._entries.items()
                       if _same_request(k, key) and k != key)
        return siblings + size <= limit

    def discard(self, key: tuple[str, int, int, str]) -> None:
        old = self._entries.pop(key, None)
        if old is not None:
            self._bytes -= old[1]

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = 0
