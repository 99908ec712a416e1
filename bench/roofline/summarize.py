"""Markdown summary of a bench/roofline/run.sh output directory.

    python3 bench/roofline/summarize.py OUT_DIR NAME... > OUT_DIR/summary.md

Reads OUT_DIR/peaks.json and OUT_DIR/<NAME>.json (`kernelsmith eval --json`); a missing or
broken file is a line in the summary, not a failure.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _load(path: Path) -> tuple[Any, str]:
    """The file as one JSON value, else its last line as one (`eval --repeat` prints lines)."""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError as e:
        return None, f"{path.name}: {e}"
    try:
        return json.loads(text), ""
    except ValueError:
        pass
    try:
        return json.loads(text.splitlines()[-1]), ""
    except (ValueError, IndexError) as e:
        return None, f"{path.name}: {e}"


def _rate(v: float | None, unit: str) -> str:
    if not v:
        return "-"
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M")):
        if v >= scale:
            return f"{v / scale:.3g} {prefix}{unit}"
    return f"{v:.3g} {unit}"


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}%"


def peaks_table(peaks: dict[str, Any], label: str) -> list[str]:
    sheet = peaks.get("datasheet") or {}
    rows = [f"## Peaks ({label}): {peaks.get('device', '?')}", "",
            "| peak | measured | datasheet " + (sheet.get("name") or "(none)") +
            " | measured / datasheet |", "|---|---|---|---|"]
    pairs = [("DRAM bandwidth (copy)", peaks.get("bw_bytes_per_s"),
              sheet.get("bw_bytes_per_s"), "B/s")]
    for cls in ("fp32", "tf32", "bf16", "fp16"):
        pairs.append((f"{cls} matmul", (peaks.get("flops_per_s") or {}).get(cls),
                      (sheet.get("flops_per_s") or {}).get(cls), "FLOP/s"))
    for name, got, ref, unit in pairs:
        ratio = _pct(100 * got / ref) if got and ref else "-"
        rows.append(f"| {name} | {_rate(got, unit)} | {_rate(ref, unit)} | {ratio} |")
    rows += ["", f"launch (minimal op back to back): {peaks.get('launch_us', 0):.2f} us; "
             f"measured in {peaks.get('measure_s', 0)} s", ""]
    return rows


def main(argv: list[str]) -> int:
    out = Path(argv[1])
    names = argv[2:]
    lines = ["# Roofline on the GPU (bench/roofline/run.sh)", ""]
    peaks, err = _load(out / "peaks.json")
    lines += peaks_table(peaks, "standalone, fresh") if peaks else [f"peaks: {err}", ""]
    lines += ["## Workloads", "",
              "| workload | floor us | bound | work | reference us | ref % of floor | "
              "candidate us | cand % of floor | cand % peak FLOP/s | cand % peak BW | lazy |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    worker_peaks = None
    for name in names:
        r, err = _load(out / f"{name}.json")
        if r is None:
            lines.append(f"| {name} | {err} |")
            continue
        rl = r.get("roofline") or {}
        if not rl.get("floor_us"):
            lines.append(f"| {name} | status {r.get('status')}: {r.get('message', '')[:80]} "
                         f"{rl.get('error') or ''} |")
            continue
        worker_peaks = worker_peaks or rl.get("peaks")
        ref, cand, work = rl.get("ref") or {}, rl.get("cand") or {}, rl.get("work") or {}
        flops = sum((work.get("flops") or {}).values())
        bound = rl["bound"] + (f", {rl['compute_class']}" if rl["bound"] == "compute" else "")
        lazy = (rl.get("lazy") or {}).get("lazy")
        lines.append(
            f"| {name} | {rl['floor_us']:.2f} | {bound} | {_rate(flops, 'FLOP')}, "
            f"{_rate(work.get('bytes'), 'B')} | {ref.get('us', 0):.2f} | "
            f"{_pct(ref.get('pct_of_floor'))} | {cand.get('us', 0):.2f} | "
            f"{_pct(cand.get('pct_of_floor'))} | {_pct(cand.get('flops_pct'))} | "
            f"{_pct(cand.get('bw_pct'))} | {'yes' if lazy else 'no'} |")
    lines.append("")
    if worker_peaks:
        lines += peaks_table(worker_peaks, "the worker's, used for the floors")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
