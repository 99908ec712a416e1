"""Noise of kernelsmith's timing stage under TimingConfig variants, on one workload.

Each repetition clones fresh inputs (new addresses, as an evaluation does) and calls
time_pair; per variant it prints the CV over repetitions of the candidate's median time and
of the speedup, and the mean seconds spent timing.

    python3 bench/eval_timing/config_sweep.py relu_16x16384 --reps 10 \
        --variant base --variant replay_target_s=3e-3 --variant sample_budget_s=1.0

--rotating times as an evaluation does: input slots refreshed from fresh get_inputs() draws
before every sample (timed_inputs.RotatingInputs, timed checks always agreeing), so the
checked and the steady figures both exist; each row then also gives the candidate's block
medians in the order they ran (`blocks`), and how often the reported figure was the steady one.
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


def rotating(problem, inputs):
    """Input slots as an evaluation times them (fresh draws of get_inputs())."""
    from kernelsmith_worker.fresh_draws import draw, draw_budget
    from kernelsmith_worker.timed_inputs import RotatingInputs, pool_budget

    dev = torch.device("cuda")
    draws, _ = draw(problem.get_inputs, inputs, dev, draw_budget(dev))
    return RotatingInputs(inputs, dev, pool_budget(dev), lambda c, r: True, draws=draws or None)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("workload")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--variant", action="append", default=[])
    ap.add_argument("--rotating", action="store_true")
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
        cand_us, speedup, secs, blocks, steady = [], [], [], [], 0
        for rep in range(args.reps):
            a = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
            b = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
            t0 = time.perf_counter()
            if args.rotating:
                rot = rotating(problem, inputs)
                rec = time_pair(lambda j: ref_model(*rot.ref_args(j)),
                                lambda j: cand_model(*rot.args(j)), device="cuda", seed=rep,
                                config=cfg, inputs=rot)
            else:
                rec = time_pair(lambda: ref_model(*a), lambda: cand_model(*b), device="cuda",
                                seed=rep, config=cfg)
            secs.append(time.perf_counter() - t0)
            cand_us.append(rec["cand_us"])
            speedup.append(rec["speedup"])
            blocks.append([round(b["median_us"], 1) for b in rec.get("blocks", [])
                           if b["fn"] == "cand"])
            steady += rec.get("reported") == "steady"
        row = {"variant": variant,
               "cand_cv_pct": 100 * statistics.stdev(cand_us) / statistics.fmean(cand_us),
               "speedup_cv_pct": 100 * statistics.stdev(speedup) / statistics.fmean(speedup),
               "mean_speedup": statistics.fmean(speedup), "timing_s": statistics.fmean(secs),
               "reported_steady": steady, "blocks": blocks}
        rows.append(row)
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
