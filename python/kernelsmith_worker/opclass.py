"""Classifying aten ops seen inside `ModelNew.forward` (dispatch-level audit).

Classes:
- `view`  : views and metadata (reshape, transpose, slicing, ...), and ops that neither take
            nor return a tensor (settings and cache queries: the evaluator's own state reads
            dispatch some, e.g. the cuFFT plan cache's size): free, allowed.
- `alloc` : allocation and constant fills (empty*, zeros, full, fill_, ...): allowed.
- `copy`  : copies and casts (clone, contiguous, copy_, _to_copy): allowed, reported as info.
- `light` : ops known to be cheap: elementwise math (torch's own `pointwise` tag on the op),
            data movement (cat, gather, index, pad, ...), random fills: allowed next to custom
            kernels, reported as a warning.
- `heavy` : ops that are the work of a typical problem (matmul, conv, softmax, norms,
            reductions, sort, attention, pooling, losses, ...): never allowed in forward.
- `unlisted`: any other aten/prims op. Not known to be light, so treated as the problem's work
            (aten::_trilinear runs a batched GEMM, aten::dist a reduction): never allowed in
            forward. Only the ops forward itself dispatches are held to this; the profiler's
            view (which also sees the internals of allowed ops) rejects `heavy` ones only.
Ops outside the `aten`/`prims` namespaces (custom ops the candidate registered) are `custom`.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections import Counter
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from kernelsmith_worker.event_watch import is_installed_code

VIEW_OPS: frozenset[str] = frozenset(
    """view _unsafe_view reshape _reshape_alias as_strided t transpose permute expand expand_as
    squeeze unsqueeze slice select split split_with_sizes unbind detach alias lift_fresh
    narrow chunk flatten unflatten movedim view_as view_as_real view_as_complex unfold diagonal
    set_ resize_ resize_as_ _local_scalar_dense is_pinned sym_size sym_stride sym_numel sym_storage_offset
    is_nonzero _has_compatible_shallow_copy_type numpy_T mT mH adjoint
    _conj _neg_view conj resolve_conj resolve_neg
    """.split()
)

ALLOC_OPS: frozenset[str] = frozenset(
    """empty empty_like empty_strided new_empty new_empty_strided zeros zeros_like ones ones_like
    full full_like fill fill_ zero_ new_zeros new_ones new_full scalar_tensor arange
    empty_permuted lift eye linspace logspace tril_indices triu_indices
    """.split()
)

COPY_OPS: frozenset[str] = frozenset(
    """clone contiguous copy copy_ _to_copy to _copy_from _copy_from_and_resize pin_memory
    _pin_memory type_as
    """.split()
)

HEAVY_OPS: frozenset[str] = frozenset(
    """mm bmm addmm addbmm baddbmm addmv mv dot vdot matmul linear _scaled_mm _int_mm einsum
    tensordot kron outer addr
    convolution _convolution conv1d conv2d conv3d conv_transpose1d conv_transpose2d
    conv_transpose3d convolution_overrideable cudnn_convolution cudnn_convolution_transpose
    mkldnn_convolution _slow_conv2d_forward slow_conv3d_forward slow_conv_transpose2d
    slow_conv_transpose3d _conv_depthwise2d conv_depthwise3d
    softmax _softmax log_softmax _log_softmax _safe_softmax softmin
    layer_norm native_layer_norm batch_norm native_batch_norm _native_batch_norm_legit
    _native_batch_norm_legit_no_training _batch_norm_impl_index cudnn_batch_norm
    miopen_batch_norm group_norm native_group_norm instance_norm rms_norm _fused_rms_norm
    scaled_dot_product_attention _scaled_dot_product_flash_attention
    _scaled_dot_product_efficient_attention _scaled_dot_product_cudnn_attention
    _scaled_dot_product_attention_math _flash_attention_forward _efficient_attention_forward
    cumsum cumprod cummax cummin logcumsumexp _cummax_helper _cummin_helper
    sort argsort topk kthvalue median nanmedian mode msort unique _unique _unique2
    unique_consecutive unique_dim
    sum nansum mean nanmean prod max min amax amin aminmax argmax argmin var std var_mean
    std_mean norm linalg_vector_norm linalg_matrix_norm frobenius_norm nuclear_norm logsumexp
    all any count_nonzero
    max_pool1d max_pool2d max_pool3d max_pool2d_with_indices max_pool3d_with_indices
    avg_pool1d avg_pool2d avg_pool3d adaptive_avg_pool1d adaptive_avg_pool2d
    adaptive_avg_pool3d _adaptive_avg_pool2d _adaptive_avg_pool3d adaptive_max_pool1d
    adaptive_max_pool2d adaptive_max_pool3d lp_pool1d lp_pool2d fractional_max_pool2d
    embedding embedding_bag _embedding_bag
    cross_entropy_loss nll_loss nll_loss_forward nll_loss2d_forward mse_loss l1_loss
    smooth_l1_loss huber_loss binary_cross_entropy binary_cross_entropy_with_logits kl_div
    soft_margin_loss multi_margin_loss multilabel_margin_loss hinge_embedding_loss
    margin_ranking_loss triplet_margin_loss cosine_embedding_loss poisson_nll_loss
    cosine_similarity pairwise_distance cdist _cdist_forward _euclidean_dist pdist _pdist_forward
    upsample_nearest1d upsample_nearest2d upsample_nearest3d upsample_linear1d
    upsample_bilinear2d upsample_bicubic2d upsample_trilinear3d _upsample_bilinear2d_aa
    grid_sampler grid_sampler_2d grid_sampler_3d im2col col2im
    histc bincount scatter_reduce index_reduce segment_reduce _segment_reduce
    _weight_norm _weight_norm_interface
    _fft_r2c _fft_c2r _fft_c2c
    rnn_tanh rnn_relu lstm gru _thnn_fused_lstm_cell _thnn_fused_gru_cell _cudnn_rnn
    _trilinear bilinear dist native_norm _foreach_norm renorm index_add scatter_add histogram
    """.split()
)

# Cheap ops that torch does not tag `pointwise`: data movement, activations, random fills,
# host-side scalar and assertion ops.
LIGHT_OPS: frozenset[str] = frozenset(
    """cat stack hstack vstack gather index_select index _unsafe_index index_put
    _index_put_impl index_fill masked_fill masked_scatter scatter select_scatter slice_scatter
    diagonal_scatter as_strided_scatter index_copy constant_pad_nd pad repeat repeat_interleave
    tile flip
    roll tril triu leaky_relu hardswish hardsigmoid floor_divide relu6 threshold
    rand rand_like randn randn_like randint randint_like randperm normal uniform bernoulli
    exponential geometric cauchy log_normal random native_dropout dropout
    item _assert_async _assert_scalar sym_constrain_range sym_constrain_range_for_size
    record_stream is_same_size result_type
    nonzero nonzero_static argwhere masked_select one_hot diff
    """.split()
)

# Families recognised by name when an exact entry is missing (new or rare overloads).
_HEAVY_PATTERN = re.compile(
    r"(^|_)(b?mm|addmm|conv|convolution|softmax|layer_norm|batch_norm|group_norm|"
    r"instance_norm|rms_norm|attention|pool|loss|cumsum|cumprod|sort|topk|fft|upsample)"
    r"|^linalg_|^_linalg_|^cudnn_|^miopen_|^mkldnn_"
)

ALLOWED_CLASSES: frozenset[str] = frozenset({"view", "alloc", "copy", "custom"})
# Classes that are compute (counted against the candidate: warned or rejected).
COMPUTE_CLASSES: frozenset[str] = frozenset({"light", "heavy", "unlisted"})


def op_name(qualified: str) -> tuple[str, str]:
    """'aten.mm' / 'aten::mm.default' → ('aten', 'mm')."""
    ns, _, rest = qualified.replace("::", ".").partition(".")
    return ns, rest.split(".", 1)[0]


def classify(qualified: str) -> str:
    """The class of an op given its qualified name ('aten.mm', 'myext.softmax', ...)."""
    ns, name = op_name(qualified)
    if ns not in ("aten", "prims"):
        return "custom"
    # In-place variants (unsqueeze_, fill_, copy_, add_) are classed like their op.
    base = name[:-1] if name.endswith("_") and not name.endswith("__") else name
    if name in VIEW_OPS or base in VIEW_OPS:
        return "view"
    if name in ALLOC_OPS or base in ALLOC_OPS:
        return "alloc"
    if name in COPY_OPS or base in COPY_OPS:
        return "copy"
    if base in HEAVY_OPS or name in HEAVY_OPS or _HEAVY_PATTERN.search(base):
        return "heavy"
    if base in LIGHT_OPS or _pointwise(ns, name) or _pointwise(ns, base):
        return "light"
    # A functional copy of a view op (permute_copy, view_copy, ...): a copy.
    if name.endswith("_copy") and name[: -len("_copy")] in VIEW_OPS:
        return "copy"
    if _tensorless(ns, name):
        return "view"
    return "unlisted"


@functools.lru_cache(maxsize=None)
def _pointwise(ns: str, name: str) -> bool:
    """True when torch tags some overload of ns::name `pointwise` (elementwise math)."""
    packet = getattr(getattr(torch.ops, ns), name, None)
    if packet is None or not hasattr(packet, "overloads"):
        return False
    return any(torch.Tag.pointwise in getattr(getattr(packet, o, None), "tags", ())
               for o in packet.overloads())


@functools.lru_cache(maxsize=None)
def _tensorless(ns: str, name: str) -> bool:
    """True when no overload of ns::name takes or returns a tensor: it reads or sets a value
    of the process (a setting, a cache's size) and cannot compute on the problem's data."""
    packet = getattr(getattr(torch.ops, ns), name, None)
    if packet is None or not hasattr(packet, "overloads"):
        return False
    for o in packet.overloads():
        schema = getattr(getattr(packet, o, None), "_schema", None)
        if schema is None:
            return False
        types = [a.type for a in schema.arguments] + [r.type for r in schema.returns]
        if any("Tensor" in str(t) for t in types):
            return False
    return True


def format_ops(counts: dict[str, int], limit: int = 8) -> str:
    """'[aten.mm x1, aten.add x2]' (most frequent first, at most `limit` entries)."""
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    parts = [f"{name} x{n}" for name, n in items[:limit]]
    if len(items) > limit:
        parts.append(f"... {len(items) - limit} more")
    return "[" + ", ".join(parts) + "]"


# torch's own files and this worker's: frames that issue ops on someone's behalf
_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_WORKER_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_TRITON_PART = os.sep + "triton" + os.sep


def _issued_by_triton(frame: Any) -> bool:
    """Whether the first frame above torch's, the worker's and the standard library's is
    Triton's own code (its interpreter copying storages, its autotuner): inside a launch, an
    op issued by candidate code (a grid callable, a launch or pre-run hook, an argument's
    method) is still the candidate's, whatever the launch recorder's depth says."""
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith((_TORCH_DIR, _WORKER_DIR)) or \
                (is_installed_code(name) and _TRITON_PART not in name):
            frame = frame.f_back
            continue
        # code compiled from a string ("<string>") may be anyone's: counted
        return _TRITON_PART in name and is_installed_code(name)
    return False


class OpCounter(TorchDispatchMode):
    """Counts aten ops by qualified name ('aten.mm') while active, except the ops Triton's
    own code issues inside custom-kernel launches (the Triton interpreter copies storages with
    torch ops)."""

    def __init__(self, recorder: Any) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()
        self._recorder = recorder

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        """False: torch would wrap __torch_dispatch__ in its dynamo switch, whose first call
        imports torch._dynamo (seconds) inside the forward being counted."""
        return False

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if self._recorder is None or not self._recorder.in_kernel() \
                or not _issued_by_triton(sys._getframe(1)):
            self.counts[str(func.overloadpacket)] += 1
        return func(*args, **(kwargs or {}))
