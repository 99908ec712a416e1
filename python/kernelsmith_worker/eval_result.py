"""The EvalResult fields of one evaluation (evaluate.py): the verdict, the figures against the
reference (or against a baseline), the findings and stages, the device, the roofline and the
GPU seconds."""

from __future__ import annotations

from typing import Any

import torch


def fields(req: Any, status: str, message: str, timing: dict[str, Any] | None,
           findings: list[dict[str, Any]], stages: dict[str, Any], device: Any,
           roofline: dict[str, Any] | None, gpu_s: float,
           cases: list[dict[str, Any]] | None) -> dict[str, Any]:
    """The result of request `req`. Figures only when the verdict is ok; timed against a
    baseline, they go under `vs_baseline` (nothing was timed against the reference)."""
    t = timing or {}
    ok = status == "ok"
    vs_baseline = None
    if req.baseline_path is not None:
        if ok:
            vs_baseline = {"path": req.baseline_path, "speedup": t.get("speedup"),
                           "speedup_ci95": t.get("speedup_ci95"),
                           "baseline_us": t.get("ref_us"), "cand_us": t.get("cand_us")}
        t = {}
    out = {
        "status": status,
        "message": message,
        "backend": req.backend,
        "speedup": t.get("speedup") if ok else None,
        "speedup_ci95": t.get("speedup_ci95") if ok else None,
        "ref_us": t.get("ref_us") if ok else None,
        "cand_us": t.get("cand_us") if ok else None,
        "cv": t.get("cand_cv") if ok else None,
        "vs_baseline": vs_baseline,
        "findings": findings,
        "stages": stages,
        "device": device,
        "roofline": roofline,
        "gpu_seconds": gpu_s,
    }
    if cases is not None:
        out["cases"] = cases
    return out


def gpu_seconds(dev: torch.device, stages: dict[str, Any]) -> float:
    """Seconds an evaluation had work on its GPU: the sum of its stages' duration_s (load,
    correctness, audit, timing; each ends with its results read back from the device, so
    queued work is counted in the stage that queued it) when its device is a GPU, else 0.
    The roofline's peak measurement, made once per worker, is not counted."""
    if dev.type != "cuda":
        return 0.0
    return round(sum(float(rec.get("duration_s") or 0.0) for rec in stages.values()), 6)
