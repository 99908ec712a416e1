"""Side-by-side noise of GPU timing methods on the benchmark's workloads.

For each workload (problem.py + candidate.py under workloads/<name>/) this loads both modules,
builds the inputs on the GPU, and measures reference and candidate `--reps` times with each
method, the methods interleaved within every repetition so that drift hits all of them alike:

  kernelbench         KernelBench's harness: 3 warm-up calls (synchronize after each), then
                      `--kb-trials` calls each between two CUDA events followed by
                      torch.cuda.synchronize(); the mean (ms)
  do_bench            triton.testing.do_bench(fn, return_mode="median")
  do_bench_cudagraph  triton.testing.do_bench_cudagraph(fn, return_mode="median")
  ours                kernelsmith_worker.timing.time_pair (in process, no worker)

and reports, per method, the CV over repetitions of the candidate's time and of the speedup.
With --kb-inputs it also measures what KernelBench's harness spends per evaluation on inputs:
get_inputs() on the CPU and .cuda(), `--kb-input-calls` times per evaluation. That call is
timed on 1/`--kb-input-fraction` of the rows (the module's batch_size) and scaled linearly.

    python3 bench/eval_timing/compare_methods.py --out OUT.json softmax_16x16384 relu_16x16384

Writes the JSON after every workload, so a run cut short keeps what it measured.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import math
import os
import statistics
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable

import torch

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "python"))

METHODS = ("kernelbench", "do_bench", "do_bench_cudagraph", "ours")


def load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def cv(xs: list[float]) -> float | None:
    xs = [x for x in xs if x is not None and math.isfinite(x)]
    if len(xs) < 2 or statistics.fmean(xs) == 0:
        return None
    return statistics.stdev(xs) / statistics.fmean(xs)


def kernelbench_ms(fn: Callable[[], object], trials: int) -> float:
    """KernelBench's time_execution_with_cuda_event + get_timing_stats mean."""
    for _ in range(3):
        fn()
        torch.cuda.synchronize()
    times = []
    for _ in range(trials):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.fmean(times)


def max_abs_err(a: torch.Tensor, b: torch.Tensor, chunk: int = 1 << 26) -> tuple[float, bool]:
    """(max |a-b|, allclose(atol=rtol=1e-2)) in chunks: no 6 GB temporaries."""
    fa, fb = a.reshape(-1), b.reshape(-1)
    worst, close = 0.0, True
    for i in range(0, fa.numel(), chunk):
        x, y = fa[i:i + chunk].double(), fb[i:i + chunk].double()
        worst = max(worst, (x - y).abs().max().item())
        close = close and bool(torch.isclose(x, y, atol=1e-2, rtol=1e-2).all())
    return worst, close


def kernelbench_inputs_cost(problem: Any, fraction: int, calls: int) -> dict:
    """get_inputs() on the CPU and .cuda(), as KernelBench's harness does, on 1/fraction of
    the rows, scaled back up linearly (both costs are linear in the element count)."""
    full = problem.batch_size
    problem.batch_size = max(1, full // fraction)
    scale = full / problem.batch_size
    try:
        torch.manual_seed(42)
        t0 = time.perf_counter()
        xs = problem.get_inputs()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        ys = [x.cuda() if isinstance(x, torch.Tensor) else x for x in xs]
        torch.cuda.synchronize()
        t3 = time.perf_counter()
        nbytes = sum(x.numel() * x.element_size() for x in xs if isinstance(x, torch.Tensor))
        del xs, ys
    finally:
        problem.batch_size = full
    get_s, cuda_s = (t1 - t0) * scale, (t3 - t2) * scale
    return {
        "fraction": fraction, "measured_rows": full // fraction, "rows": full,
        "get_inputs_s": get_s, "to_cuda_s": cuda_s, "bytes": int(nbytes * scale),
        "calls_per_eval": calls, "inputs_s_per_eval": calls * (get_s + cuda_s),
        "note": f"timed on 1/{fraction} of the rows and scaled linearly",
    }


def run_workload(name: str, args: argparse.Namespace, deadline: float) -> dict:
    out: dict[str, Any] = {"workload": name, "ok": False, "reps": args.reps,
                           "kb_trials": args.kb_trials}
    wdir = HERE / "workloads" / name
    problem = load(wdir / "problem.py", f"problem_{name}")
    candidate = load(wdir / "candidate.py", f"candidate_{name}")
    dev = torch.device(args.device)

    if args.kb_inputs and not hasattr(problem, "batch_size"):
        out["kernelbench_inputs_error"] = "problem has no module-level batch_size to scale"
    elif args.kb_inputs:
        out["kernelbench_inputs"] = kernelbench_inputs_cost(problem, args.kb_input_fraction,
                                                            args.kb_input_calls)
        gc.collect()
        torch.cuda.empty_cache()

    t0 = time.perf_counter()
    init = problem.get_init_inputs()
    torch.manual_seed(42)
    model = problem.Model(*init).to(dev).eval()
    torch.manual_seed(42)
    new = candidate.ModelNew(*init).to(dev).eval()
    torch.manual_seed(42)
    with torch.device(dev):  # factories in get_inputs() allocate on the GPU directly
        inputs = problem.get_inputs()
    inputs = [x.to(dev) if isinstance(x, torch.Tensor) else x for x in inputs]
    torch.cuda.synchronize()
    out["setup_s"] = time.perf_counter() - t0

    with torch.no_grad():
        t0 = time.perf_counter()
        got = new(*inputs)
        torch.cuda.synchronize()
        out["first_call_s"] = time.perf_counter() - t0  # includes the Triton compile
        expected = model(*inputs)
        err, close = max_abs_err(got, expected)
        out["correct"] = {"max_abs_err": err, "allclose_1e-2": close}
        del got, expected
        gc.collect()
        torch.cuda.empty_cache()

        ref_fn = lambda: model(*inputs)  # noqa: E731
        cand_fn = lambda: new(*inputs)  # noqa: E731
        import triton.testing

        time_pair = None
        if "ours" in args.methods:
            try:
                from kernelsmith_worker.timing import time_pair
            except Exception as e:
                out["ours_import_error"] = f"{type(e).__name__}: {e}"
        per: dict[str, list[dict]] = {m: [] for m in args.methods}
        for rep in range(args.reps):
            if time.perf_counter() > deadline:
                out["truncated"] = f"deadline reached after {rep} repetitions"
                break
            for m in args.methods:
                t0 = time.perf_counter()
                row: dict[str, Any]
                if m == "kernelbench":
                    r, c = kernelbench_ms(ref_fn, args.kb_trials), kernelbench_ms(cand_fn,
                                                                                  args.kb_trials)
                    row = {"ref_us": r * 1e3, "cand_us": c * 1e3}
                elif m == "do_bench":
                    r = triton.testing.do_bench(ref_fn, return_mode="median")
                    c = triton.testing.do_bench(cand_fn, return_mode="median")
                    row = {"ref_us": r * 1e3, "cand_us": c * 1e3}
                elif m == "do_bench_cudagraph":
                    r = triton.testing.do_bench_cudagraph(ref_fn, return_mode="median")
                    c = triton.testing.do_bench_cudagraph(cand_fn, return_mode="median")
                    row = {"ref_us": r * 1e3, "cand_us": c * 1e3}
                elif m == "ours":
                    if time_pair is None:
                        continue
                    rec = time_pair(ref_fn, cand_fn, device=dev, seed=rep)
                    row = {k: rec.get(k) for k in ("ok", "ref_us", "cand_us", "method",
                                                    "calls_per_sample", "samples", "warmup_s",
                                                    "ref_cv", "cand_cv", "speedup_ci95",
                                                    "error")}
                    row["findings"] = [f.get("kind") for f in rec.get("findings", [])]
                else:
                    raise ValueError(f"unknown method {m}")
                if row.get("ref_us") and row.get("cand_us"):
                    row["speedup"] = row["ref_us"] / row["cand_us"]
                row["wall_s"] = time.perf_counter() - t0
                per[m].append(row)
                gc.collect()
                torch.cuda.empty_cache()
    out["methods"] = {}
    for m, rows in per.items():
        cand = [r["cand_us"] for r in rows if r.get("cand_us")]
        spd = [r["speedup"] for r in rows if r.get("speedup")]
        out["methods"][m] = {
            "rows": rows, "n": len(rows),
            "cand_us_mean": statistics.fmean(cand) if cand else None,
            "cand_cv": cv(cand), "speedup_mean": statistics.fmean(spd) if spd else None,
            "speedup_cv": cv(spd),
            "wall_s_per_rep": statistics.fmean([r["wall_s"] for r in rows]) if rows else None,
        }
    kb = out["methods"].get("kernelbench")
    if "kernelbench_inputs" in out and kb and kb["cand_us_mean"]:
        # KernelBench times only the candidate per evaluation (reference times come from a
        # precomputed baseline): its timing costs (3 + trials) synchronised calls.
        perf_s = (3 + args.kb_trials) * kb["cand_us_mean"] * 1e-6
        inp = out["kernelbench_inputs"]
        inp["perf_trials_s"] = perf_s
        inp["estimated_s_per_eval"] = inp["inputs_s_per_eval"] + perf_s
    out["ok"] = True
    del model, new, inputs
    return out


def device_info() -> dict:
    p = torch.cuda.get_device_properties(0)
    try:
        import triton
        tv = triton.__version__
    except Exception:
        tv = None
    return {"name": p.name, "sms": p.multi_processor_count,
            "l2_bytes": getattr(p, "L2_cache_size", None), "memory_bytes": p.total_memory,
            "torch": torch.__version__, "cuda": torch.version.cuda, "triton": tv,
            "python": sys.version.split()[0]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workloads", nargs="+")
    ap.add_argument("--out", required=True, help="JSON file to write")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--kb-trials", type=int, default=100)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--kb-inputs", action="store_true",
                    help="also time KernelBench's CPU get_inputs() + .cuda()")
    ap.add_argument("--kb-input-fraction", type=int, default=8)
    ap.add_argument("--kb-input-calls", type=int, default=3)
    ap.add_argument("--deadline-s", type=float, default=600.0,
                    help="stop starting repetitions after this many seconds")
    ap.add_argument("--device", default="cuda", help=argparse.SUPPRESS)  # cpu: selftest_cpu.py
    args = ap.parse_args()
    args.methods = [m for m in args.methods.split(",") if m]
    deadline = time.perf_counter() + args.deadline_s
    if args.device == "cuda" and not torch.cuda.is_available():
        print("compare_methods: no CUDA device", file=sys.stderr)
        return 2
    doc: dict[str, Any] = {"device": device_info(), "workloads": []}
    failed = False
    for name in args.workloads:
        t0 = time.perf_counter()
        try:
            res = run_workload(name, args, deadline)
        except Exception as e:
            failed = True
            res = {"workload": name, "ok": False, "error": f"{type(e).__name__}: {e}",
                   "traceback": traceback.format_exc()[-3000:]}
        res["wall_s"] = time.perf_counter() - t0
        doc["workloads"].append(res)
        gc.collect()
        torch.cuda.empty_cache()
        tmp = args.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, args.out)
        m = res.get("methods", {})
        line = " ".join(f"{k}: cand cv {100 * v['cand_cv']:.3f}% spd cv {100 * v['speedup_cv']:.3f}%"
                        for k, v in m.items() if v.get("cand_cv") is not None
                        and v.get("speedup_cv") is not None)
        print(f"[compare] {name}: {'ok' if res.get('ok') else 'FAILED ' + res.get('error', '')} "
              f"({res['wall_s']:.1f} s) {line}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
