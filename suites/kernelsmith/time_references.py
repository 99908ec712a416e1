#!/usr/bin/env python3
"""Time every problem's PyTorch reference (Model.forward) of this suite on a CUDA GPU.

Usage: python suites/kernelsmith/time_references.py OUT.json [--suite DIR] [--levels 1,2,3]
                                                             [--problems GLOB]

For each problem: get_init_inputs() and Model(...) under torch.manual_seed(42) and
`with torch.device("cuda")`, then get_inputs() under the same seed and device (so inputs are
created on the GPU, not copied). The forward runs under torch.no_grad(), in the model's
default (training) mode, with PyTorch's default precision settings (no TF32 for matmuls, as in
the worker). After 3 warm-up calls one call is captured in a CUDA graph; the graph is replayed
n times (n chosen for about 0.3 s per problem, 10..500), each replay timed with CUDA events,
and the median is reported. If capture fails the eager forward is timed the same way
(method "eager"). Prints a markdown table (level, problem, ms) and writes JSON to OUT.json.
The whole suite takes well under 5 minutes on an H100.
"""
import argparse
import fnmatch
import gc
import importlib.util
import json
import os
import platform
import statistics
import sys
import time

import torch

SEED = 42


def load(path):
    name = "ks_ref_" + os.path.basename(path)[:-3].replace(".", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def problems(suite, levels, pattern):
    out = []
    for lvl in levels:
        d = os.path.join(suite, f"level{lvl}")
        if not os.path.isdir(d):
            continue
        files = [f for f in os.listdir(d) if f.endswith(".py") and f.count(".") == 1
                 and f.split("_", 1)[0].isdigit() and fnmatch.fnmatch(f, pattern)]
        files.sort(key=lambda f: int(f.split("_", 1)[0]))
        out += [(lvl, f[:-3], os.path.join(d, f)) for f in files]
    return out


def time_calls(fn, n):
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for s, e in zip(starts, ends):
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def time_problem(path):
    mod = load(path)
    dev = torch.device("cuda")
    torch.manual_seed(SEED)
    with dev:
        init = list(mod.get_init_inputs())
        torch.manual_seed(SEED)
        model = mod.Model(*init)
        torch.manual_seed(SEED)
        inputs = list(mod.get_inputs())
    model = model.to(dev)
    inputs = [x.to(dev) if isinstance(x, torch.Tensor) else x for x in inputs]
    with torch.no_grad():
        for _ in range(3):
            model(*inputs)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        model(*inputs)
        torch.cuda.synchronize()
        est_ms = max((time.perf_counter() - t0) * 1e3, 1e-3)
        n = int(min(500, max(10, 300.0 / est_ms)))
        method = "cuda_graph"
        try:
            graph = torch.cuda.CUDAGraph()
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                model(*inputs)  # warm-up on the capture stream
            torch.cuda.current_stream().wait_stream(stream)
            torch.cuda.synchronize()
            with torch.cuda.graph(graph):
                model(*inputs)
            graph.replay()
            torch.cuda.synchronize()
            fn = graph.replay
        except Exception as e:  # noqa: BLE001 - e.g. ops that cannot be captured
            print(f"  ({os.path.basename(path)}: graph capture failed: {e}; timing eager)",
                  file=sys.stderr)
            method = "eager"
            torch.cuda.synchronize()
            fn = lambda: model(*inputs)  # noqa: E731
        fn()
        ms = time_calls(fn, n)
    return ms, method, n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="JSON output path")
    ap.add_argument("--suite", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--levels", default="1,2,3")
    ap.add_argument("--problems", default="*", help="glob on file names, e.g. '1_*'")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("time_references.py needs a CUDA GPU")
    levels = [int(x) for x in args.levels.split(",") if x]
    rows, t_start = [], time.perf_counter()
    for lvl, name, path in problems(args.suite, levels, args.problems):
        t0 = time.perf_counter()
        try:
            ms, method, n = time_problem(path)
            rows.append({"level": lvl, "problem": name, "ms": round(ms, 4), "method": method,
                         "replays": n})
        except Exception as e:  # noqa: BLE001 - report and go on
            rows.append({"level": lvl, "problem": name, "ms": None, "error": repr(e)[:300]})
        r = rows[-1]
        print(f"  L{lvl} {name}: {r['ms']} ms ({r.get('method', r.get('error'))}, "
              f"{time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)
        gc.collect()
        torch.cuda.empty_cache()
    total = time.perf_counter() - t_start

    print("| level | problem | ms |")
    print("|---|---|---|")
    for r in rows:
        ms = f"{r['ms']:.3f}" if r["ms"] is not None else f"error: {r['error']}"
        print(f"| {r['level']} | {r['problem']} | {ms} |")
    out_of_range = [f"L{r['level']} {r['problem']} ({r['ms']:.3f} ms)" for r in rows
                    if r["ms"] is not None and not 0.1 <= r["ms"] <= 15.0]
    if out_of_range:
        print("\noutside 0.1-15 ms: " + ", ".join(out_of_range))
    print(f"\n{len(rows)} problems in {total:.0f} s on {torch.cuda.get_device_name()}")

    result = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "allow_tf32_matmul": torch.backends.cuda.matmul.allow_tf32,
        "allow_tf32_cudnn": torch.backends.cudnn.allow_tf32,
        "method": "median of CUDA-event-timed CUDA graph replays (eager if capture fails), "
                  "inputs created on the GPU under manual_seed(42), no_grad, default mode",
        "seconds": round(total, 1),
        "problems": rows,
    }
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
