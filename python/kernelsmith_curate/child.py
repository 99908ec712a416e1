"""What runs inside the sandboxed child process for one module (sandbox.py starts it).

`run_module(payload)` deduces the inputs by trial and repair (deduce.py), renders the
KernelBench problem (problem.py), then loads that file as written and runs the execution
filter on it:
  - the output is one tensor, not empty, all finite;
  - deterministic: two forward calls on the same inputs, and a second model built after the
    same seed, give bit-identical outputs (CPU, one thread);
  - input-dependent: inputs drawn from another seed change the output;
and times the forward pass (median of up to 15 calls within about a second).
"""

from __future__ import annotations

import importlib.util
import inspect
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import torch

from kernelsmith_curate import deduce, ops, problem
from kernelsmith_curate.deduce import Spec, TensorSpec

_LONG_NAMES = ("idx", "ids", "indices", "index", "tokens", "token")


def load_source(source: str, name: str, workdir: Path) -> Any:
    """Imports source as module `name` from a real file (inspect and dataclasses need one)."""
    path = workdir / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _err(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"[:2000]


def initial_spec(cls: type, source_ops: list[str]) -> Spec:
    spec = Spec()
    try:
        params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    except (TypeError, ValueError):
        params = []
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is p.empty:
            if p.kind == p.KEYWORD_ONLY:
                spec.init_kwargs[p.name] = deduce.guess_value(p.name)
            else:
                spec.init_args.append(deduce.guess_value(p.name))
                spec.init_names.append(p.name)
        elif "drop" in p.name.lower() and isinstance(p.default, float) and p.default > 0:
            spec.init_kwargs[p.name] = 0.0
    try:
        fparams = list(inspect.signature(cls.forward).parameters.values())[1:]
    except (TypeError, ValueError):
        fparams = []
    first = deduce.first_shape(source_ops)
    for p in fparams:
        if p.default is not p.empty or p.kind in (p.VAR_KEYWORD, p.KEYWORD_ONLY):
            continue
        if p.kind == p.VAR_POSITIONAL:
            if not spec.inputs:
                spec.inputs.append(TensorSpec(list(first.shape), first.dtype, first.high))
            continue
        if any(w in p.name.lower() for w in _LONG_NAMES):
            spec.inputs.append(TensorSpec(list(first.shape[:2]), "long", 2))
        else:
            spec.inputs.append(TensorSpec(list(first.shape), first.dtype, first.high))
    return spec


def make_inputs(spec: Spec) -> list[torch.Tensor]:
    out = []
    for t in spec.inputs:
        if t.dtype == "long":
            out.append(torch.randint(0, t.high, tuple(t.shape)))
        else:
            out.append(torch.randn(*t.shape))
    return out


def _try(cls: type, spec: Spec, seed: int) -> Any:
    torch.manual_seed(seed)
    model = cls(*spec.init_args, **spec.init_kwargs)
    torch.manual_seed(seed)
    inputs = make_inputs(spec)
    with torch.no_grad():
        return model(*inputs)


def _deduce(cls: type, source: str, seed: int, max_attempts: int
            ) -> tuple[Spec | None, int, str | None, bool]:
    """(working spec or None, attempts, last error, output is a tuple/list)."""
    spec = initial_spec(cls, ops.source_ops(source))
    tried: set[str] = set()
    last: str | None = None
    for attempt in range(1, max_attempts + 1):
        tried.add(spec.key())
        try:
            out = _try(cls, spec, seed)
        except Exception as e:  # noqa: BLE001 - any failure of user code is data
            last = _err(e)
            nxt = deduce.next_spec(spec, last, tried)
            if nxt is None:
                return None, attempt, last, False
            spec = nxt
            continue
        if isinstance(out, torch.Tensor):
            return spec, attempt, None, False
        if isinstance(out, (tuple, list)) and out and isinstance(out[0], torch.Tensor):
            return spec, attempt, None, True
        return None, attempt, f"forward returned {type(out).__name__}, not a tensor", False
    return None, max_attempts, last, False


def _clone(xs: list[Any]) -> list[Any]:
    return [x.clone() if isinstance(x, torch.Tensor) else x for x in xs]


def execution_filter(text: str, seed: int, workdir: Path) -> tuple[str | None, float | None]:
    """(rejection reason or None, median forward time in microseconds)."""
    mod = load_source(text, "ks_curate_problem", workdir)
    torch.manual_seed(seed)
    init = list(mod.get_init_inputs())
    torch.manual_seed(seed)
    inputs = list(mod.get_inputs())
    if not any(isinstance(x, torch.Tensor) for x in inputs):
        return "forward takes no tensor inputs (output cannot depend on inputs)", None
    torch.manual_seed(seed)
    model = mod.Model(*init)
    with torch.no_grad():
        out = model(*_clone(inputs))
        if not isinstance(out, torch.Tensor):
            return f"output is {type(out).__name__}, not a tensor", None
        if out.numel() == 0:
            return "output is empty", None
        if (out.is_floating_point() or out.is_complex()) and not bool(torch.isfinite(out).all()):
            return "non-finite output (nan or inf)", None
        again = model(*_clone(inputs))
        if not torch.equal(out, again):
            return "non-deterministic: two forward calls on the same inputs differ", None
        torch.manual_seed(seed)
        twin = mod.Model(*init)
        if not torch.equal(out, twin(*_clone(inputs))):
            return "non-deterministic: two models built with the same seed differ", None
        torch.manual_seed(seed + 1)
        other = list(mod.get_inputs())
        out2 = model(*other)
        if isinstance(out2, torch.Tensor) and out2.shape == out.shape and torch.equal(out, out2):
            return "output does not depend on the inputs", None
        times: list[float] = []
        budget = time.perf_counter() + 1.0
        while len(times) < 15 and (len(times) < 3 or time.perf_counter() < budget):
            xs = _clone(inputs)
            t0 = time.perf_counter()
            model(*xs)
            times.append((time.perf_counter() - t0) * 1e6)
    return None, round(statistics.median(times), 1)


def run_module(payload: dict[str, Any], workdir: Path) -> dict[str, Any]:
    """The `inputs` output record for one module (without its id)."""
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    seed = int(payload["seed"])
    source, name = payload["source"], payload["class"]
    res: dict[str, Any] = {"status": "rejected", "reason": None, "problem": None,
                           "runtime_us": None, "attempts": 0, "last_error": None}
    try:
        mod = load_source(source, "ks_curate_source", workdir)
    except BaseException as e:  # noqa: BLE001
        res.update(reason=f"source does not load: {_err(e)}", last_error=_err(e))
        return res
    cls = getattr(mod, name, None)
    if not isinstance(cls, type) or not issubclass(cls, torch.nn.Module):
        res["reason"] = f"class '{name}' is not an nn.Module in the source"
        return res
    cand = payload.get("candidate_inputs")
    try:
        if cand:
            res["attempts"] = 1
            text = problem.render(source, name, None, False, cand.get("get_inputs"),
                                  cand.get("get_init_inputs"))
            probe = load_source(text, "ks_curate_probe", workdir)
            torch.manual_seed(seed)
            init = list(probe.get_init_inputs())
            out = probe.Model(*init)(*probe.get_inputs())
            if isinstance(out, (tuple, list)) and out and isinstance(out[0], torch.Tensor):
                text = problem.render(source, name, None, True, cand.get("get_inputs"),
                                      cand.get("get_init_inputs"))
        else:
            spec, attempts, last, first_output = _deduce(cls, source, seed,
                                                         int(payload.get("max_attempts", 16)))
            res.update(attempts=attempts, last_error=last)
            if spec is None:
                res["reason"] = f"input deduction failed after {attempts} attempts: {last}"
                return res
            text = problem.render(source, name, spec, first_output)
        res["problem"] = text
        reason, runtime = execution_filter(text, seed, workdir)
    except BaseException as e:  # noqa: BLE001 - user code may raise anything
        res.update(reason=f"execution failed: {_err(e)}", last_error=_err(e))
        return res
    res.update(status="rejected" if reason else "ok", reason=reason, runtime_us=runtime)
    return res
