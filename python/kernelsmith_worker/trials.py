"""Per-request access to trial inputs and reference outputs, backed by the InputCache."""

from __future__ import annotations

from typing import Any

import torch

from kernelsmith_worker import errors
from kernelsmith_worker.inputs import InputCache, TrialData, clone_args, generate_inputs
from kernelsmith_worker.loader import Problem

_no_grad = torch.no_grad
_synchronize = torch.cuda.synchronize

KEEP_TRIALS = (0,)  # reused by the audit and timing: kept for the whole request


class ProblemError(Exception):
    """The problem itself failed (get_inputs or the reference raised): an infra_error."""

    def __init__(self, message: str, tail: str, poisoned: bool) -> None:
        super().__init__(message)
        self.message = message
        self.tail = tail
        self.poisoned = poisoned


class Trials:
    """Implements correctness.TrialSource for one request. Not thread-safe."""

    def __init__(self, problem: Problem, ref_model: torch.nn.Module, seed: int,
                 dev: torch.device, cache: InputCache, budget: int) -> None:
        self._problem = problem
        self._ref = ref_model
        self._seed = seed
        self._dev = dev
        self._cache = cache
        self._budget = budget
        self._held: dict[int, TrialData] = {}

    def _key(self, trial: int) -> tuple[str, int, int, str]:
        return (self._problem.sha256, self._seed, trial, str(self._dev))

    def _hold(self, trial: int, data: TrialData) -> None:
        for t in [t for t in self._held if t not in KEEP_TRIALS and t != trial]:
            del self._held[t]
        self._held[trial] = data

    def pristine(self, trial: int) -> TrialData:
        data = self._held.get(trial) or self._cache.get(self._key(trial))
        if data is None:
            try:
                inputs = generate_inputs(self._problem.get_inputs, self._seed + trial, self._dev)
            except BaseException as e:  # noqa: BLE001 - problem code may raise anything
                raise ProblemError(f"problem {self._problem.path}: get_inputs() raised "
                                   f"{errors.describe(e)}", errors.traceback_tail(e),
                                   errors.is_cuda_poison(e)) from e
            data = TrialData(inputs)
            self._cache.put(self._key(trial), data, self._budget)
        self._hold(trial, data)
        return data

    def reference(self, trial: int) -> Any:
        data = self.pristine(trial)
        if not data.has_reference:
            args = clone_args(data.inputs)
            try:
                with _no_grad():
                    out = self._ref(*args)
                if self._dev.type == "cuda":
                    _synchronize(self._dev)
            except BaseException as e:  # noqa: BLE001
                raise ProblemError(f"problem {self._problem.path}: reference Model.forward "
                                   f"raised {errors.describe(e)}", errors.traceback_tail(e),
                                   errors.is_cuda_poison(e)) from e
            data.reference = out.detach() if isinstance(out, torch.Tensor) else out
            data.has_reference = True
            self._cache.put(self._key(trial), data, self._budget)
        return data.reference
