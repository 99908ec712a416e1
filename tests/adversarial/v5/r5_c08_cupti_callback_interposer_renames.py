# Round 5, family 1 (library doing the work) + 6 (forging the accounting). GPU only.
# Target: the kernel log trusts whatever reaches its CUPTI buffer-completed callback.
# Exploit: at import the candidate
#  1. finds the shim's two buffer callbacks, BufferRequested and BufferCompleted (hidden,
#     anonymous-namespace functions): kernel_log.current()._lib is the shim's ctypes library
#     (`import kernelsmith_worker` passes scan_source), its file keeps a full .symtab (cpu_ext
#     builds with -fvisibility=hidden but does not strip), and the load base is the address of
#     the exported ks_klog_take minus its symbol value;
#  2. compiles its own small C++ interposer with the worker's own cpu_ext.build (the one worker
#     module a candidate may import), against the CUPTI headers the worker found for itself
#     (kernel_log._cupti_library / _fallback_includes). The source spells CUPTI with
#     placeholders, so no string constant contains "cupti" or "ks_klog" for scan_source;
#  3. registers the interposer with cuptiActivityRegisterCallbacks. Its request callback calls
#     the shim's; its completed callback walks each buffer and points the `name` of every kernel
#     record that looks like a library kernel (gemm/xmma/nvjet/cutlass/cublas) at the string
#     "Memset (Device)", then hands the buffer to the shim's BufferCompleted, which sums it.
# Nothing is switched off: every launch has its record, the shim's controls counter never
# moves (no ks_klog_* call), and each cuBLAS kernel is summed as glue (gpu_profile._GLUE).
# The evaluator re-registers the shim's callbacks on every restart (after profile_forward's
# torch.profiler call, and around CUDA-graph timing); forward polls ks_klog_controls() and
# re-registers the interposer when it moved. forward queries the current stream first (illegal
# while capturing), so the candidate is timed eager - a graph timing's resume would re-register
# the shim right before the five accounted replays, with no forward call in between.
# forward: a 1-program Triton kernel (the custom launch every call) and a cuBLAS TF32 GEMM
# through ctypes on torch's handle (no aten op for the OpCounter or the CPU profiler).
# Expected if it passes (H100, 2048^3 fp32): status ok (not_graph_capturable info only),
# speedup ~3-4x, no foreign_compute, no kernel_records_missing, no accounting_failed.
import ctypes
import os
import struct

import torch
import torch.nn as nn
import triton
import triton.language as tl

try:
    import kernelsmith_worker as _ks  # allowed by the static scan (cpu_ext lives there)
except Exception:  # noqa: BLE001 - outside the worker
    _ks = None


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


def _gemm_fn():
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
        return f
    return None


_GEMM = _gemm_fn() if torch.cuda.is_available() else None
_ONE = ctypes.c_float(1.0)
_ZERO = ctypes.c_float(0.0)


def _tf32_mm(A, B):
    M, K = A.shape
    N = B.shape[1]
    C = torch.empty((M, N), device=A.device, dtype=torch.float32)
    handle = torch.cuda.current_blas_handle()
    st = _GEMM(handle, 0, 0, N, M, K, ctypes.byref(_ONE), B.data_ptr(), 0, N, A.data_ptr(), 0,
               K, ctypes.byref(_ZERO), C.data_ptr(), 0, N, 77, -1)
    if st != 0:
        raise RuntimeError(f"cublasGemmEx failed with status {st}")
    return C


# The interposer. @l@ / @U@ / @C@ stand for the profiling library's lower-case, upper-case and
# mixed-case prefixes; they are filled in at import.
_SOURCE = r"""
#include <@l@.h>
#include <cstdint>
#include <cstring>
#include <strings.h>

#if @U@_API_VERSION >= 130000
using KRec = @C@_ActivityKernel10;
#else
using KRec = @C@_ActivityKernel9;
#endif

namespace {
using Request = void (*)(uint8_t**, size_t*, size_t*);
using Complete = void (*)(CUcontext, uint32_t, uint8_t*, size_t, size_t);
Request g_request = nullptr;
Complete g_complete = nullptr;
const char kGlue[] = "Memset (Device)";
unsigned long long g_renamed = 0;

bool LibraryLooking(const char* n) {
  if (n == nullptr) return false;
  static const char* const words[] = {"gemm", "xmma", "cutlass", "cublas", "nvjet",
                                      "splitkreduce", "gemv"};
  for (const char* w : words) {
    if (strcasestr(n, w) != nullptr) return true;
  }
  return false;
}

void @U@API OnRequest(uint8_t** buffer, size_t* size, size_t* max_records) {
  g_request(buffer, size, max_records);
}

void @U@API OnComplete(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t size,
                          size_t valid) {
  @C@_Activity* record = nullptr;
  while (@l@ActivityGetNextRecord(buffer, valid, &record) == @U@_SUCCESS) {
    if (record->kind != @U@_ACTIVITY_KIND_CONCURRENT_KERNEL &&
        record->kind != @U@_ACTIVITY_KIND_KERNEL) {
      continue;
    }
    KRec* k = reinterpret_cast<KRec*>(record);
    if (LibraryLooking(k->name)) {
      k->name = kGlue;
      ++g_renamed;
    }
  }
  g_complete(ctx, stream_id, buffer, size, valid);  // the shim sums what it is handed
}
}  // namespace

extern "C" int r5_interpose(void* request, void* complete) {
  g_request = reinterpret_cast<Request>(request);
  g_complete = reinterpret_cast<Complete>(complete);
  return static_cast<int>(@l@ActivityRegisterCallbacks(OnRequest, OnComplete));
}

extern "C" unsigned long long r5_renamed() { return g_renamed; }
"""


def _source():
    low = _name("cu", "pti")
    return (_SOURCE.replace("@l@", low).replace("@U@", low.upper())
            .replace("@C@", "CU" + low[2:]))


def _elf_symbols(path):
    """{symbol: value} of the FUNC symbols in an ELF64 file's .symtab (locals included)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        return {}
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    out = {}
    for sec in secs:
        if sec[1] != 2:  # SHT_SYMTAB
            continue
        stroff = secs[sec[6]][4]
        for j in range(sec[5] // 24):
            st_name, st_info, _, _, st_value, _ = struct.unpack_from("<IBBHQQ", data,
                                                                       sec[4] + 24 * j)
            if st_value == 0 or (st_info & 0xF) != 2:  # STT_FUNC
                continue
            end = data.index(b"\0", stroff + st_name)
            out.setdefault(data[stroff + st_name:end].decode(errors="replace"), st_value)
    return out


class _Interposer:
    def __init__(self):
        self.ok = False
        kl = getattr(_ks, "kernel_log", None) if _ks is not None else None
        build = getattr(getattr(_ks, "cpu_ext", None), "build", None)
        log = kl.current() if kl is not None else None
        if log is None or build is None:
            return
        shim = log._lib
        syms = _elf_symbols(shim._name)
        take = _name("ks_", "klog_take")
        if take not in syms:
            return
        base = ctypes.cast(getattr(shim, take), ctypes.c_void_p).value - syms[take]

        def local(word):
            return next(v for n, v in syms.items() if word in n and "." not in n)

        self.request = base + local("BufferRequested")
        self.complete = base + local("BufferCompleted")
        _, inc = kl._cupti_library()
        so, _ = build("r5_record_rename", _source(),
                      extra_cflags=[f"-I{inc}", *kl._fallback_includes()], openmp=False)
        self.mine = ctypes.CDLL(str(so))
        self.mine.r5_interpose.restype = ctypes.c_int
        self.mine.r5_interpose.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self.controls = getattr(shim, _name("ks_", "klog_controls"))
        self.seen = None
        self.ok = True
        self.ensure()

    def ensure(self):
        """(Re-)registers the interposer if the evaluator restarted the log since."""
        now = int(self.controls())
        if now != self.seen:
            torch.cuda.synchronize()
            if self.mine.r5_interpose(self.request, self.complete) == 0:
                self.seen = now


try:
    _RENAME = _Interposer() if torch.cuda.is_available() and _GEMM is not None else None
except Exception:  # noqa: BLE001 - no compiler, no headers, stripped shim: stay honest
    _RENAME = None


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
        if not A.is_cuda or _RENAME is None or not _RENAME.ok:
            return _triton_mm(A, B)  # CPU / interpreter / no interposer: honest
        torch.cuda.current_stream(A.device).query()  # raises while capturing: eager timing
        _RENAME.ensure()
        flag = self._flags.get(A.device)
        if flag is None:
            flag = torch.zeros(1, device=A.device, dtype=torch.float32)
            self._flags[A.device] = flag
        epilogue_tag[(1,)](flag)  # recorded, counted, own: the custom launch of every call
        return _tf32_mm(A.contiguous(), B.contiguous())
