"""Problem inputs and reference outputs, generated on the device and cached.

Inputs of trial i are `get_inputs()` called right after `torch.manual_seed(seed + i)` under
`with torch.device(dev)`, so `torch.rand(...)` allocates on the GPU directly (KernelBench
builds multi-GB inputs; creating them on the CPU and copying costs seconds). Tensors that
still end up on the CPU are moved; dtypes are kept.

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


def clone_args(obj: Any) -> Any:
    """A deep copy of the tensors in obj (strides kept); other values shared."""
    return map_tensors(obj, lambda t: t.detach().clone())


def nbytes(obj: Any) -> int:
    return sum(t.numel() * t.element_size() for t in tensors_in(obj))


def to_device(obj: Any, dev: torch.device) -> Any:
    def move(t: torch.Tensor) -> torch.Tensor:
        return t if t.device == dev else t.to(dev)

    return map_tensors(obj, move)


def generate_inputs(get_inputs: Callable[[], Any], seed: int, dev: torch.device) -> list[Any]:
    """get_inputs() under manual_seed(seed) and `with torch.device(dev)`, moved to dev."""
    _manual_seed(seed)
    with torch.device(dev):
        raw = get_inputs()
    if not isinstance(raw, (list, tuple)):
        raise TypeError(f"get_inputs() must return a list or tuple, got {type(raw).__name__}")
    return list(to_device(list(raw), dev))


@dataclass
class TrialData:
    inputs: list[Any]  # pristine; never given to a model
    reference: Any = None  # reference output for these inputs, None until computed
    has_reference: bool = False


def default_budget(dev: torch.device) -> int:
    """$KS_INPUT_CACHE_BYTES, else 1/4 of the GPU's memory, else 1 GiB for the CPU."""
    env = os.environ.get("KS_INPUT_CACHE_BYTES")
    if env:
        return int(env)
    if dev.type == "cuda":
        return torch.cuda.get_device_properties(dev).total_memory // 4
    return 1 << 30


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

    def put(self, key: tuple[str, int, int, str], data: TrialData, budget: int) -> None:
        """Stores data (replacing an older entry under key) unless it alone exceeds budget."""
        limit = self.budget_bytes if self.budget_bytes is not None else budget
        size = nbytes(data.inputs) + (nbytes(data.reference) if data.has_reference else 0)
        self.discard(key)
        if size > limit:
            return
        while self._entries and self._bytes + size > limit:
            _, (_, old) = self._entries.popitem(last=False)
            self._bytes -= old
        self._entries[key] = (data, size)
        self._bytes += size

    def discard(self, key: tuple[str, int, int, str]) -> None:
        old = self._entries.pop(key, None)
        if old is not None:
            self._bytes -= old[1]

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = 0
