"""The work of a forward pass: FLOPs by arithmetic class, and bytes.

FLOPs come from torch's FLOP counter (`torch.utils.flop_counter.FlopCounterMode`) over the
ops a forward dispatches: its formulas for matmuls, convolutions and attention (2 per
multiply-add), extended with fixed per-element counts for the ops it leaves at zero:

- pointwise ops (torch's `pointwise` tag): 1 FLOP per output element;
- reductions (sum, mean, amax, var, norm, ...): 1 FLOP per input element;
- softmax / log_softmax: 5 per element (max, subtract, exp, sum, divide);
- layer/group/RMS norm: 8 / 8 / 4 per element; batch norm (inference): 4 per element.

Each FLOP has a class, the peak it is measured against: matmul-family FLOPs of bf16 and
fp16 tensors are `bf16` / `fp16`; of fp32 tensors on a GPU `tf32` when torch lets that op
use TF32 as the problem runs (`torch.backends.cuda.matmul.allow_tf32` for matmuls and
attention, `torch.backends.cudnn.allow_tf32` for convolutions), else `fp32`. Per-element
FLOPs, and matmul FLOPs of other dtypes, are `fp32` (the non-tensor-core rate).

Minimum bytes: every input, parameter and buffer read once and every output written once
(distinct tensors by address; logical sizes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

import torch
from torch.utils.flop_counter import FlopCounterMode, _FlopCounterMode

from kernelsmith_worker import opclass
from kernelsmith_worker.inputs import tensors_in

FLOP_CLASSES: tuple[str, ...] = ("fp32", "tf32", "bf16", "fp16")

_aten = torch.ops.aten
_CONV_OPS = frozenset({_aten.convolution, _aten._convolution, _aten.cudnn_convolution,
                       _aten.convolution_overrideable, _aten._slow_conv2d_forward})
# FLOPs per element of the first tensor argument, for ops torch's counter leaves at zero.
_PER_ELEMENT: dict[str, int] = {
    "_softmax": 5, "softmax": 5, "_log_softmax": 5, "log_softmax": 5, "_safe_softmax": 5,
    "native_layer_norm": 8, "layer_norm": 8, "native_group_norm": 8, "group_norm": 8,
    "_fused_rms_norm": 4, "rms_norm": 4,
    "native_batch_norm": 4, "_native_batch_norm_legit": 4,
    "_native_batch_norm_legit_no_training": 4, "batch_norm": 4,
    "sum": 1, "nansum": 1, "mean": 1, "nanmean": 1, "prod": 1, "amax": 1, "amin": 1, "max": 1,
    "min": 1, "aminmax": 1, "argmax": 1, "argmin": 1, "var": 1, "std": 1, "var_mean": 1,
    "std_mean": 1, "norm": 1, "linalg_vector_norm": 1, "logsumexp": 1, "cumsum": 1, "cumprod": 1,
    "any": 1, "all": 1, "count_nonzero": 1,
}


@dataclass
class Work:
    """FLOPs per class (FLOP_CLASSES) and bytes."""

    flops: dict[str, int] = field(default_factory=dict)
    bytes: int = 0

    def total_flops(self) -> int:
        return sum(self.flops.values())

    def to_json(self) -> dict[str, Any]:
        return {"flops": {k: v for k, v in sorted(self.flops.items()) if v},
                "bytes": int(self.bytes)}


def _first_tensor(args: Any) -> torch.Tensor | None:
    return next(iter(tensors_in(list(args))), None)


def _is_pointwise(packet: Any) -> bool:
    for name in packet.overloads():
        op = getattr(packet, name, None)
        if op is not None and torch.Tag.pointwise in getattr(op, "tags", ()):
            return True
    return False


def _matrix_class(packet: Any, t: torch.Tensor | None) -> str:
    if t is None:
        return "fp32"
    if t.dtype == torch.bfloat16:
        return "bf16"
    if t.dtype == torch.float16:
        return "fp16"
    if t.dtype == torch.float32 and t.device.type == "cuda":
        tf32 = torch.backends.cudnn.allow_tf32 if packet in _CONV_OPS \
            else torch.backends.cuda.matmul.allow_tf32
        return "tf32" if tf32 else "fp32"
    return "fp32"


class _WorkMode(_FlopCounterMode):
    """torch's FLOP-counting dispatch mode with its dispatch unwrapped: torch wraps a mode's
    __torch_dispatch__ in its dynamo switch, whose first call imports torch._dynamo (seconds)."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False

    __torch_dispatch__ = getattr(_FlopCounterMode.__torch_dispatch__, "__wrapped__",
                                 _FlopCounterMode.__torch_dispatch__)


class WorkCounter(FlopCounterMode):
    """FlopCounterMode that also sorts FLOPs into classes and, with `op_bytes`, sums the bytes
    each compute op reads and writes (for the work torch ops do next to custom kernels).
    `skip()`: ops dispatched while it returns True are not counted (inside a custom-kernel
    launch, where the Triton interpreter copies storages with torch ops)."""

    def __init__(self, skip: Callable[[], bool] | None = None, op_bytes: bool = False) -> None:
        super().__init__(display=False)
        self.by_class: dict[str, int] = {}
        self.op_bytes = 0
        self.ops: dict[str, int] = {}
        self._skip = skip
        self._count_bytes = op_bytes
        self._pointwise: dict[Any, bool] = {}

    def __enter__(self) -> WorkCounter:
        """FlopCounterMode.__enter__, with _WorkMode as the dispatch mode."""
        self.flop_counts.clear()
        self.mod_tracker.__enter__()
        self.mode = _WorkMode(self)
        self.mode.__enter__()
        return self

    def _count_flops(self, func_packet: Any, out: Any, args: Any, kwargs: Any) -> Any:
        if self._skip is not None and self._skip():
            return out
        name = func_packet.__name__ if hasattr(func_packet, "__name__") else str(func_packet)
        first = _first_tensor(args)
        if func_packet in self.flop_registry:
            n = int(self.flop_registry[func_packet](*args, **kwargs, out_val=out))
            cls = _matrix_class(func_packet, first)
        else:
            cls = "fp32"
            per = _PER_ELEMENT.get(name)
            if per is not None and first is not None:
                n = per * first.numel()
            elif self._pointwise.setdefault(func_packet, _is_pointwise(func_packet)):
                n = sum(t.numel() for t in tensors_in([out]))
            else:
                n = 0
        if n:
            self.by_class[cls] = self.by_class.get(cls, 0) + n
        if self._count_bytes and opclass.classify(f"aten.{name}") in opclass.COMPUTE_CLASSES:
            moved = sum(t.numel() * t.element_size() for t in tensors_in([list(args), out]))
            self.op_bytes += moved
            self.ops[f"aten.{name}"] = self.ops.get(f"aten.{name}", 0) + 1
        return out


def min_bytes(inputs: list[Any], model: torch.nn.Module, output: Any) -> int:
    """Inputs, parameters and buffers read once, outputs written once (each distinct tensor
    counted once)."""
    seen: set[tuple[int, int, int]] = set()
    total = 0
    tensors = list(tensors_in(list(inputs))) + list(model.parameters()) + \
        list(model.buffers()) + list(tensors_in([output]))
    for t in tensors:
        size = t.numel() * t.element_size()
        key = (t.data_ptr(), size, t.dtype.itemsize)
        if key in seen:
            continue
        seen.add(key)
        total += size
    return total


def forward_work(model: torch.nn.Module, inputs: list[Any]) -> Work:
    """Runs model(*inputs) once under no_grad and the counter: its FLOPs and minimum bytes."""
    counter = WorkCounter()
    with torch.no_grad(), counter:
        out = model(*inputs)
    if isinstance(out, torch.Tensor) and out.device.type == "cuda":
        torch.cuda.synchronize(out.device)
    return Work(flops=dict(counter.by_class), bytes=min_bytes(inputs, model, out))
