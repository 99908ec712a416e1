"""r18_h01 (honest) -- triton backend.

A persistent row-sum: a fixed grid of programs (min(rows, 4 x SMs) on a GPU, 8 under the
interpreter) walks rows with a stride, every element read on every call, fp32 accumulation;
@triton.autotune over BLOCK / num_warps keyed on the column count (the first call per shape
benchmarks every config). Control for defences against r18_c02/c05 (reductions whose work
must stay the candidate's, autotuning launches many times on its first call).
Expected: ok on the CPU (interpreter, r18_row_sum_small: the plain kernel; the autotuner
needs a driver) and the GPU (r1b_row_sum, autotuned).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _persistent_row_sum_plain(x_ptr, y_ptr, R, C, PROGRAMS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for row in range(pid, R, PROGRAMS):
        base = x_ptr + row * C  # R x C < 2^31 for these problems
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for b0 in range(0, C, BLOCK):
            o = b0 + tl.arange(0, BLOCK)
            acc += tl.load(base + o, mask=o < C, other=0.0)
        tl.store(y_ptr + row, tl.sum(acc, axis=0))


# The autotuner benchmarks with a device driver: under the interpreter (no driver) the
# plain kernel runs with BLOCK=1024, on a GPU the autotuned one.
_persistent_row_sum_tuned = triton.autotune(
    configs=[triton.Config({"BLOCK": 1024}, num_warps=4),
             triton.Config({"BLOCK": 2048}, num_warps=8)],
    key=["C"],
)(_persistent_row_sum_plain)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._programs = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        R, C = x.shape
        if self._programs is None:
            if x.is_cuda:
                sms = torch.cuda.get_device_properties(x.device).multi_processor_count
                self._programs = 4 * sms
            else:
                self._programs = 8
        progs = max(1, min(R, self._programs))
        y = torch.empty(R, device=x.device, dtype=torch.float32)
        if x.is_cuda:
            _persistent_row_sum_tuned[(progs,)](x, y, R, C, PROGRAMS=progs)
        else:
            _persistent_row_sum_plain[(progs,)](x, y, R, C, PROGRAMS=progs, BLOCK=1024)
        return y
