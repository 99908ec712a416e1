"""A second timing method, independent of the evaluator's (timing_*.py): what `kernelsmith
verify` compares the reported speedup with.

CUDA: `triton.testing.do_bench_cudagraph` (Triton's own harness: one CUDA graph replayed back
to back for `rep_ms`, no L2 flush, no input refresh), reference and candidate alternately,
`repeats` times each, on trial 0's inputs. CPU: back-to-back calls timed by the wall clock
(`repeats` windows of about `rep_ms` each), the same alternation. No code of the evaluator's
timing stage is used: a bias in one method does not show in the other.

The speedup is the ratio of the medians over the repeats; its interval comes from the
repeats' spread (the smallest and largest ratio of paired repeats), which is what a user
re-timing it a few times would see.
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable

import torch

Fn = Callable[[], object]


def _cpu_bench(fn: Fn, rep_ms: float) -> float:
    """Milliseconds per call of back-to-back calls over about rep_ms."""
    fn()
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-7)
    n = max(1, int(rep_ms / 1e3 / one))
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) * 1e3 / n


def _cuda_bench(fn: Fn, rep_ms: float) -> float:
    from triton.testing import do_bench_cudagraph

    return float(do_bench_cudagraph(fn, rep=rep_ms))


def measure(ref_fn: Fn, cand_fn: Fn, device: torch.device, repeats: int = 3,
            rep_ms: float = 200.0) -> dict[str, Any]:
    """{method, ref_ms, cand_ms, speedup, speedup_range, repeats}: reference and candidate
    timed alternately `repeats` times each."""
    bench = _cuda_bench if device.type == "cuda" else _cpu_bench
    ref, cand = [], []
    with torch.no_grad():
        for _ in range(repeats):
            ref.append(bench(ref_fn, rep_ms))
            cand.append(bench(cand_fn, rep_ms))
    ratios = [r / c for r, c in zip(ref, cand) if c > 0]
    ref_ms, cand_ms = statistics.median(ref), statistics.median(cand)
    return {
        "method": "do_bench_cudagraph" if device.type == "cuda" else "wall_clock_loop",
        "ref_ms": ref_ms, "cand_ms": cand_ms,
        "speedup": ref_ms / cand_ms if cand_ms > 0 else None,
        "speedup_range": [min(ratios), max(ratios)] if ratios else None,
        "repeats": repeats,
    }
