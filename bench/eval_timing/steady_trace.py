"""Per-sample trace of a workload's reference and candidate run back to back, as the
evaluator's steady-state blocks run them (L2 flushed before each sample, no input refresh),
for a few seconds each, several rounds with an idle pause between them: where the clock
settles and whether it settles at the same level each time.

    python3 bench/eval_timing/steady_trace.py WORKLOAD_DIR [--seconds 3] [--rounds 4]
        [--pause 2] [--out trace.json]

WORKLOAD_DIR holds problem.py and candidate.py (bench/eval_timing/workloads/*). Prints, per
round and side, the median per-call time of each 50 ms window, and writes every sample with
its start time to --out. Run it with the GPU otherwise idle; `nvidia-smi dmon` beside it
gives the clocks and power.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time

import torch


def _load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _trace(fn, inputs, flush: torch.Tensor, seconds: float) -> list[tuple[float, float]]:
    """(start s, us a call) of each sample, back to back for `seconds`."""
    out: list[tuple[float, float, torch.cuda.Event, torch.cuda.Event]] = []
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        batch = []
        for _ in range(20):
            flush.zero_()
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            fn(*inputs)
            e1.record()
            batch.append((e0, e1))
        batch[-1][1].synchronize()
        now = time.perf_counter() - t0
        out += [(now, e0.elapsed_time(e1) * 1e3) for e0, e1 in batch]
    return out


def _windows(samples: list[tuple[float, float]], width: float = 0.05) -> list[float]:
    by: dict[int, list[float]] = {}
    for t, us in samples:
        by.setdefault(int(t / width), []).append(us)
    return [round(statistics.median(v), 1) for _, v in sorted(by.items())]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("workload")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--pause", type=float, default=2.0)
    ap.add_argument("--out")
    a = ap.parse_args()
    prob = _load(f"{a.workload}/problem.py", "ks_trace_problem")
    cand = _load(f"{a.workload}/candidate.py", "ks_trace_candidate")
    torch.manual_seed(0)
    init = prob.get_init_inputs()
    ref = prob.Model(*init).cuda().eval()
    new = cand.ModelNew(*init).cuda().eval()
    inputs = [x.cuda() if torch.is_tensor(x) else x for x in prob.get_inputs()]
    flush = torch.empty(64 * 1024 * 1024, dtype=torch.int32, device="cuda")  # 256 MB
    result: dict = {"device": torch.cuda.get_device_name(), "rounds": []}
    with torch.no_grad():
        for fn in (ref, new):
            fn(*inputs)
        torch.cuda.synchronize()
        for r in range(a.rounds):
            row = {}
            for side, fn in (("ref", ref), ("cand", new)):
                time.sleep(a.pause)
                s = _trace(fn, inputs, flush, a.seconds)
                w = _windows(s)
                row[side] = s
                late = [us for t, us in s if t >= a.seconds / 2]
                print(f"round {r} {side}: {len(s)} samples, median of the second half "
                      f"{statistics.median(late):.1f} us; 50 ms windows: {w}")
            result["rounds"].append(row)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
