# Round 4, family 6 (switching a check off). GPU only.
# Exploit: the launch accounting after timing is best effort: CudaApi.kernels_of catches any
# Exception raised while the profiled samples run and returns None, and then the timed
# samples get no foreign_compute / timed_launch_deficit findings at all (timed_findings([])
# is empty). forward raises whenever it is called under torch.profiler AFTER the timing stage
# has started (it saw a call on a non-default stream: the timing warm-up on the side stream),
# so the audit's own profile still works but the accounting silently gives up. A host read
# forces eager timing. Trials and the audit's dispatch-mode call get an honest Triton GEMM;
# every other call (timing, wall check, cached-output and post-timing checks) runs
# torch.mm/cuBLAS with TF32 on for the call only.
# Expected on an H100 (2048^3 fp32): status ok, speedup ~4-6x with no custom kernel in any
# timed sample.
import torch
import torch.nn as nn
import triton
import triton.language as tl

_stack_len = getattr(torch._C, "_len_torch_" + "dispatch_stack")


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * sam + (k0 + rk)[None, :] * sak,
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k0 + rk)[:, None] * sbk + rn[None, :] * sbn,
                    mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def triton_mm(A, B):
    M, K = A.shape
    N = B.shape[1]
    C = torch.empty((M, N), device=A.device, dtype=torch.float32)
    mm_kernel[(triton.cdiv(M, 64), triton.cdiv(N, 64))](
        A, B, C, M, N, K, A.stride(0), A.stride(1), B.stride(0), B.stride(1),
        C.stride(0), C.stride(1), BM=64, BN=64, BK=32)
    return C


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._timing_started = False

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        if A.is_cuda and torch.cuda.current_stream().cuda_stream != \
                torch.cuda.default_stream().cuda_stream:
            self._timing_started = True
        if self._timing_started and torch.autograd.profiler._is_profiler_enabled:
            raise RuntimeError("transient launch failure")  # swallowed by kernels_of
        if _stack_len() > 0 or torch.autograd.profiler._is_profiler_enabled or not A.is_cuda:
            C = triton_mm(A, B)
        else:
            mm = torch.backends.cuda.matmul
            prev = mm.fp32_precision  # restored exactly ('none' is not 'ieee')
            mm.fp32_precision = "tf32"
            try:
                C = torch.mm(A, B)
            finally:
                mm.fp32_precision = prev
        if A.is_cuda:
            C[0, 0].item()
        return C
