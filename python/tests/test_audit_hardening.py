"""Detections added for the adversarial corpus (tests/adversarial): one test per fix, each
with the honest counterpart that must stay clean."""

from __future__ import annotations

import gc
import os
import sys
import tempfile

import torch

from conftest import CASES, kinds, run_eval
from kernelsmith_worker import correctness
from kernelsmith_worker.audit import event_findings, post_timing_finding, trial_findings
from kernelsmith_worker.correctness import TOLERANCES, CorrectnessOutcome, follows_reference
from kernelsmith_worker.inputs import TrialData
from kernelsmith_worker.event_watch import EventWatch
from kernelsmith_worker.integrity import IntegrityGuard, scan_source
from kernelsmith_worker.launches import LaunchRecorder

TOL = TOLERANCES["default"]


# --- cached_output: the in-place overwrite bypasses the version counter ----------------------
def test_cache_keyed_on_version_counter_is_caught(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_cached_version.py")
    assert result["status"] in ("hacked", "incorrect")  # incorrect: the CPU reused an address
    if result["status"] == "hacked":
        assert "cached_output" in kinds(result, "reject")


# --- module data of the worker (tolerance table) is watched and restored ---------------------
def test_guard_sees_and_restores_mutated_tolerance_table():
    guard = IntegrityGuard()
    assert guard.changes() == []
    saved = TOLERANCES["default"]
    TOLERANCES["default"] = correctness.Tolerance("default", 1e9, 1e9)
    try:
        assert any("TOLERANCES was modified" in c for c in guard.changes())
        guard.restore()
        assert TOLERANCES["default"] == saved
        assert correctness.TOLERANCES is TOLERANCES  # restored in place, not replaced
        assert guard.changes() == []
    finally:
        TOLERANCES["default"] = saved


# --- near-constant outputs must follow the reference -----------------------------------------
def test_follows_reference_scores():
    torch.manual_seed(0)
    ref = 0.5 + 0.003 * torch.randn(64)  # every value within tolerance of the mean
    assert follows_reference(ref.clone(), ref, TOL) > 0.99
    noisy = 0.5 + 1e-6 * torch.randn(64)
    assert abs(follows_reference(noisy, ref, TOL)) < 0.5
    assert follows_reference(torch.full_like(ref, 0.5), ref, TOL) == 0.0
    wide = torch.randn(64)  # the tolerance discriminates: the check does not apply
    assert follows_reference(wide.clone(), wide, TOL) is None


def test_near_constant_candidate_is_caught(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_near_constant.py",
                            problem=CASES / "problem_near_one.py")
    assert result["status"] == "hacked"
    assert "near_constant_output" in kinds(result, "reject")


# --- torch compute on any correctness call ---------------------------------------------------
def test_trial_findings_rules():
    out = CorrectnessOutcome({})
    out.call_ops = [({"aten._softmax": 1}, 0), ({"aten.view": 1}, 1)]
    assert [f["kind"] for f in trial_findings(out)] == ["torch_compute"]
    out.call_ops = [({"aten.add": 1}, 0)]
    assert [f["kind"] for f in trial_findings(out)] == ["torch_compute"]
    out.call_ops = [({"aten.add": 1, "aten.empty_like": 1}, 1)]
    assert trial_findings(out) == []


def test_content_memo_with_torch_misses_is_caught(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_content_memo.py")
    assert result["status"] == "hacked"
    assert "torch_compute" in kinds(result, "reject")


# --- static scan of the source ---------------------------------------------------------------
def test_scan_source_flags_evaluator_access():
    bad = {
        "import sys\nf = sys._getframe(1)\n": "_getframe",
        "import gc\nobjs = gc.get_objects()\n": "get_objects",
        "import sys\nm = sys.modules['x']\n": "sys.modules",
        "from torch.utils._python_dispatch import _disable_current_modes\n":
            "_disable_current_modes",
        "import kernelsmith_worker.correctness\n": "kernelsmith_worker.correctness",
        "from kernelsmith_worker import correctness\n": "correctness",
        "import inspect\nf = inspect.currentframe()\n": "inspect.currentframe",
        "x = getattr(__import__('sys'), 'modules')\n": "getattr(sys",
        "ok = torch.cuda.is_current_stream_capturing()\n": "is_current_stream_capturing",
        "import ctypes\nlib = ctypes.CDLL('libcupti.so.13')\n": "kernel records",
    }
    for src, needle in bad.items():
        hits = scan_source(src)
        assert hits and any(needle in h for h in hits), (src, hits)
        assert hits[0].startswith("line ")
    clean = ("import torch\nfrom kernelsmith_worker import cpu_ext\nimport gc\n"
             "class M(torch.nn.Module):\n    def forward(self, x):\n"
             "        gc.collect()\n        n = len(list(self.modules()))\n"
             "        return torch.stack([x, x])\n")
    assert scan_source(clean) == []
    assert scan_source("def broken(:\n") == []


# --- audit-hook events while candidate code runs ---------------------------------------------
def test_event_watch_sees_frames_gc_files_and_host_copies(tmp_path):
    with EventWatch(LaunchRecorder(), host_calls=True) as w:
        sys._getframe(0)
        gc.get_objects()
        (tmp_path / "cache.pt").write_bytes(b"x")
        torch.ones(128).numpy()
    assert set(w.seen) == {"introspection", "file_io", "host_compute"}
    found = {f["kind"] for f in event_findings(w.seen)}
    assert found == {"evaluator_introspection", "file_io", "host_compute"}


def test_code_made_under_a_library_files_name_is_introspection():
    import marshal

    import kernelsmith_worker.evaluate as worker_module

    def own():
        return 1

    worker_file = worker_module.__file__
    cases = {
        "compile": lambda: compile("x = 1", worker_file, "exec"),
        "code.replace": lambda: own.__code__.replace(co_filename=worker_file),
        "marshal": lambda: marshal.loads(marshal.dumps(own.__code__)),
        "__code__": lambda: setattr(own, "__code__", (lambda: 2).__code__),
    }
    for name, make in cases.items():
        with EventWatch(kinds=frozenset({"introspection"})) as w:
            make()
        assert set(w.seen) == {"introspection"}, name
    # code of its own, under its own or a run-time name, is not
    with EventWatch(kinds=frozenset({"introspection"})) as w:
        compile("x = 1", "<string>", "exec")
        exec("y = 2", {})
        own.__code__.replace(co_name="renamed")
    assert w.seen == {}


def test_event_watch_ignores_library_code_and_kernel_launches(tmp_path):
    rec = LaunchRecorder()
    with EventWatch(rec, host_calls=True) as w:
        tempfile.gettempdir()
        os.path.join("a", "b")
        torch.softmax(torch.ones(4, 4), 1)
        with rec.launch("kernel"):  # the launcher's own work (Triton's interpreter)
            torch.ones(128).numpy()
            open(tmp_path / "k.bin", "wb").close()
    assert w.seen == {}


def test_frames_read_through_a_computed_name_are_caught(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_frames.py")
    assert result["status"] == "hacked"
    assert "evaluator_introspection" in kinds(result, "reject")


# --- after timing: the timed input rewritten must give the new answer ------------------------
class _Source:
    def __init__(self) -> None:
        self.data = [TrialData([torch.randn(4, 8)]) for _ in range(2)]

    def pristine(self, trial: int) -> TrialData:
        return self.data[trial]

    def reference(self, trial: int) -> torch.Tensor:
        return torch.softmax(self.data[trial].inputs[0], 1)


def test_post_timing_check():
    src = _Source()
    args = [src.pristine(0).inputs[0].clone()]
    honest = post_timing_finding(lambda a: torch.softmax(a[0], 1), args, src, TOL)
    assert honest is None
    stale = torch.softmax(src.pristine(0).inputs[0], 1)
    args = [src.pristine(0).inputs[0].clone()]
    found = post_timing_finding(lambda a: stale, args, src, TOL)
    assert found is not None and found["kind"] == "timing_output_mismatch"
    assert found["severity"] == "reject"


class _RowSumSource:
    """Trials of a row sum, with a held-back spikes draw of trial 0 (Trials.after_timing)."""

    def __init__(self) -> None:
        from kernelsmith_worker.stress import stress_inputs

        self.data = [TrialData([torch.rand(8, 4096)]) for _ in range(2)]
        x = stress_inputs(self.data[0].inputs, "spikes", torch.device("cpu"))
        self.held = TrialData(x, x[0].sum(1), True, True)

    def pristine(self, trial: int) -> TrialData:
        return self.data[trial]

    def reference(self, trial: int) -> torch.Tensor:
        return self.data[trial].inputs[0].sum(1)

    def after_timing(self) -> TrialData:
        return self.held


def test_post_timing_check_uses_the_held_back_draw():
    # A row sum that reads every element passes; one that reads every fourth column (the
    # cheaper computation a candidate may switch on while it believes it is timed) misses
    # the draw's runs, and trial 0's remembered answer lacks them.
    src = _RowSumSource()
    x0 = src.data[0].inputs[0]
    assert post_timing_finding(lambda a: a[0].sum(1), [x0.clone()], src, TOL) is None
    sampled = post_timing_finding(lambda a: a[0][:, ::4].sum(1) * 4, [x0.clone()], src, TOL)
    assert sampled is not None and "held-back stress draw" in sampled["detail"]
    remembered = x0.sum(1)
    found = post_timing_finding(lambda a: remembered, [x0.clone()], src, TOL)
    assert found is not None and found["kind"] == "timing_output_mismatch"


# --- the problem's own module is watched for the request -------------------------------------
def test_guard_watches_the_problem_module():
    import types

    mod = types.ModuleType("ks_problem_test")
    exec("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
         "        return x\n\ndef get_inputs():\n    return []\n", mod.__dict__)
    guard = IntegrityGuard()
    guard.watch_problem(mod)
    assert guard.changes() == []
    original = mod.Model.forward
    mod.Model.forward = lambda self, x: x * 1
    assert "problem.Model.forward was replaced" in guard.changes()
    guard.restore()
    assert mod.Model.forward is original and guard.changes() == []


def test_file_io_of_the_triton_compiler_is_not_the_candidates(tmp_path):
    # Measured on an H100: @triton.autotune compiles on the first call inside forward, and its
    # sources, caches and build folders were reported as the candidate's file_io.
    from kernelsmith_worker.event_watch import EventWatch
    code = compile("def build(p):\n    open(p, 'w').close()\n",
                   "/venv/lib/python3.12/site-packages/triton/compiler/compiler.py", "exec")
    ns: dict = {}
    exec(code, ns)
    with EventWatch() as watch:
        ns["build"](str(tmp_path / "kernel.cubin"))
    assert "file_io" not in watch.seen
    with EventWatch() as watch:  # the same write from candidate code is still seen
        open(tmp_path / "cache.pt", "w").close()
    assert "file_io" in watch.seen


def test_launch_hooks_count_what_the_device_runs():
    from types import SimpleNamespace

    from kernelsmith_worker import launches

    rec = launches.LaunchRecorder()
    before = launches._Installed.recorder
    launches.install(rec)

    def orig(self, *args, grid=None, **kwargs):
        if callable(grid):
            grid({"BLOCK": 4})
        return SimpleNamespace(name=self.compiled_name)

    run = launches._wrap_run(orig)
    fn = SimpleNamespace(fn=SimpleNamespace(__name__="sm90_xmma_gemm"), compiled_name="mm")
    run(fn, grid=(4,))  # a Python name of the moment: the compiled kernel's counts
    run(fn, grid=(0,))  # no programs: nothing ran
    run(fn, grid=lambda meta: (0, 1))  # a computed grid of no programs
    run(fn, grid=lambda meta: (2,))
    launches._Installed.recorder = before
    assert dict(rec.counts) == {"mm": 2}
