"""Noise of kernelsmith's timing stage under TimingConfig variants, on one workload.

Each repetition clones fresh inputs (new addresses, as an evaluation does) and calls
time_pair; per variant it prints the CV over repetitions of the candidate's median time and
of the speedup, and the mean seconds spent timing.

    python3 bench/eval_timing/config_sweep.py relu_16x16384 --reps 10 \
        --variant base --variant replay_target_s=3e-3 --variant sample_budget_s=1.0
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "python"))
sys.path.insert(0, str(HERE))

from compare_methods import load  # noqa: E402
from kernelsmith_worker.timing import TimingConfig, time_pair  # noqa: E402


def parse_variant(text: str) -> TimingConfig:
    cfg = TimingConfig()
    if text == "base":
        return cfg
    changes = {}
    for part in text.split(","):
        key, value = part.split("=", 1)
        changes[key] = type(getattr(cfg, key))(float(value))
    return dataclasses.replace(cfg, **changes)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("workload")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--variant", action="append", default=[])
    args = ap.parse_args()
    wl = HERE / "workloads" / args.workload
    problem, cand = load(wl / "problem.py", "ks_problem"), load(wl / "candidate.py", "ks_cand")
    torch.manual_seed(0)
    with torch.device("cuda"):
        inputs = problem.get_inputs()
        ref_model = problem.Model(*problem.get_init_inputs())
        cand_model = cand.ModelNew(*problem.get_init_inputs())
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in inputs]
    rows = []
    for variant in args.variant or ["base"]:
        cfg = parse_variant(variant)
        cand_us, speedup, secs = [], [], []
        for rep in range(args.reps):
            a = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
            b = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
            t0 = time.perf_counter()
            rec = time_pair(lambda: ref_model(*a), lambda: cand_model(*b), device="cuda",
                            seed=rep, config=cfg)
            secs.append(time.perf_counter() - t0)
            cand_us.append(rec["cand_us"])
            speedup.append(rec["speedup"])
        row = {"variant": variant, "cand_cv_pct": 100 * statistics.stdev(cand_us) / statistics.fmean(cand_us),
               "speedup_cv_pct": 100 * statistics.stdev(speedup) / statistics.fmean(speedup),
               "mean_speedup": statistics.fmean(speedup), "timing_s": statistics.fmean(secs)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
