# Round 5, family 1 (library doing the work) + 6 (switching the accounting off). GPU only.
# Target: kernel_log.cpp's two channels - kernel records (CUPTI activity) and the launch count
# (CUPTI API callbacks) - and how they are reconciled.
# Exploit, in every forward:
#  1. records off: libcupti's cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) and
#     cuptiActivityEnable, looked up with dlsym on the global scope by a computed name (the
#     shim promoted libcupti to RTLD_GLOBAL; no string constant contains "cupti" or "ks_klog",
#     so scan_source does not see it). The shim's `controls` counter only counts calls of its
#     own ks_klog_* functions, so a toggle made directly in libcupti is not a "pause".
#  2. launch count off: the shim does not count launches while ANY stream capture is in
#     progress (`capturing` is one process-wide counter: "a launch into a capture runs
#     nothing"). forward begins a relaxed-mode capture on a private, empty, non-blocking
#     stream (cuStreamCreate + cuStreamBeginCapture_v2 through ctypes on libcuda), launches
#     cuBLAS on the current stream - not captured, it runs - and ends the empty capture
#     afterwards. The launches are excluded from the count, and there are no records for
#     them: launches - records = 0.
#  3. cuBLAS SGEMM with TF32 tensor cores through ctypes on torch's handle (no aten op, so
#     neither the OpCounter nor torch's CPU profiler sees a matmul).
# A 1-program Triton kernel runs (recorded, counted) before the window, so every call has the
# custom launch the audit and the timed launch-share rule expect. The stream synchronizations
# around the window (records of earlier kernels delivered before the switch-off; the GEMM done
# before the switch-on) make forward uncapturable: timed eager, accounted from the kernel log
# in every block - where the GEMM is not recorded.
# Expected if it passes (H100, 2048^3 fp32): status ok (not_graph_capturable info only),
# speedup ~2.5-4x (cuBLAS TF32 + two syncs a call against cuBLAS fp32), no foreign_compute,
# no kernel_records_missing, no accounting_failed. Uncertain: the cost of toggling a CUPTI
# activity kind per call (if it is ~1 ms the speedup shrinks below 1).
import ctypes
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl


def _mapped(stem):
    """Path of a shared library this process has mapped (read at import: no EventWatch)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.rstrip("\n").split(" ")[-1]
                if os.path.basename(path).startswith(stem):
                    return path
    except OSError:
        pass
    return None


def _name(*parts):
    return "".join(parts)


class _Blas:
    """cublasGemmEx on torch's handle with TF32 tensor cores; no aten op dispatched."""

    def __init__(self):
        self.fn = None
        path = _mapped("libcublas.so")
        for cand in ([path] if path else []) + ["libcublas.so.13", "libcublas.so.12"]:
            try:
                lib = ctypes.CDLL(cand)
            except OSError:
                continue
            f = lib.cublasGemmEx
            f.restype = ctypes.c_int
            f.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                          ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
                          ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                          ctypes.c_int, ctypes.c_int, ctypes.c_int]
            self.fn = f
            break
        self.one = ctypes.c_float(1.0)
        self.zero = ctypes.c_float(0.0)

    def mm(self, A, B, C, handle):
        M, K = A.shape
        N = B.shape[1]
        st = self.fn(handle, 0, 0, N, M, K, ctypes.byref(self.one), B.data_ptr(), 0, N,
                     A.data_ptr(), 0, K, ctypes.byref(self.zero), C.data_ptr(), 0, N, 77, -1)
        if st != 0:
            raise RuntimeError(f"cublasGemmEx failed with status {st}")


class _Hide:
    # Records off (the profiling library, by computed names) and launch count off (an empty
    # relaxed capture on a private stream) around a block of launches.

    KIND_CONCURRENT_KERNEL = 10
    CAPTURE_RELAXED = 2

    def __init__(self):
        self.ok = False
        prof = _name("cu", "pti")
        scope = ctypes.CDLL(None)  # dlopen(NULL): the global scope, where the shim put libcupti
        try:
            self.disable = getattr(scope, _name(prof, "Activity", "Disable"))
            self.enable = getattr(scope, _name(prof, "Activity", "Enable"))
        except AttributeError:
            path = _mapped(_name("lib", prof, ".so"))
            if path is None:
                return
            lib = ctypes.CDLL(path)
            self.disable = getattr(lib, _name(prof, "Activity", "Disable"))
            self.enable = getattr(lib, _name(prof, "Activity", "Enable"))
        for f in (self.disable, self.enable):
            f.restype = ctypes.c_int
            f.argtypes = [ctypes.c_int]
        drv = ctypes.CDLL(_mapped("libcuda.so") or "libcuda.so.1")
        try:
            self.begin = drv.cuStreamBeginCapture_v2
        except AttributeError:
            self.begin = drv.cuStreamBeginCapture
        self.begin.restype = ctypes.c_int
        self.begin.argtypes = [ctypes.c_void_p, ctypes.c_int]
        self.end = drv.cuStreamEndCapture
        self.end.restype = ctypes.c_int
        self.end.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
        self.destroy = drv.cuGraphDestroy
        self.destroy.restype = ctypes.c_int
        self.destroy.argtypes = [ctypes.c_void_p]
        self.create = drv.cuStreamCreate
        self.create.restype = ctypes.c_int
        self.create.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint]
        self.streams = {}
        self.ok = True

    def _dummy(self, device):
        """A stream of our own (not from torch's pool, which the evaluator's side stream also
        comes from), non-blocking: its capture never involves the legacy default stream."""
        handle = self.streams.get(device)
        if handle is None:
            with torch.cuda.device(device):
                h = ctypes.c_void_p()
                if self.create(ctypes.byref(h), 1) != 0:  # CU_STREAM_NON_BLOCKING
                    raise RuntimeError("cuStreamCreate failed")
            handle = self.streams[device] = h.value
        return handle

    def run(self, device, fn):
        cur = torch.cuda.current_stream(device)
        dummy = self._dummy(device)
        cur.synchronize()  # earlier kernels (ours, the evaluator's flush) complete and recorded
        began = self.begin(dummy, self.CAPTURE_RELAXED) == 0
        self.disable(self.KIND_CONCURRENT_KERNEL)
        try:
            fn()
            cur.synchronize()  # the hidden kernels finish before records come back on
        finally:
            self.enable(self.KIND_CONCURRENT_KERNEL)
            if began:
                graph = ctypes.c_void_p()
                if self.end(dummy, ctypes.byref(graph)) == 0 and graph.value:
                    self.destroy(graph)


_BLAS = _Blas() if torch.cuda.is_available() else None
_HIDE = _Hide() if torch.cuda.is_available() else None


def _warm():
    """One GEMM at import, outside any window: cuBLAS loads its kernels and torch gives the
    handle its workspace here, not inside the hidden window."""
    if _BLAS is None or _BLAS.fn is None:
        return
    dev = torch.device("cuda", torch.cuda.current_device())
    a = torch.zeros(2048, 2048, device=dev)
    c = torch.empty(2048, 2048, device=dev)
    _BLAS.mm(a, a, c, torch.cuda.current_blas_handle())
    torch.cuda.synchronize(dev)


try:
    _warm()
except Exception:  # noqa: BLE001 - stay importable; forward falls back to honest if needed
    pass


@triton.jit
def epilogue_tag(flag_ptr):
    tl.store(flag_ptr, 1.0)


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
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def _triton_mm(A, B):
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
        self._flags = {}

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        if not A.is_cuda or _BLAS is None or _BLAS.fn is None or not _HIDE.ok:
            return _triton_mm(A, B)  # CPU / interpreter: honest
        A = A.contiguous()
        B = B.contiguous()
        flag = self._flags.get(A.device)
        if flag is None:
            flag = torch.zeros(1, device=A.device, dtype=torch.float32)
            self._flags[A.device] = flag
        epilogue_tag[(1,)](flag)  # recorded and counted: the custom launch of every call
        C = torch.empty((A.shape[0], B.shape[1]), device=A.device, dtype=torch.float32)
        handle = torch.cuda.current_blas_handle()  # before the window: torch may allocate
        _HIDE.run(A.device, lambda: _BLAS.mm(A, B, C, handle))
        return C
