"""One evaluation: load → correctness → audit → timing, turned into an EvalResult dict.

Every stage is announced through `Events.stage`, recorded in `stages`, and can stop the
candidate with a precise status. Status precedence (highest first): infra_error,
compile_error, runtime_error, incorrect, hacked, ok.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NoReturn

import torch

from kernelsmith_worker import (cpu_ext, errors, eval_result, kernel_log, library_code,
                                pc_sample, ref_alone)
from kernelsmith_worker.audit import (AuditInputs, event_findings, post_timing_finding,
                                      run_audit, timed_work_findings)
from kernelsmith_worker.backends import Backend
from kernelsmith_worker.case_runs import CaseRun, case_records
from kernelsmith_worker.cases import CaseError, InputCase, combine, input_cases
from kernelsmith_worker.correctness import (TOLERANCES, CorrectnessOutcome, close_normwise,
                                            run_trials)
from kernelsmith_worker.device import result_device
from kernelsmith_worker.event_watch import EventWatch
from kernelsmith_worker.findings import Hacked, finding, rejects, verdict
from kernelsmith_worker.inputs import clone_args, default_budget, to_device
from kernelsmith_worker.loader import Candidate, LoadError, Problem
from kernelsmith_worker.os_threads import ThreadWatch, outlived
from kernelsmith_worker.phase_marks import Marks
from kernelsmith_worker.protocol import EngineGone
from kernelsmith_worker.request import EvalRequest
from kernelsmith_worker.roofline import RooflineProbe
from kernelsmith_worker.runner import CandidateChecks, CandidateRunner
from kernelsmith_worker.stress import KINDS as STRESS_KINDS, normwise_rel_error, timed_error_limit
from kernelsmith_worker.timed_inputs import RotatingInputs, pool_budget
from kernelsmith_worker.trials import ProblemError, Trials
from kernelsmith_worker.worker_context import Events, WorkerContext  # noqa: F401 - re-exported

_perf_counter = time.perf_counter
_manual_seed = torch.manual_seed
_no_grad = torch.no_grad


class _Stop(Exception):
    """Ends the evaluation early; the outcome is already recorded."""


@dataclass
class _Evaluation:
    req: EvalRequest
    ctx: WorkerContext
    events: Events
    stages: dict[str, dict[str, Any]] = field(default_factory=dict)
    findings: list[dict[str, str]] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)  # (status, message)
    poisoned: bool = False
    timing: dict[str, Any] | None = None
    dev: torch.device = torch.device("cpu")
    baseline: Candidate | None = None          # request.baseline: timed in place of Model
    baseline_model: torch.nn.Module | None = None
    ref_model: torch.nn.Module | None = None
    reference_kernels: frozenset[str] | None = None  # what the reference ran before import
    roofline: RooflineProbe | None = None  # the speed-of-light record (timed requests)
    runs: list[CaseRun] = field(default_factory=list)  # the declared input cases, if any
    case: CaseRun | None = None  # the case whose stages run now (declared cases only)
    threads: ThreadWatch | None = None  # the threads alive before the candidate's import

    # --- bookkeeping -------------------------------------------------------------------------
    def fail(self, status: str, message: str, poisoned: bool = False) -> None:
        if self.case is not None:
            message = f"case {self.case.case.name}: {message}"
        self.failures.append((status, message))
        self.poisoned = self.poisoned or poisoned

    def begin(self, name: str) -> dict[str, Any]:
        self.events.stage(name)
        rec: dict[str, Any] = {"ok": True, "_start": _perf_counter()}
        self.stages[name] = rec
        return rec

    @staticmethod
    def end(rec: dict[str, Any], ok: bool | None = None) -> None:
        if ok is not None:
            rec["ok"] = ok
        rec["duration_s"] = round(_perf_counter() - rec.pop("_start", _perf_counter()), 6)

    def failed(self) -> bool:
        return bool(self.failures)

    def refused_library_code(self) -> None:
        """A cpu_ext library refused for reaching library code (at import, construction or in
        forward) is a reject whatever the candidate did next: the error it raised, or a
        failure that followed, is not the verdict."""
        refused = library_code.refusals()
        if not refused:
            return
        self.findings.append(finding("library_code", "; ".join(dict.fromkeys(refused)),
                                     "reject"))
        self.failures = [f for f in self.failures if f[0] == "infra_error"]

    # --- stages ------------------------------------------------------------------------------
    def load(self) -> tuple[Candidate, CandidateRunner, list[CaseRun]]:
        req, ctx = self.req, self.ctx
        rec = self.begin("load")
        backend = ctx.backends.get(req.backend)
        reason = "unknown backend" if backend is None else backend.unavailable_reason()
        if backend is None or reason is not None:
            rec["error"] = f"backend {req.backend!r} is not available on this worker: {reason}"
            self.end(rec, False)
            self.fail("infra_error", rec["error"])
            raise _Stop
        self.dev = backend.device()
        if self.dev.type == "cuda" and kernel_log.current() is None:
            rec["error"] = ("cannot account the candidate's device work on this worker: "
                            f"{kernel_log.why_not()}")
            self.end(rec, False)
            self.fail("infra_error", rec["error"])
            raise _Stop
        mark = Marks(rec.setdefault("phases_s", {}))
        try:
            problem = ctx.loader.load_problem(req.problem_path, req.problem_source)
            ctx.guard.watch_problem(problem.module)
        except LoadError as e:
            self._load_failed(rec, e)
        # Everything about the reference happens before any candidate code runs: its model,
        # the trials' inputs and reference outputs (stress trials included).
        init = self._build_reference(problem, rec)
        mark("reference_model")
        runs = self._case_runs(problem, rec)
        with kernel_log.names_run(self.dev) as names:  # the reference's timed blocks read these
            for run in runs:
                run.trials.prepare(max(req.trials, 2), mark)
        self.reference_kernels = names[0]
        mark("trials")
        if req.timing:  # roofline: the reference's work, before any candidate code runs
            for run in runs:
                run.trials.draw_fresh()  # the timed slots' bases
                mark("fresh_draws")
                run.roofline = RooflineProbe(ctx.roofline, self.dev, ctx.gpu_info)
                run.roofline.reference(run.case.problem.sha256, self.ref_model,
                                       run.trials.pristine(0).inputs)
                mark("roofline")
            self.roofline = runs[0].roofline
            self._reference_alone(runs)
            mark("ref_alone")
        try:
            self._load_baseline(rec)
            checks = CandidateChecks.before_import(ctx.guard, self.dev, ctx.device_state,
                                                   ctx.signal_state)
            self.threads = checks.native
            candidate = ctx.loader.load_candidate(req.candidate_path, req.candidate_source)
        except LoadError as e:
            self._load_failed(rec, e)
        mark("import")
        try:
            checks("after importing the candidate")
            new_model = self._build_candidate(candidate, init, rec)
            # the slow checks once for import and construction: what import changed persists
            checks("after importing and constructing ModelNew", full=True)
            mark("construct")
        except Hacked:
            rec["error"] = "stopped by a reject finding (see findings)"
            self.end(rec, False)
            raise
        self.end(rec, True)
        return candidate, CandidateRunner(new_model, self.dev, checks), runs

    def _reference_alone(self, runs: list[CaseRun]) -> None:
        """Each case's reference timed alone (ref_alone.py), under the lease and before any
        candidate code is imported. Not against a baseline (the other side is then another
        candidate)."""
        if self.ctx.time_alone is None or self.ctx.time_pair is None or \
                self.req.baseline_path is not None:
            return
        assert self.ref_model is not None
        self.events.acquire_lease()
        try:
            ref_alone.measure_cases(self.ctx.time_alone, self.ref_model, self.dev, runs,
                                    lambda trials: self._timed_inputs(trials, _any),
                                    self.ctx.alone)
        finally:
            self.events.release_lease()

    def _timed_inputs(self, trials: Trials, agree: Callable[[object, object], bool],
                      consistent: Callable[[object, object], bool] | None = None
                      ) -> RotatingInputs:
        """The timed inputs of a case (timed_inputs.py) over trial 0's values and the fresh
        draws."""
        return RotatingInputs(trials.pristine(0).inputs, self.dev, pool_budget(self.dev), agree,
                              consistent, draws=trials.fresh, mixed=trials.fresh_mixed,
                              domain=trials.domain)

    def _case_runs(self, problem: Problem, rec: dict[str, Any]) -> list[CaseRun]:
        """The problem's input cases (before any candidate code runs), each with its trials;
        a plain problem is one case. Declared cases are kept in self.runs."""
        try:
            declared = input_cases(problem)
        except CaseError as e:
            rec["error"] = e.message
            if e.tail:
                rec["log_tail"] = e.tail
            self.end(rec, False)
            self.fail("infra_error", e.message, e.poisoned)
            raise _Stop from e
        cases = declared or [InputCase("", 1.0, problem)]
        runs = [CaseRun(c, Trials(c.problem, self.ref_model, self.req.seed, self.dev,
                                   self.ctx.cache, default_budget(self.dev))) for c in cases]
        if declared:
            self.runs = runs
        return runs

    @contextlib.contextmanager
    def _in_case(self, run: CaseRun) -> Iterator[None]:
        """Runs stages for one declared case: its stage records, timing, failures and findings
        are its own (messages and findings name it); the request's lists get them too.
        Nothing changes for a plain problem."""
        if not self.runs:
            yield
            return
        saved, self.stages, self.case = self.stages, run.stages, run
        self.roofline, self.timing = run.roofline, None
        run.reached = True
        failed, found = len(self.failures), len(self.findings)
        prefix = f"case {run.case.name}: "
        try:
            yield
        except Hacked as h:
            for f in h.findings:
                f["detail"] = prefix + str(f.get("detail", ""))
            run.findings.extend(h.findings)
            raise
        finally:
            self.stages, self.case, self.roofline = saved, None, None
            run.timing, self.timing = self.timing, None
            run.failures.extend(self.failures[failed:])
            for f in self.findings[found:]:
                f["detail"] = prefix + str(f.get("detail", ""))
            run.findings.extend(self.findings[found:])

    def _load_failed(self, rec: dict[str, Any], e: LoadError) -> NoReturn:
        rec["error"] = e.message
        if e.log_tail:
            rec["log_tail"] = e.log_tail
        self.end(rec, False)
        self.fail(e.status, e.message, e.poisoned)
        raise _Stop from e

    def _load_baseline(self, rec: dict[str, Any]) -> None:
        """Imports request.baseline (an earlier verified candidate). Its failures are not the
        candidate's: they end the evaluation as infra_error."""
        req = self.req
        if req.baseline_path is None:
            return
        try:
            self.baseline = self.ctx.loader.load_candidate(req.baseline_path, req.baseline_source)
        except LoadError as e:
            rec["error"] = f"baseline {req.baseline_path}: {e.message}"
            self.end(rec, False)
            self.fail("infra_error", rec["error"], e.poisoned)
            raise _Stop from e

    def _build_baseline(self, init: list[Any], rec: dict[str, Any]) -> None:
        if self.baseline is None:
            return
        try:
            _manual_seed(self.req.seed)
            with torch.device(self.dev):
                model = self.baseline.ModelNew(*init)
            self.baseline_model = model.to(self.dev)
        except BaseException as e:  # noqa: BLE001 - baseline code may raise anything
            rec["error"] = (f"baseline {self.baseline.path}: constructing ModelNew raised "
                            f"{errors.describe(e)}")
            self.end(rec, False)
            self.fail("infra_error", rec["error"], errors.is_cuda_poison(e))
            raise _Stop from e

    def _build_reference(self, problem: Problem, rec: dict[str, Any]) -> list[Any]:
        """Builds Model (request's seed) into self.ref_model; returns the init inputs (device)."""
        try:
            init = to_device(list(problem.get_init_inputs()), self.dev)
            _manual_seed(self.req.seed)
            with torch.device(self.dev):
                ref_model = problem.Model(*init)
            self.ref_model = ref_model.to(self.dev)
        except BaseException as e:  # noqa: BLE001 - problem code may raise anything
            rec["error"] = f"problem {problem.path}: constructing Model raised {errors.describe(e)}"
            rec["log_tail"] = errors.traceback_tail(e)
            self.end(rec, False)
            self.fail("infra_error", rec["error"], errors.is_cuda_poison(e))
            raise _Stop from e
        return init

    def _build_candidate(self, candidate: Candidate, init: list[Any],
                         rec: dict[str, Any]) -> torch.nn.Module:
        """ModelNew seeded like Model (same initial parameters), then the baseline's."""
        try:
            _manual_seed(self.req.seed)
            with torch.device(self.dev):  # its own copy of init tensors: not the reference's
                new_model = candidate.ModelNew(*clone_args(init))
            new_model = new_model.to(self.dev)
        except BaseException as e:  # noqa: BLE001 - candidate code may raise anything
            status = "compile_error" if errors.is_compile_failure(e) else "runtime_error"
            what = "kernel does not compile" if status == "compile_error" \
                else "constructing ModelNew raised"
            rec["error"] = errors.traceback_tail(e)
            if status == "compile_error":
                rec["log_tail"] = errors.log_tail(e)
            self.end(rec, False)
            self.fail(status, f"{what} {errors.describe(e)}", errors.is_cuda_poison(e))
            raise _Stop from e
        self._build_baseline(init, rec)
        return new_model

    def correctness(self, runner: CandidateRunner, trials: Trials) -> CorrectnessOutcome:
        rec = self.begin("correctness")
        tol = TOLERANCES[self.req.tolerance]
        try:
            outcome = run_trials(self.req.trials, tol, trials, runner, self.dev)
            runner.checks("after the correctness trials", full=True)
        except Hacked:
            rec["error"] = "stopped by a reject finding (see findings)"
            self.end(rec, False)
            raise
        rec.clear()
        rec.update(outcome.record)
        if outcome.status is not None:
            self.fail(outcome.status, outcome.message, outcome.poisoned)
        elif outcome.record.get("stress_skipped", 0) >= len(STRESS_KINDS):
            self.findings.append(finding(
                "not_stress_checked", "every stress trial was skipped (the reference raised or "
                "had no finite value on each): the candidate was checked only on get_inputs()' "
                "own distribution, where approximations can pass", "warn"))
        return outcome

    def audit(self, backend: Backend, candidate: Candidate, runner: CandidateRunner,
              trials: Trials, outcome: CorrectnessOutcome) -> None:
        rec = self.begin("audit")
        inputs = AuditInputs(
            backend=self.req.backend, dev=self.dev, recorder=self.ctx.recorder,
            run_candidate=runner,
            kernel_names=lambda: backend.kernel_names(candidate.source, self.ctx.recorder),
            source=trials, tolerance=TOLERANCES[self.req.tolerance],
            correct=outcome.status is None, constant_trials=outcome.constant_trials,
            interpret=self.dev.type == "cpu" and self.req.backend == "triton",
            outcome=outcome, candidate_source=candidate.source)
        try:
            record, found = run_audit(inputs)
        except (Hacked, ProblemError):
            self.end(rec, False)
            raise
        except BaseException as e:  # noqa: BLE001 - candidate code may raise anything
            rec["error"] = errors.traceback_tail(e)
            self.end(rec, False)
            self.fail("runtime_error", f"during the audit, ModelNew.forward raised "
                      f"{errors.describe(e)}", errors.is_cuda_poison(e))
            return
        rec.update(record)
        self.findings.extend(found)
        self.end(rec, not rejects(found))

    def _independent(self, ref_model: torch.nn.Module, model: torch.nn.Module,
                     trials: Trials) -> dict[str, Any]:
        """The second, independent timing method (independent.py) on trial 0's inputs; a
        failure there is recorded, not the evaluation's."""
        from kernelsmith_worker import independent

        x_ref = clone_args(trials.pristine(0).inputs)
        x_cand = clone_args(trials.pristine(0).inputs)
        try:
            return independent.measure(lambda: ref_model(*x_ref), lambda: model(*x_cand),
                                       self.dev)
        except Exception as e:  # noqa: BLE001 - candidate code runs here too
            return {"error": errors.describe(e)}

    def time(self, ref_model: torch.nn.Module, runner: CandidateRunner, trials: Trials,
             alone: dict[str, Any] | None = None) -> None:
        """The timing stage of one case; `alone`: its reference timed alone before the
        candidate's import (ref_alone.py), compared with the reference's figure here."""
        if self.ctx.time_pair is None:
            self.fail("infra_error", f"cannot time: {self.ctx.timing_unavailable}")
            return
        tol = TOLERANCES[self.req.tolerance]
        # A timed sample of the problem's own distribution as precise as the trials and as
        # bf16 rounding allows (stress.timed_error_limit); against a baseline not applied.
        trial_err = float(self.stages.get("correctness", {}).get("max_normwise_rel_err", 0.0))
        limit = timed_error_limit(trial_err, trials.rounding_err)
        rot = self._timed_inputs(trials, lambda cand, ref: close_normwise(cand, ref, tol)[0],
                                 None if self.baseline_model is not None else
                                 lambda cand, ref: normwise_rel_error(cand, ref) <= limit)
        self.findings.extend([trials.fresh_finding] if trials.fresh_finding else [])
        model = runner.model
        if self.baseline_model is not None:
            ref_model = self.baseline_model  # timed in the reference's place, interleaved
        # calls j of a sample, the candidate's sampled on the CPU (pc_sample.Request)
        ref_fn = pc_sample.tagged_slot(ref_model, rot.ref_args, False)
        cand_fn = pc_sample.tagged_slot(model, rot.args, True)

        self.events.acquire_lease()
        try:
            if self.roofline is not None:  # the device's peaks: measured once, under the lease
                self.roofline.device()
            rec = self.begin("timing")
            try:
                # against a baseline the reference side is another candidate: not read
                ref_kernels = self.reference_kernels if self.baseline_model is None else None
                out = self.ctx.time_pair(ref_fn, cand_fn, device=self.dev, seed=self.req.seed,
                                         inputs=rot, check=runner.checks,
                                         reference_kernels=ref_kernels)
                if self.req.independent_timing and out.get("ok", True):
                    out["independent"] = self._independent(ref_model, model, trials)
                if alone is not None and out.get("ok", True) and self.ref_model is not None:
                    # Triton's interpreter (a test mode) churns the heap the CPU figures read
                    interpreted = self.dev.type == "cpu" and self.req.backend == "triton"
                    self.poisoned = ref_alone.judge(
                        alone, out, None if interpreted else self.ctx.time_alone,
                        self.ref_model, self.dev,
                        lambda: self._timed_inputs(trials, _any)) or self.poisoned
            except BaseException as e:  # noqa: BLE001 - timing runs candidate code
                if isinstance(e, (EngineGone, Hacked)):
                    raise
                rec["error"] = errors.traceback_tail(e)
                self.end(rec, False)
                self.fail("runtime_error", f"timing failed: {errors.describe(e)}",
                          errors.is_cuda_poison(e))
                return
        finally:
            self.events.release_lease()
        runner.checks("during timing", full=True)
        if out.get("ok", True) and self._after_timing(runner, rot.last_slot(), trials):
            return
        start = rec.pop("_start", None)
        rec.clear()
        rec.update({k: v for k, v in dict(out).items() if k != "findings"})
        rec.setdefault("ok", True)
        if "duration_s" not in rec and start is not None:
            rec["duration_s"] = round(_perf_counter() - start, 6)
        self.findings.extend(list(out.get("findings") or []))
        self.findings.extend(timed_work_findings(rec, self.stages.get("audit") or {},
                                                 self.findings))
        if not rec.get("ok", True):
            why = str(rec.get("error") or rec.get("fallback_reason") or "no samples")
            poisoned = errors.text_is_cuda_poison(why + str(rec.get("traceback", "")))
            self.fail("runtime_error", f"timing failed: {why}"[:errors.MESSAGE_CHARS], poisoned)
            return
        rec["timed_draws"] = {"draws": rot.draws, "mixed": rot.mixed}
        self.timing = rec

    def _after_timing(self, runner: CandidateRunner, args: list[Any], trials: Trials) -> bool:
        """The timed input overwritten with new values must give the new answer (a candidate
        that stops computing once called repeatedly). True when that failed."""
        try:
            found = post_timing_finding(runner, args, trials, TOLERANCES[self.req.tolerance])
        except (Hacked, ProblemError, EngineGone):
            raise
        except BaseException as e:  # noqa: BLE001 - candidate code may raise anything
            self.fail("runtime_error", f"after timing, ModelNew.forward raised "
                      f"{errors.describe(e)}", errors.is_cuda_poison(e))
            return True
        if found is not None:
            self.findings.append(found)
        return found is not None

    def run(self) -> None:
        """The stages, under one watch of the whole evaluation: candidate code that reaches
        frames (the evaluator's among them) or gc anywhere — at import, in a finalizer, in
        a call no per-call watch covers — is a reject, whatever it then did."""
        session = EventWatch(kinds=frozenset({"introspection"}))
        try:
            with session:
                self._stages()
        finally:
            found = event_findings(session.seen)
            self.findings.extend(found)
            self.poisoned = self.poisoned or bool(found)

    def _stages(self) -> None:
        candidate, runner, runs = self.load()
        for run in runs:  # every case checked before any is timed
            with self._in_case(run):
                broke = self._check(candidate, runner, run.trials)
            if broke or self.poisoned:
                return
        if self.failed() or rejects(self.findings) or not self.req.timing:
            return
        for run in runs:
            with self._in_case(run):
                self._candidate_work(runner, run.trials)
                if not self.failed():
                    assert self.ref_model is not None
                    self.time(self.ref_model, runner, run.trials, run.ref_alone)
            if self.failed() or rejects(self.findings):  # a case rejected: no workload figure
                return
        if self.runs:
            self.timing = combine([r.timing or {} for r in runs], [r.case.weight for r in runs])

    def _check(self, candidate: Candidate, runner: CandidateRunner, trials: Trials) -> bool:
        """Correctness and audit of one case; True when the candidate broke (it does not
        compile or raised) and no further case is worth running."""
        outcome = self.correctness(runner, trials)
        if outcome.status in ("compile_error", "runtime_error"):
            return True
        self.audit(self.ctx.backends[self.req.backend], candidate, runner, trials, outcome)
        return False

    def _candidate_work(self, runner: CandidateRunner, trials: Trials) -> None:
        """Roofline: the work torch ops do in the candidate's forward (lazy optimization)."""
        if self.roofline is None:
            return
        try:
            self.roofline.candidate(runner, trials.pristine(0).inputs, self.ctx.recorder.in_kernel)
        except (Hacked, EngineGone):
            raise
        except BaseException as e:  # noqa: BLE001 - candidate code may raise anything
            self.fail("runtime_error", f"while its torch ops were counted, ModelNew.forward "
                      f"raised {errors.describe(e)}", errors.is_cuda_poison(e))

    # --- result ------------------------------------------------------------------------------
    def result(self) -> dict[str, Any]:
        for rec in self.stages.values():
            if "_start" in rec:
                self.end(rec, False)
        status, message = verdict(self.failures, self.findings)
        cases = self._case_records(status == "ok") if self.runs else None
        roofline = None
        if self.roofline is not None and not self.runs:  # declared cases: each has its own
            share = (self.stages.get("audit") or {}).get("custom_device_share")
            roofline = self.roofline.record(share if self.dev.type == "cuda" else None)
        return eval_result.fields(self.req, status, message, self.timing, self.findings,
                                  self.stages, result_device(self.dev, self.ctx.gpu_info),
                                  roofline, eval_result.gpu_seconds(self.dev, self.stages),
                                  cases)

    def _case_records(self, ok: bool) -> list[dict[str, Any]]:
        """Each declared case's record; the top-level stages become the decisive case's, with
        the combined timing record when every case was timed."""
        records, decisive = case_records(self.runs, self.dev.type == "cuda")
        if decisive is not None:
            self.stages.update(decisive)
        if ok and self.timing is not None:
            self.stages["timing"] = self.timing
        return records


def evaluate(req: EvalRequest, ctx: WorkerContext, events: Events) -> tuple[dict[str, Any], bool]:
    """Runs one evaluation. Returns (EvalResult fields, worker_poisoned). Never raises except
    EngineGone (the engine went away while we waited for the lease)."""
    ev = _Evaluation(req, ctx, events)
    sampler = pc_sample.Request(ev.dev.type == "cpu" and req.backend == "cpu")
    unrestored = ctx.guard.restore()
    ctx.recorder.reset(keep_sources=False)
    library_code.clear()
    try:
        if unrestored:  # an earlier candidate left state that cannot be put back
            ev.fail("infra_error", "the worker's state could not be restored after an earlier "
                    f"candidate ({'; '.join(unrestored[:4])}); it is replaced", True)
            raise _Stop
        with sampler:
            ev.run()
    except _Stop:
        pass
    except Hacked as h:
        ev.findings.extend(h.findings)
        ev.poisoned = True  # the process may still be compromised: have it replaced
    except ProblemError as e:
        ev.fail("infra_error", e.message, e.poisoned)
        for rec in ev.stages.values():
            if "_start" in rec:
                rec["error"] = e.tail
    except EngineGone:
        raise
    except BaseException as e:  # noqa: BLE001 - one result per request, whatever happened
        print(errors.traceback_tail(e, 20000), file=sys.stderr, flush=True)
        ev.fail("infra_error", f"worker error: {errors.describe(e)}", errors.is_cuda_poison(e))
    finally:
        sampler.report(ev.findings, ev.stages)
        ev.refused_library_code()
        ev.findings += (tampered := cpu_ext.tampered_builds())  # the evaluator's own builds
        ev.poisoned = outlived(ev.threads) or bool(tampered) or ev.poisoned  # the result stands
        ctx.loader.cleanup()
        unrestored = ctx.guard.restore()
        if unrestored:  # the result stands; the worker is not reused
            print("worker state could not be restored: " + "; ".join(unrestored[:8]),
                  file=sys.stderr, flush=True)
            ev.poisoned = True
    return ev.result(), ev.poisoned


def _any(cand: object, ref: object) -> bool:
    return True
