"""Where an evaluation's time goes: the worker's `evaluate` in-process on one workload, once to
warm (compile, caches), then under a stack sampler (a thread reads the main thread's stack
every 2 ms: cProfile would be switched off by the audit's own sys.setprofile); prints the
stages' seconds, the timing stage's phases and the functions with the most inclusive and
self samples.

    python bench/eval_timing/profile_eval.py WORKLOAD_DIR [--backend triton] [--top 40]

WORKLOAD_DIR holds problem.py and candidate.py (bench/eval_timing/workloads/*). On a host
without a GPU run it with TRITON_INTERPRET=1 (then the timing is the CPU's)."""

from __future__ import annotations

import argparse
import collections
import threading
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

from kernelsmith_worker.evaluate import evaluate  # noqa: E402
from kernelsmith_worker.loop import build_context  # noqa: E402
from kernelsmith_worker.request import EvalRequest  # noqa: E402


class _Events:
    def stage(self, name: str) -> None:
        pass

    def acquire_lease(self) -> None:
        pass

    def release_lease(self) -> None:
        pass


def _request(workload: Path, backend: str) -> EvalRequest:
    prob, cand = workload / "problem.py", workload / "candidate.py"
    return EvalRequest(id="profile", backend=backend, problem_path=str(prob),
                       problem_source=prob.read_text(), candidate_path=str(cand),
                       candidate_source=cand.read_text(), timing=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("workload", type=Path)
    ap.add_argument("--backend", default="triton")
    ap.add_argument("--top", type=int, default=40)
    args = ap.parse_args()
    ctx = build_context(Path(tempfile.mkdtemp(prefix="ks-profile-")))
    t0 = time.perf_counter()
    first, _ = evaluate(_request(args.workload, args.backend), ctx, _Events())
    print(f"first evaluation: {time.perf_counter() - t0:.2f} s, status {first['status']}")
    sampler = _Sampler()
    t0 = time.perf_counter()
    sampler.start()
    res, _ = evaluate(_request(args.workload, args.backend), ctx, _Events())
    sampler.stop()
    print(f"profiled evaluation: {time.perf_counter() - t0:.2f} s, status {res['status']}, "
          f"speedup {res.get('speedup')}")
    stages = res.get("stages") or {}
    for name, st in stages.items():
        if isinstance(st, dict):
            print(f"  stage {name}: {st.get('duration_s')}")
            for key in ("phases_s",):
                if isinstance(st.get(key), dict):
                    for ph, s in sorted(st[key].items(), key=lambda kv: -kv[1]):
                        print(f"      {ph}: {s:.3f}")
    if isinstance(stages.get("timing"), dict) and isinstance(stages["timing"].get("ref_alone"), dict):
        print(f"  ref_alone: {stages['timing']['ref_alone'].get('duration_s')}")
    n = max(sampler.samples, 1)
    for title, counts in (("inclusive", sampler.inclusive), ("self", sampler.leaf)):
        print(f"\n{title} (share of {sampler.samples} samples, every {_PERIOD_S * 1e3:.0f} ms):")
        for where, c in counts.most_common(args.top):
            print(f"  {100.0 * c / n:5.1f} %  {where}")
    return 0


_PERIOD_S = 0.002


class _Sampler:
    """The main thread's stack every _PERIOD_S: inclusive and self counts per function."""

    def __init__(self) -> None:
        self.inclusive: collections.Counter[str] = collections.Counter()
        self.leaf: collections.Counter[str] = collections.Counter()
        self.samples = 0
        self._main = threading.main_thread().ident
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._done.wait(_PERIOD_S):
            frame = sys._current_frames().get(self._main)
            if frame is None:
                continue
            self.samples += 1
            seen: set[str] = set()
            first = True
            while frame is not None:
                code = frame.f_code
                where = f"{Path(code.co_filename).name}:{code.co_firstlineno} {code.co_name}"
                if first:
                    self.leaf[where] += 1
                    first = False
                if where not in seen:
                    seen.add(where)
                    self.inclusive[where] += 1
                frame = frame.f_back


if __name__ == "__main__":
    sys.exit(main())
