"""`inputs`: deduce inputs and run the execution filter for each record, each module in its
own sandboxed child (sandbox.py, child.py). Output records may come in any order."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from kernelsmith_curate.sandbox import run_in_child


@dataclass
class InputsOptions:
    timeout_s: float = 20.0  # per module: deduction and filter together
    seed: int = 42  # torch.manual_seed before construction and before get_inputs()
    max_attempts: int = 16  # deduction tries per module
    jobs: int = 1  # modules run at once (children in flight)
    mem_bytes: int = 8 << 30  # address space a child may add to what torch maps


def _bad(rec: dict[str, Any]) -> str | None:
    for key in ("id", "source", "class"):
        if not isinstance(rec.get(key), str):
            return f"record has no string '{key}'"
    cand = rec.get("candidate_inputs")
    if cand is not None and not (isinstance(cand, dict) and isinstance(
            cand.get("get_inputs"), str) and isinstance(cand.get("get_init_inputs"), str)):
        return "candidate_inputs must be null or {get_inputs, get_init_inputs} strings"
    return None


def process(rec: dict[str, Any], opts: InputsOptions) -> dict[str, Any]:
    bad = _bad(rec)
    if bad is not None:
        return {"id": rec.get("id"), "status": "rejected", "reason": bad, "problem": None,
                "runtime_us": None, "attempts": 0, "last_error": None}
    payload = {"source": rec["source"], "class": rec["class"],
               "candidate_inputs": rec.get("candidate_inputs"), "seed": opts.seed,
               "max_attempts": opts.max_attempts}
    return {"id": rec["id"], **run_in_child(payload, opts.timeout_s, opts.mem_bytes)}


def run_inputs(records: list[dict[str, Any]], opts: InputsOptions) -> Iterator[dict[str, Any]]:
    """One output record per input record, as each finishes."""
    if opts.jobs <= 1:
        for rec in records:
            yield process(rec, opts)
        return
    with ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        yield from pool.map(lambda r: process(r, opts), records)
