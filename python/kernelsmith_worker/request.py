"""The `eval` request (docs/protocol.md) as a typed value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kernelsmith_worker.correctness import TOLERANCES

MAX_TRIALS = 100


@dataclass(frozen=True)
class EvalRequest:
    id: str
    backend: str
    problem_path: str
    problem_source: str | None
    candidate_path: str
    candidate_source: str | None
    trials: int = 5
    tolerance: str = "default"
    seed: int = 42
    timing: bool = True
    # Optional: time the candidate against this other candidate (its ModelNew) instead of
    # the reference; the result then carries `vs_baseline` (docs/protocol.md).
    baseline_path: str | None = None
    baseline_source: str | None = None
    # Also time both with the independent method (independent.py): stages.timing.independent.
    independent_timing: bool = False

    @classmethod
    def from_message(cls, msg: dict[str, Any]) -> EvalRequest:
        """Validates an eval message. Raises ValueError naming the offending field."""
        def file(key: str) -> tuple[str, str | None]:
            obj = msg.get(key)
            if not isinstance(obj, dict):
                raise ValueError(f"`{key}` must be an object {{path, source}}")
            path, source = obj.get("path", ""), obj.get("source")
            if not isinstance(path, str) or (source is not None and not isinstance(source, str)):
                raise ValueError(f"`{key}.path`/`{key}.source` must be strings")
            if source is None and not path:
                raise ValueError(f"`{key}` needs a source or a path")
            return path or f"<{key}>", source

        backend = msg.get("backend")
        if not isinstance(backend, str) or not backend:
            raise ValueError("`backend` must be a non-empty string")
        trials = msg.get("trials", 5)
        if isinstance(trials, bool) or not isinstance(trials, int) or not 1 <= trials <= MAX_TRIALS:
            raise ValueError(f"`trials` must be an integer in 1..{MAX_TRIALS}")
        tolerance = msg.get("tolerance", "default")
        if tolerance not in TOLERANCES:
            raise ValueError(f"`tolerance` must be one of {sorted(TOLERANCES)}")
        seed = msg.get("seed", 42)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError("`seed` must be an integer")
        timing = msg.get("timing", True)
        if not isinstance(timing, bool):
            raise ValueError("`timing` must be a boolean")
        ppath, psrc = file("problem")
        cpath, csrc = file("candidate")
        bpath, bsrc = file("baseline") if msg.get("baseline") is not None else (None, None)
        if bpath is not None and not timing:
            raise ValueError("`baseline` needs `timing`: it only changes what is timed")
        independent = msg.get("independent_timing", False)
        if not isinstance(independent, bool):
            raise ValueError("`independent_timing` must be a boolean")
        if independent and not timing:
            raise ValueError("`independent_timing` needs `timing`")
        return cls(str(msg.get("id", "")), backend, ppath, psrc, cpath, csrc, trials, tolerance,
                   seed, timing, bpath, bsrc, independent)
