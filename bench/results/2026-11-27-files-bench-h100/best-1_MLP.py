# triton seed for 1_MLP.py: each Linear is one tiled matmul x @ W^T with the bias (and the
# ReLU for hidden layers) fused into the epilogue. IEEE fp32 dot (no TF32).
import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
from triton.tools.tensor_descriptor import TensorDescriptor

GROUP_SIZE_M = 8
CAST_BLOCK = 4096
_SM_COUNT = {}


def _num_sms(device):
    idx = device.index if device.index is not None else torch.cuda.current_device()
    if idx not in _SM_COUNT:
        _SM_COUNT[idx] = torch.cuda.get_device_properties(idx).multi_processor_count
    return _SM_COUNT[idx]


@triton.jit
def cast_f16_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(src_ptr + offs, mask=mask, other=0.0)
    tl.store(dst_ptr + offs, v.to(tl.float16), mask=mask)


def _half(t):
    t = t.contiguous()
    out = torch.empty(t.shape, dtype=torch.float16, device=t.device)
    n = t.numel()
    cast_f16_kernel[(triton.cdiv(n, CAST_BLOCK),)](t, out, n, BLOCK=CAST_BLOCK, num_warps=8)
    return out


def _set_block_shapes(nargs):
    # point the TMA descriptors at the autotuned tile shape
    bm, bn, bk = nargs["BM"], nargs["BN"], nargs["BK"]
    nargs["x_desc"].block_shape = [bm, bk]
    nargs["w_desc"].block_shape = [bn, bk]


def _cfg(bm, bn, bk, stages, warps):
    return triton.Config({"BM": bm, "BN": bn, "BK": bk}, num_stages=stages, num_warps=warps,
                         pre_hook=_set_block_shapes)


@triton.autotune(
    configs=[
        _cfg(128, 256, 64, 3, 8),
        _cfg(128, 256, 64, 4, 8),
        _cfg(128, 128, 64, 4, 8),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def linear_persistent_kernel(x_desc, w_desc, b_ptr, y_ptr, M, N, K, NUM_SMS: tl.constexpr,
                             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                             GROUP_M: tl.constexpr, RELU: tl.constexpr):
    # y[M, N] = x @ w^T + b (fp16 operands via TMA, fp32 accumulation); y is fp16 or fp32.
    # Persistent: each program strides over output tiles; the flattened loop lets the
    # pipeline prefetch the next tile's K-blocks while this tile's epilogue runs.
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    num_tiles = num_pid_m * num_pid_n
    k_tiles = tl.cdiv(K, BK)
    group_size = GROUP_M * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
        first_m = (tile_id // group_size) * GROUP_M
        group_m = min(num_pid_m - first_m, GROUP_M)
        pid_m = first_m + (tile_id % group_size) % group_m
        pid_n = (tile_id % group_size) // group_m
        off_m = pid_m * BM
        off_n = pid_n * BN
        acc = tl.zeros([BM, BN], dtype=tl.float32)
        for ki in range(k_tiles):
            # TMA boxes: out-of-bounds rows / k columns are zero-filled by the hardware
            a = x_desc.load([off_m, ki * BK])
            b = w_desc.load([off_n, ki * BK])
            acc = tl.dot(a, tl.trans(b), acc)
        rm = off_m + tl.arange(0, BM)
        rn = off_n + tl.arange(0, BN)
        v = acc + tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
        if RELU:
            v = tl.maximum(v, 0.0)
        tl.store(y_ptr + rm[:, None] * N + rn[None, :], v.to(y_ptr.dtype.element_ty),
                 mask=(rm[:, None] < M) & (rn[None, :] < N))


def _linear(x16, w16, bias, relu, out_dtype):
    M, K = x16.shape
    N = w16.shape[0]
    y = torch.empty((M, N), dtype=out_dtype, device=x16.device)
    # placeholder block shapes; the autotune pre_hook sets the real ones
    x_desc = TensorDescriptor.from_tensor(x16, [128, 64])
    w_desc = TensorDescriptor.from_tensor(w16, [256, 64])
    sms = _num_sms(x16.device)
    grid = lambda meta: (min(sms, triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"])),)
    linear_persistent_kernel[grid](x_desc, w_desc, bias, y, M, N, K, NUM_SMS=sms,
                                   GROUP_M=GROUP_SIZE_M, RELU=relu)
    return y


class ModelNew(nn.Module):
    def __init__(self, in_features: int, hidden_sizes: list, out_features: int):
        super().__init__()
        layers = []
        current = in_features
        for h in hidden_sizes:  # same parameter creation order as the reference
            layers.append(nn.Linear(current, h))
            current = h
        layers.append(nn.Linear(current, out_features))
        self.layers = nn.ModuleList(layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out_dtype = x.dtype
        h = _half(x.contiguous())
        last = len(self.layers) - 1
        for i, layer in enumerate(self.layers):
            w16 = _half(layer.weight)
            # hidden activations stay fp16 (same 10-bit mantissa as the tf32 path)
            h = _linear(h, w16, layer.bias, relu=i < last,
                        out_dtype=out_dtype if i == last else torch.float16)
        return h
# EVOLVE-BLOCK-END
