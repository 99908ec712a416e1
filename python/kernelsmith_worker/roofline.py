"""The roofline record of one evaluation: the problem's work (roofline_work), the device's
measured peaks (device_peaks) and the work torch ops do in the candidate's forward next to
its custom kernels. The engine turns it into floor, bound and % of peak (src/eval/roofline).

Nothing here decides a status: a measurement that fails is recorded as `error` and the
evaluation goes on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

import torch

from kernelsmith_worker import device_peaks, errors
from kernelsmith_worker.inputs import clone_args
from kernelsmith_worker.roofline_work import Work, WorkCounter, forward_work


@dataclass
class RooflineCache:
    """Lives as long as the worker: the work per problem (by source hash and TF32 settings)
    and the peaks per device. Instance state, not module state."""

    work: dict[tuple[Any, ...], Work] = field(default_factory=dict)
    peaks: dict[str, dict[str, Any]] = field(default_factory=dict)


def _tf32() -> tuple[bool, bool]:
    return (bool(torch.backends.cuda.matmul.allow_tf32), bool(torch.backends.cudnn.allow_tf32))


class RooflineProbe:
    """Collects one evaluation's roofline record: call the steps in the evaluation's order;
    each is cheap once its cache is filled."""

    def __init__(self, cache: RooflineCache, dev: torch.device,
                 gpu: dict[str, Any] | None) -> None:
        self._cache = cache
        self._dev = dev
        self._gpu = gpu
        self._work: Work | None = None
        self._peaks: dict[str, Any] | None = None
        self._torch: dict[str, Any] | None = None
        self._errors: list[str] = []

    def reference(self, problem_sha: str, model: torch.nn.Module, inputs: list[Any]) -> None:
        """The reference's work on `inputs` (before any candidate code has run)."""
        key = (problem_sha, self._dev.type, _tf32())
        work = self._cache.work.get(key)
        if work is None:
            try:
                work = forward_work(model, clone_args(inputs))
            except Exception as e:  # noqa: BLE001 - problem code may raise anything
                self._errors.append(f"counting the reference's work: {errors.describe(e)}")
                return
            self._cache.work[key] = work
        self._work = work

    def candidate(self, run: Callable[..., Any], inputs: list[Any],
                  in_kernel: Callable[[], bool]) -> None:
        """The work torch's own compute ops do in one candidate forward (`run(args, mode=)`,
        the CandidateRunner); ops inside custom-kernel launches are not counted. Exceptions
        from the candidate propagate (its calls have their own rules)."""
        counter = WorkCounter(skip=in_kernel, op_bytes=True)
        run(clone_args(inputs), mode=counter)
        self._torch = {"flops": sum(counter.by_class.values()), "bytes": counter.op_bytes,
                       "ops": dict(sorted(counter.ops.items()))}

    def device(self) -> None:
        """The device's peaks; call it while holding the device's timing lease."""
        name = str((self._gpu or {}).get("name") or self._dev.type)
        found = self._cache.peaks.get(name)
        if found is None:
            try:
                found = device_peaks.peaks(self._dev, self._gpu)
            except Exception as e:  # noqa: BLE001 - an out-of-memory device, a broken driver
                self._errors.append(f"measuring the device's peaks: {errors.describe(e)}")
                return
            self._cache.peaks[name] = found
        self._peaks = found

    def record(self, device_share: float | None) -> dict[str, Any] | None:
        """The result's `roofline` object; None when nothing was measured."""
        if self._work is None and self._peaks is None and not self._errors:
            return None
        return {"work": None if self._work is None else self._work.to_json(),
                "peaks": self._peaks, "candidate_torch": self._torch,
                "custom_device_share": device_share,
                "error": "; ".join(self._errors) or None}
