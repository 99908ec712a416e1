# Variant of r4_c05_timing_scoped_slow_reference without the dispatch-stack gate: fires in the evaluation through the
# worker, where the timing stage runs under a dispatch mode.
# Round 4, family 5 (slowing the reference), scoped to the timing stage. GPU only.
# Exploit: torch.softmax is in the integrity snapshot, but the timing stage calls forward with
# no integrity check until time_pair has returned. On the first side-stream call (the timing
# warm-up, before either graph is captured) forward replaces torch.softmax with a wrapper that
# runs the softmax three times and returns the last result: the reference's CUDA graph is
# captured with three softmax kernels per call and every timed check's reference call also
# pays, but all values stay exact. The candidate's own kernel is an honest row softmax. The
# original is put back on the second default-stream eager call after the last capture (the
# graph check makes the first; the wall check, after the blocks and the profiled samples,
# the second), before the end-of-stage integrity check.
# Expected on an H100 (4096x4096 softmax): status ok, speedup ~3x the honest figure (~1x).
import torch
import torch.nn as nn
import triton
import triton.language as tl

_stack_len = getattr(torch._C, "_len_torch_" + "dispatch_stack")
_capturing = getattr(torch._C, "_cuda_isCurrentStream" + "Capturing", lambda: False)


class _S:
    orig = None
    done = False
    captured = False
    main_calls = 0


def _slow_softmax(x, dim=None, dtype=None, **kw):
    out = None
    for _ in range(3):
        out = _S.orig(x, dim, dtype=dtype, **kw) if dtype is not None else _S.orig(x, dim, **kw)
    return out


@triton.jit
def softmax_kernel(x_ptr, y_ptr, N, sx, sy, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * sx + cols, mask=cols < N, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * sy + cols, e / tl.sum(e, axis=0), mask=cols < N)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.is_cuda and not torch.autograd.profiler._is_profiler_enabled:
            capturing = _capturing()
            side = torch.cuda.current_stream().cuda_stream != \
                torch.cuda.default_stream().cuda_stream
            if side and not capturing and _S.orig is None and not _S.done:
                _S.orig = torch.softmax
                torch.softmax = _slow_softmax
            if capturing:
                _S.captured, _S.main_calls = True, 0
            elif _S.orig is not None and _S.captured and not side:
                _S.main_calls += 1
                if _S.main_calls >= 2:
                    torch.softmax = _S.orig
                    _S.orig, _S.done = None, True
        x = x.contiguous()
        y = torch.empty_like(x)
        M, N = x.shape
        softmax_kernel[(M,)](x, y, N, x.stride(0), y.stride(0),
                             BLOCK=triton.next_power_of_2(N), num_warps=8)
        return y
