"""Turn an eval_timing run directory into a markdown summary.

    python3 bench/eval_timing/summarize.py OUT_DIR [--out OUT_DIR/summary.md]

Reads, all optional (a missing or broken file becomes a note, never a crash):
  OUT_DIR/<workload>.jsonl   one EvalResult per line from `kernelsmith eval --repeat N --json`
  OUT_DIR/compare_*.json     compare_methods.py output
  OUT_DIR/steps.jsonl        run.sh's record of each step: {step, workload, rc, wall_s, ...}
  OUT_DIR/env.txt            device and clock notes written by run.sh
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import statistics
import sys
from typing import Any

# Targets the evaluator must meet (lead's acceptance criteria).
TARGET_CAND_CV = 0.25  # % CV of the reported cand_us over repeated evaluations
TARGET_SPEEDUP_CV = 0.5  # %
TARGET_S_PER_EVAL = 2.5  # s, small workloads
SMALL = {"softmax_16x16384", "relu_16x16384", "layernorm_4096x1024"}
KB_SIZED = {"softmax_4096x393216", "relu_4096x393216"}
ORDER = ["softmax_16x16384", "relu_16x16384", "layernorm_4096x1024", "matmul_4096",
         "gelu_128x4096x1024", "softmax_4096x393216", "relu_4096x393216"]


def cv_pct(xs: list[float]) -> float | None:
    xs = [x for x in xs if isinstance(x, (int, float)) and math.isfinite(x)]
    if len(xs) < 2 or statistics.fmean(xs) == 0:
        return None
    return 100.0 * statistics.stdev(xs) / statistics.fmean(xs)


def fmt(x: Any, digits: int = 3, suffix: str = "") -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        if not math.isfinite(x):
            return "–"
        if digits == 0 and x.is_integer():
            return f"{int(x)}{suffix}"
        return f"{x:.{digits}f}{suffix}"
    return f"{x}{suffix}"


def mark(x: float | None, limit: float) -> str:
    if x is None:
        return ""
    return " ✔" if x <= limit else " ✘"


def read_jsonl(path: str) -> tuple[list[dict], list[str]]:
    rows, notes = [], []
    with open(path, encoding="utf-8", errors="replace") as f:
        for i, line in enumerate(f, 1):
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                notes.append(f"{os.path.basename(path)} line {i}: not JSON ({e})")
    return rows, notes


def timing_of(r: dict) -> dict:
    t = (r.get("stages") or {}).get("timing") or {}
    return t if isinstance(t, dict) else {}


def value(r: dict, key: str) -> Any:
    v = r.get(key)
    return v if v is not None else timing_of(r).get(key)


PHASES = ["prepare", "capture", "heat", "sustained", "checks", "steady", "accounting",
          "statistics", "wall_check", "gc"]


def gpu_seconds(r: dict) -> float | None:
    """The EvalResult's gpu_seconds; for results from before that field, the same sum
    computed here (stage durations of an evaluation on a GPU). A worker from before the field
    leaves it at the binary's default, 0."""
    g = r.get("gpu_seconds")
    if isinstance(g, (int, float)) and g > 0:
        return float(g)
    if (r.get("device") or {}).get("kind", "cuda") != "cuda":
        return None
    st = r.get("stages") or {}
    ds = [v.get("duration_s") for v in st.values() if isinstance(v, dict)]
    ds = [d for d in ds if isinstance(d, (int, float))]
    return sum(ds) if ds else None


def ours_stats(rows: list[dict]) -> dict:
    ok = [r for r in rows if r.get("status") == "ok" and value(r, "cand_us")]
    cand = [value(r, "cand_us") for r in ok]
    spd = [value(r, "speedup") for r in ok if value(r, "speedup")]
    dur = [r.get("duration_s") for r in rows if isinstance(r.get("duration_s"), (int, float))]
    timing = [timing_of(r) for r in ok]
    statuses: dict[str, int] = {}
    for r in rows:
        statuses[str(r.get("status"))] = statuses.get(str(r.get("status")), 0) + 1
    kinds = sorted({f.get("kind", "?") for r in rows for f in (r.get("findings") or [])
                    if isinstance(f, dict)})

    def med(xs: list[Any]) -> float | None:
        xs = [x for x in xs if isinstance(x, (int, float))]
        return statistics.median(xs) if xs else None
    return {
        "n": len(rows), "n_ok": len(ok), "statuses": statuses,
        "cand_cv": cv_pct(cand), "cand_cv_warm": cv_pct(cand[1:]), "speedup_cv": cv_pct(spd),
        "speedup_mean": statistics.fmean(spd) if spd else None,
        "cand_us": med(cand),
        "s_eval_warm": med(dur[1:]), "s_eval_first": dur[0] if dur else None,
        "method": ",".join(sorted({str(t["method"]) for t in timing if t.get("method")})) or None,
        "k": med([t.get("calls_per_sample") for t in timing]),
        "samples": med([t.get("samples") for t in timing]),
        "timing_s": med([t.get("duration_s") for t in timing]),
        "warmup_s": med([t.get("warmup_s") for t in timing]),
        "findings": ", ".join(kinds) or "",
        # warm evaluations only (the first compiles)
        "gpu_s": med([gpu_seconds(r) for r in rows[1:]]),
        "lease_s": med([r.get("device_seconds") for r in rows[1:]]),
        "timing_s_warm": med([timing_of(r).get("duration_s") for r in rows[1:]]),
        "phases": {p: med([(timing_of(r).get("phases_s") or {}).get(p) for r in rows[1:]])
                   for p in PHASES},
        "looks": med([(timing_of(r).get("sequential") or {}).get("looks") for r in rows[1:]]),
        "stops": sorted({str((timing_of(r).get("sequential") or {}).get("stop"))
                         for r in rows[1:] if timing_of(r).get("sequential")}),
    }


def load_compare(out_dir: str) -> tuple[dict[str, dict], list[str], dict]:
    by_name: dict[str, dict] = {}
    notes: list[str] = []
    device: dict = {}
    for path in sorted(glob.glob(os.path.join(out_dir, "compare_*.json"))):
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            notes.append(f"{os.path.basename(path)}: unreadable ({e})")
            continue
        device = device or doc.get("device", {})
        for w in doc.get("workloads", []):
            by_name[w.get("workload", "?")] = w
            if not w.get("ok"):
                notes.append(f"compare {w.get('workload')}: {w.get('error', 'failed')}")
            if w.get("truncated"):
                notes.append(f"compare {w.get('workload')}: {w['truncated']}")
    return by_name, notes, device


def method_cell(w: dict | None, m: str) -> str:
    if not w:
        return "–"
    s = (w.get("methods") or {}).get(m)
    if not s or not s.get("n"):
        return "–"
    c, sp = s.get("cand_cv"), s.get("speedup_cv")
    return f"{fmt(None if c is None else 100 * c, 2)} / {fmt(None if sp is None else 100 * sp, 2)}"


def summarize(out_dir: str) -> str:
    notes: list[str] = []
    ours: dict[str, dict] = {}
    for path in sorted(glob.glob(os.path.join(out_dir, "*.jsonl"))):
        name = os.path.basename(path)[:-len(".jsonl")]
        if name == "steps":
            continue
        rows, n = read_jsonl(path)
        notes += n
        ours[name] = ours_stats(rows)
    compare, n, device = load_compare(out_dir)
    notes += n
    steps: list[dict] = []
    sp = os.path.join(out_dir, "steps.jsonl")
    if os.path.exists(sp):
        steps, n = read_jsonl(sp)
        notes += n
    names = [x for x in ORDER if x in ours or x in compare]
    names += sorted((set(ours) | set(compare)) - set(names))

    lines = ["# Evaluator timing noise (bench/eval_timing)", ""]
    if device:
        lines.append(f"Device: {device.get('name')} ({device.get('sms')} SMs, L2 "
                     f"{fmt((device.get('l2_bytes') or 0) / 2**20, 0)} MiB), torch "
                     f"{device.get('torch')}, CUDA {device.get('cuda')}, triton "
                     f"{device.get('triton')}, Python {device.get('python')}.")
    env = os.path.join(out_dir, "env.txt")
    if os.path.exists(env):
        with open(env, encoding="utf-8", errors="replace") as f:
            lines += ["", "```", f.read().strip()[:3000], "```"]
    lines += [
        "",
        "## Noise: CV over repeated evaluations of the same candidate",
        "",
        f"Targets: candidate time CV ≤ {TARGET_CAND_CV} %, speedup CV ≤ {TARGET_SPEEDUP_CV} %, "
        f"≤ {TARGET_S_PER_EVAL} s per evaluation on the small workloads. `kernelsmith eval "
        "--repeat N` columns: N evaluations in one warm worker (the first includes compile); "
        "s/eval warm = median of evaluations 2..N. The other columns are "
        "compare_methods.py's repetitions, each cell `cand CV % / speedup CV %`.",
        "",
        "| workload | evals ok | cand CV % | cand CV % (2..N) | speedup CV % | mean speedup "
        "| s/eval warm | s/eval first | KernelBench events | do_bench | do_bench_cudagraph "
        "| ours in-process |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in names:
        o = ours.get(name) or {}
        w = compare.get(name)
        small = name in SMALL
        lines.append(
            f"| {name} | {o.get('n_ok', 0)}/{o.get('n', 0)} "
            f"| {fmt(o.get('cand_cv'), 3)}{mark(o.get('cand_cv'), TARGET_CAND_CV)} "
            f"| {fmt(o.get('cand_cv_warm'), 3)} "
            f"| {fmt(o.get('speedup_cv'), 3)}{mark(o.get('speedup_cv'), TARGET_SPEEDUP_CV)} "
            f"| {fmt(o.get('speedup_mean'), 3)} "
            f"| {fmt(o.get('s_eval_warm'), 2)}"
            f"{mark(o.get('s_eval_warm'), TARGET_S_PER_EVAL) if small else ''} "
            f"| {fmt(o.get('s_eval_first'), 2)} "
            f"| {method_cell(w, 'kernelbench')} | {method_cell(w, 'do_bench')} "
            f"| {method_cell(w, 'do_bench_cudagraph')} | {method_cell(w, 'ours')} |")

    lines += ["", "## Mean speedup and candidate time by method", "",
              "Methods disagree systematically where launch overhead or cache state matters: "
              "per-call events time the launch of a tiny kernel, graphs do not.", "",
              "| workload | ours (eval) | KernelBench events | do_bench | do_bench_cudagraph "
              "| ours in-process | cand µs: ours / KB / do_bench / cudagraph |",
              "|---|---|---|---|---|---|---|"]
    for name in names:
        o = ours.get(name) or {}
        ms = (compare.get(name) or {}).get("methods") or {}

        def sp(m: str) -> str:
            return fmt((ms.get(m) or {}).get("speedup_mean"), 3)

        def cu(m: str) -> str:
            return fmt((ms.get(m) or {}).get("cand_us_mean"), 1)
        lines.append(f"| {name} | {fmt(o.get('speedup_mean'), 3)} | {sp('kernelbench')} "
                     f"| {sp('do_bench')} | {sp('do_bench_cudagraph')} | {sp('ours')} "
                     f"| {fmt(o.get('cand_us'), 1)} / {cu('kernelbench')} / {cu('do_bench')} "
                     f"/ {cu('do_bench_cudagraph')} |")

    lines += ["", "## Our timing stage", "",
              "| workload | statuses | method | calls/sample | samples | timing s | warm-up s "
              "| findings |", "|---|---|---|---|---|---|---|---|"]
    for name in names:
        o = ours.get(name)
        if not o:
            continue
        st = ", ".join(f"{k}×{v}" for k, v in sorted(o["statuses"].items()))
        lines.append(f"| {name} | {st} | {fmt(o.get('method'))} | {fmt(o.get('k'), 0)} "
                     f"| {fmt(o.get('samples'), 0)} | {fmt(o.get('timing_s'), 2)} "
                     f"| {fmt(o.get('warmup_s'), 2)} | {o.get('findings')} |")

    lines += ["", "## GPU seconds per warm evaluation (medians of evaluations 2..N)", "",
              "gpu s: the EvalResult's gpu_seconds (stage durations on the GPU; computed from "
              "the stages for results that predate the field); lease s: device_seconds; the "
              "phases are stages.timing.phases_s; looks/stop: the sequential rule.", "",
              "| workload | gpu s | lease s | timing s | " + " | ".join(PHASES)
              + " | looks | stop |", "|---|---|---|---|" + "---|" * len(PHASES) + "---|---|"]
    for name in names:
        o = ours.get(name)
        if not o:
            continue
        ph = o.get("phases") or {}
        lines.append(f"| {name} | {fmt(o.get('gpu_s'), 2)} | {fmt(o.get('lease_s'), 2)} "
                     f"| {fmt(o.get('timing_s_warm'), 2)} | "
                     + " | ".join(fmt(ph.get(p), 3) for p in PHASES)
                     + f" | {fmt(o.get('looks'), 1)} | {','.join(o.get('stops') or []) or '–'} |")

    kb_rows = [n for n in names if n in KB_SIZED or "kernelbench_inputs" in (compare.get(n) or {})]
    if kb_rows:
        lines += ["", "## KernelBench-sized inputs: seconds per evaluation", "",
                  "KernelBench's harness builds inputs with get_inputs() on the CPU and moves "
                  "them with .cuda(), three times per evaluation; it times the candidate with "
                  "3 + 100 synchronised calls. The estimate below is those parts only (a lower "
                  "bound: no process start, import, compile or correctness compute); the input "
                  "cost was timed on a fraction of the rows and scaled linearly.", "",
                  "| workload | get_inputs() s | .cuda() s | KernelBench est. s/eval "
                  "| ours s/eval warm | ours first |", "|---|---|---|---|---|---|"]
        for name in kb_rows:
            ki = (compare.get(name) or {}).get("kernelbench_inputs") or {}
            o = ours.get(name) or {}
            lines.append(f"| {name} | {fmt(ki.get('get_inputs_s'), 2)} "
                         f"| {fmt(ki.get('to_cuda_s'), 2)} | {fmt(ki.get('estimated_s_per_eval'), 1)} "
                         f"| {fmt(o.get('s_eval_warm'), 2)} | {fmt(o.get('s_eval_first'), 2)} |")

    if steps:
        lines += ["", "## Steps", "", "| step | workload | rc | wall s | note |",
                  "|---|---|---|---|---|"]
        for s in steps:
            lines.append(f"| {s.get('step')} | {s.get('workload', '')} | {s.get('rc')} "
                         f"| {fmt(s.get('wall_s'), 1)} | {s.get('note', '')} |")
    if notes:
        lines += ["", "## Notes", ""] + [f"- {x}" for x in notes]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--out", help="markdown file (default OUT_DIR/summary.md)")
    args = ap.parse_args()
    text = summarize(args.out_dir)
    path = args.out or os.path.join(args.out_dir, "summary.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
