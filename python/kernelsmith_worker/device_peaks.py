"""Measured peaks of the device a worker runs on, cached per device.

- bandwidth: a large device-to-device copy (bytes read + bytes written per second), the
  best of repeated batches;
- dense FLOP/s per class (roofline_work.FLOP_CLASSES) from a large square matmul: `fp32`
  with TF32 off, `tf32` with it on (GPU only), `bf16`, `fp16`;
- launch: the time of one minimal op (a 1-element add) issued back to back: below it a
  forward is bound by launching, not by the device.

On the CPU the same measurements run on the CPU with torch's current thread count. The whole
measurement takes under ~3 s; the result is cached in $KS_CACHE_DIR/roofline/ under a key of
the device, driver, torch version and thread count. Datasheet figures (H100 SXM, H200) come
with it as a labelled comparison only: they are never the floor.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch

from kernelsmith_worker.cpu_ext import cache_root

SCHEMA = 1
BUDGET_S = 0.45  # per measurement (bandwidth, each FLOP class)

# Datasheet figures (dense, no sparsity), for comparison only.
DATASHEETS: dict[str, dict[str, Any]] = {
    "H100 SXM": {"bw_bytes_per_s": 3.35e12,
                 "flops_per_s": {"fp32": 67e12, "tf32": 494.7e12, "bf16": 989.4e12,
                                 "fp16": 989.4e12}},
    "H200": {"bw_bytes_per_s": 4.8e12,
             "flops_per_s": {"fp32": 67e12, "tf32": 494.7e12, "bf16": 989.4e12,
                             "fp16": 989.4e12}},
}


def datasheet_for(name: str) -> dict[str, Any] | None:
    """The datasheet entry of a CUDA device name ('NVIDIA H100 80GB HBM3' is the SXM part)."""
    up = name.upper()
    if "H200" in up:
        key = "H200"
    elif "H100" in up and ("SXM" in up or "HBM3" in up):
        key = "H100 SXM"
    else:
        return None
    return {"name": key, **DATASHEETS[key]}


def _sync(dev: torch.device) -> None:
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def best_rate(fn: Callable[[], Any], work: float, dev: torch.device,
              budget_s: float = BUDGET_S) -> float:
    """The best `work` per second over batches of fn() calls, each batch >= ~1/8 of the
    budget, for about budget_s seconds."""
    fn()
    _sync(dev)
    start = time.perf_counter()
    fn()
    _sync(dev)
    one = max(time.perf_counter() - start, 1e-7)
    per_batch = max(1, int(budget_s / 8 / one))
    best = work / one
    deadline = time.perf_counter() + budget_s
    while time.perf_counter() < deadline:
        t0 = time.perf_counter()
        for _ in range(per_batch):
            fn()
        _sync(dev)
        best = max(best, work * per_batch / max(time.perf_counter() - t0, 1e-9))
    return best


def _matmul_size(dtype: torch.dtype, dev: torch.device) -> int:
    """A size large enough to reach the sustained rate, small enough for the budget: 8192 on
    a GPU; on the CPU grown from 128 while one matmul takes under ~40 ms (at most 1024)."""
    if dev.type == "cuda":
        return 8192
    n = 128
    while n < 1024:
        a = torch.ones(n, n, dtype=dtype)
        start = time.perf_counter()
        torch.mm(a, a)
        if time.perf_counter() - start > 0.005:
            break
        n *= 2
    return n


def matmul_rate(dtype: torch.dtype, dev: torch.device, budget_s: float = BUDGET_S) -> float:
    n = _matmul_size(dtype, dev)
    a = torch.randn(n, n, device=dev).to(dtype)
    b = torch.randn(n, n, device=dev).to(dtype)
    out = torch.empty(n, n, device=dev, dtype=dtype)
    return best_rate(lambda: torch.mm(a, b, out=out), 2.0 * n * n * n, dev, budget_s)


def copy_rate(dev: torch.device, budget_s: float = BUDGET_S) -> float:
    """Bytes read + written per second by a copy of 1 GiB (GPU) / 64 MiB (CPU, past the
    last-level cache)."""
    size = (1 << 30) if dev.type == "cuda" else (64 << 20)
    src = torch.empty(size // 4, dtype=torch.float32, device=dev).fill_(1.0)
    dst = torch.empty_like(src)
    return best_rate(lambda: dst.copy_(src), 2.0 * size, dev, budget_s)


def launch_us(dev: torch.device) -> float:
    """Microseconds per minimal op issued back to back (the best of a few batches of 200)."""
    x = torch.zeros(1, device=dev)
    rate = best_rate(lambda: [x.add_(1.0) for _ in range(200)], 200.0, dev, 0.1)
    return 1e6 / rate


@contextlib.contextmanager
def _tf32_setting_kept() -> Iterator[None]:
    """Within, torch's TF32 matmul setting may change; after, it is as it was, in every form
    torch keeps it: setting allow_tf32 (even to its own value) also turns fp32_precision from
    'none' into 'ieee' or 'tf32', which the integrity guard would see as a candidate's
    change."""
    cmm = torch.backends.cuda.matmul
    saved = cmm.allow_tf32
    precision = getattr(cmm, "fp32_precision", None)
    try:
        yield
    finally:
        cmm.allow_tf32 = saved
        if precision is not None:
            cmm.fp32_precision = precision


def measure(dev: torch.device) -> dict[str, Any]:
    """Measures every peak on `dev` (torch's TF32 setting is restored)."""
    start = time.perf_counter()
    flops: dict[str, float] = {}
    bw = copy_rate(dev)
    if dev.type == "cuda":
        with _tf32_setting_kept():
            torch.backends.cuda.matmul.allow_tf32 = False
            flops["fp32"] = matmul_rate(torch.float32, dev)
            torch.backends.cuda.matmul.allow_tf32 = True
            flops["tf32"] = matmul_rate(torch.float32, dev)
    else:
        flops["fp32"] = matmul_rate(torch.float32, dev)
    for name, dtype in (("bf16", torch.bfloat16), ("fp16", torch.float16)):
        flops[name] = matmul_rate(dtype, dev)
    lat = launch_us(dev)
    if dev.type == "cuda":
        torch.cuda.empty_cache()
    return {"bw_bytes_per_s": bw, "flops_per_s": flops, "launch_us": lat,
            "measure_s": round(time.perf_counter() - start, 3)}


def device_key(dev: torch.device, gpu: dict[str, Any] | None) -> dict[str, Any]:
    """What the peaks depend on: the device, its driver, torch, and (CPU) the thread count."""
    from kernelsmith_worker.device import cpu_device_info

    if dev.type == "cuda" and gpu is not None:
        ident = {k: gpu.get(k) for k in ("name", "cc", "driver", "sms")}
    else:
        ident = {"name": cpu_device_info()["name"], "threads": torch.get_num_threads()}
    return {"schema": SCHEMA, "kind": dev.type, "torch": torch.__version__, **ident}


def _cache_file(key: dict[str, Any]) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]
    return cache_root() / "roofline" / f"peaks-{digest}.json"


def read_cached(key: dict[str, Any]) -> dict[str, Any] | None:
    """The cached peaks for `key`, or None (missing, unreadable or for another key)."""
    try:
        data = json.loads(_cache_file(key).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != key:
        return None
    return data


def write_cached(key: dict[str, Any], peaks: dict[str, Any]) -> None:
    """Writes atomically (a temporary file renamed into place); a failure only loses the
    cache."""
    path = _cache_file(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"key": key, **peaks}, sort_keys=True), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass


def peaks(dev: torch.device, gpu: dict[str, Any] | None = None) -> dict[str, Any]:
    """The device's peaks (from the cache, else measured now and cached), with `device`,
    `cached` and the datasheet comparison (or null)."""
    key = device_key(dev, gpu)
    found = read_cached(key)
    cached = found is not None
    if found is None:
        found = measure(dev)
        write_cached(key, found)
    name = str(key.get("name") or "")
    out = {k: found[k] for k in ("bw_bytes_per_s", "flops_per_s", "launch_us", "measure_s")}
    out.update({"device": name, "cached": cached,
                "datasheet": datasheet_for(name) if dev.type == "cuda" else None})
    return out


def main(argv: list[str] | None = None) -> int:
    """`python -m kernelsmith_worker.device_peaks [--fresh]`: prints the peaks of the visible
    device (GPU 0, else the CPU) as JSON; --fresh measures again and rewrites the cache."""
    import argparse
    import sys

    from kernelsmith_worker.device import apply_cpu_threads, cpu_threads, cuda_device_info

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--fresh", action="store_true", help="measure even when cached")
    args = ap.parse_args(argv)
    cuda = torch.cuda.is_available()
    dev = torch.device("cuda", 0) if cuda else torch.device("cpu")
    gpu = cuda_device_info(0) if cuda else None
    if not cuda:  # the threads a CPU evaluation gets ($KS_CPU_THREADS)
        apply_cpu_threads(cpu_threads())
    if args.fresh:
        write_cached(device_key(dev, gpu), measure(dev))
    json.dump(peaks(dev, gpu), sys.stdout, indent=2, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
