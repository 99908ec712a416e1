"""Shared fixtures. Everything runs on the CPU: Triton through its interpreter."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

# Before torch/triton are imported anywhere in the test process.
os.environ.setdefault("TRITON_INTERPRET", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("KS_CACHE_DIR", str(Path(tempfile.gettempdir()) / "kernelsmith-test-cache"))

PYTHON_DIR = Path(__file__).resolve().parents[1]
REPO = PYTHON_DIR.parent
CASES = Path(__file__).resolve().parent / "cases"
SOFTMAX = REPO / "examples" / "softmax"
for path in (PYTHON_DIR, CASES):  # CASES: helpers the test candidates import (softmax_cpp)
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import pytest  # noqa: E402

from kernelsmith_worker.evaluate import WorkerContext, evaluate  # noqa: E402
from kernelsmith_worker.loop import build_context  # noqa: E402
from kernelsmith_worker.request import EvalRequest  # noqa: E402


class RecordingEvents:
    """Events fake: records stage and lease calls in order."""

    def __init__(self) -> None:
        self.log: list[str] = []

    def stage(self, name: str) -> None:
        self.log.append(f"stage:{name}")

    def acquire_lease(self) -> None:
        self.log.append("lease:acquire")

    def release_lease(self) -> None:
        self.log.append("lease:release")


def use_cache_dir(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """Points cpu_ext's build cache (and $KS_CACHE_DIR) at `path` for one test. cpu_ext reads
    $KS_CACHE_DIR once, at import, so its captured settings are replaced too."""
    import dataclasses

    from kernelsmith_worker import cpu_ext

    settings = dataclasses.replace(cpu_ext._settings(), cache_root=path)
    monkeypatch.setattr(cpu_ext, "_settings", lambda: settings)
    monkeypatch.setenv("KS_CACHE_DIR", str(path))


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    """A fresh cpu_ext build cache (KS_CACHE_DIR) and no refusals recorded, before and after."""
    from kernelsmith_worker import library_code

    use_cache_dir(monkeypatch, tmp_path)
    library_code.clear()
    yield tmp_path
    library_code.clear()


@pytest.fixture(scope="session")
def worker_ctx(tmp_path_factory: pytest.TempPathFactory) -> WorkerContext:
    ctx = build_context(tmp_path_factory.mktemp("scratch"))
    ctx.time_pair = None
    ctx.time_alone = None  # tests that time the reference alone set it
    ctx.timing_unavailable = "no timing in this test"
    return ctx


def run_eval(ctx: WorkerContext, candidate: Path,
             problem: Path = CASES / "problem_softmax_small.py", backend: str = "cpu",
             timing: bool = False, **kw: object) -> tuple[dict, bool, RecordingEvents]:
    """Evaluates candidate against problem in-process (sources inline, as the engine sends)."""
    req = EvalRequest(id="t", backend=backend, problem_path=str(problem),
                      problem_source=problem.read_text(), candidate_path=str(candidate),
                      candidate_source=candidate.read_text(), timing=timing, **kw)  # type: ignore[arg-type]
    events = RecordingEvents()
    result, poisoned = evaluate(req, ctx, events)
    return result, poisoned, events


def kinds(result: dict, severity: str | None = None) -> set[str]:
    return {f["kind"] for f in result["findings"] if severity is None or f["severity"] == severity}
