"""The runs of a problem's input cases within one evaluation (cases.py declares them): what
each case's stages recorded, and the per-case records of the result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kernelsmith_worker.cases import InputCase
from kernelsmith_worker.findings import verdict
from kernelsmith_worker.roofline import RooflineProbe
from kernelsmith_worker.trials import Trials


@dataclass
class CaseRun:
    """One input case of a problem that declares several (cases.py): its trials and what its
    stages recorded. A plain problem is one case and keeps its records at the top level."""

    case: InputCase
    trials: Trials
    roofline: RooflineProbe | None = None
    stages: dict[str, dict[str, Any]] = field(default_factory=dict)
    failures: list[tuple[str, str]] = field(default_factory=list)
    findings: list[dict[str, str]] = field(default_factory=list)
    timing: dict[str, Any] | None = None
    reached: bool = False
    ref_alone: dict[str, Any] | None = None  # its reference timed alone (ref_alone.py)


def case_records(runs: list[CaseRun], cuda: bool
                 ) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]] | None]:
    """Each declared case's verdict, timing and stages, and the stages of the case that
    decided the status (the first that failed, else the last one run; None: none ran)."""
    records: list[dict[str, Any]] = []
    decisive: tuple[str, CaseRun] | None = None
    for run in runs:
        status, message = verdict(run.failures, run.findings) if run.reached \
            else ("not_run", "")
        t = run.timing or {}
        timed = status == "ok" and bool(t)
        share = (run.stages.get("audit") or {}).get("custom_device_share")
        records.append({
            "name": run.case.name, "weight": run.case.weight, "status": status,
            "message": message,
            **{k: t.get(k) if timed else None
               for k in ("speedup", "speedup_ci95", "ref_us", "cand_us")},
            "cv": t.get("cand_cv") if timed else None,
            "stages": run.stages,
            "roofline": None if run.roofline is None else run.roofline.record(
                share if cuda else None),
        })
        if run.reached and (decisive is None or decisive[0] == "ok"):
            decisive = (status, run)
    return records, None if decisive is None else decisive[1].stages
