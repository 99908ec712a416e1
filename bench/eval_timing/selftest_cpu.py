"""CPU self-test of the eval_timing benchmark's plumbing: run.sh end to end with a fake
`kernelsmith` binary and with compare_methods.py running on the CPU (Triton in its
interpreter, CUDA events and triton.testing replaced by host-clock fakes, shapes shrunk),
then checks that summary.md and steps.jsonl came out complete. No number it prints means
anything about a GPU; it proves the scripts run unattended.

    python3 bench/eval_timing/selftest_cpu.py [--keep DIR]

Internal: `selftest_cpu.py --wrap SCRIPT ARGS...` is what run.sh calls as its python here.
"""

from __future__ import annotations

import os
import runpy
import shutil
import statistics
import stat
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent

FAKE_BIN = r"""#!/usr/bin/env bash
# fake `kernelsmith eval ... --repeat N --json`: N EvalResult lines with 0.1 % jitter
n=1
while [ $# -gt 0 ]; do
  case "$1" in --repeat) n=$2; shift ;; esac
  shift
done
exec python3 - "$n" <<'EOF'
import json, random, sys
for i in range(int(sys.argv[1])):
    cand = 10.0 * (1 + random.gauss(0, 0.001))
    ref = 20.0 * (1 + random.gauss(0, 0.001))
    timing = {"ok": True, "method": "cuda_graph", "calls_per_sample": 400, "samples": 230,
              "ref_us": ref, "cand_us": cand, "speedup": ref / cand, "duration_s": 0.9,
              "warmup_s": 0.12, "findings": []}
    print(json.dumps({"schema_version": 1, "status": "ok", "speedup": ref / cand,
                      "ref_us": ref, "cand_us": cand, "cv": 0.002, "findings": [],
                      "duration_s": (4.0 if i == 0 else 1.6) + random.random() * 0.1,
                      "stages": {"timing": timing}}))
EOF
"""


class _FakeEvent:
    def __init__(self, enable_timing: bool = True) -> None:
        self.t = 0.0

    def record(self, stream: object = None) -> None:
        self.t = time.perf_counter()

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, other: "_FakeEvent") -> float:
        return (other.t - self.t) * 1e3


def _fake_bench(fn, *args, **kwargs) -> float:
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def wrap(argv: list[str]) -> None:
    """Run a script (or -c code) with CUDA faked on the CPU and the workloads shrunk."""
    sys.path.insert(0, str(HERE))
    import check_workloads  # sets TRITON_INTERPRET=1 and fixes the interpreter for numpy 2
    import torch
    import triton.testing

    torch.cuda.synchronize = lambda *a, **k: None
    torch.cuda.empty_cache = lambda: None
    torch.cuda.Event = _FakeEvent
    torch.cuda.is_available = lambda: True
    torch.cuda.get_device_properties = lambda *a: types.SimpleNamespace(
        name="fake (CPU self-test)", multi_processor_count=0, L2_cache_size=1 << 20,
        total_memory=0)
    torch.Tensor.cuda = lambda self, *a, **k: self
    triton.testing.do_bench = _fake_bench
    triton.testing.do_bench_cudagraph = _fake_bench

    if argv[0] == "-c":
        sys.argv = ["-c"] + argv[2:]
        exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
        return
    script = argv[0]
    args = argv[1:]
    if script.endswith("compare_methods.py"):
        args = args + ["--device", "cpu", "--reps", "2", "--kb-trials", "3"]  # last one wins
        sys.path.insert(0, str(HERE))
        import compare_methods
        real_load = compare_methods.load

        def load_small(path: Path, name: str):
            mod = real_load(path, name)
            wl = Path(path).parent.name
            if Path(path).name == "problem.py":
                for attr, value in check_workloads.SMALL.get(wl, {}).items():
                    setattr(mod, attr, value)
            return mod
        compare_methods.load = load_small
        sys.argv = [script] + args
        sys.exit(compare_methods.main())
    sys.argv = [script] + args
    runpy.run_path(script, run_name="__main__")


def selftest(keep: str | None) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="eval_timing_selftest_"))
    out = Path(keep) if keep else tmp / "out"
    fake_bin = tmp / "kernelsmith"
    fake_bin.write_text(FAKE_BIN)
    fake_py = tmp / "python"
    fake_py.write_text(f'#!/usr/bin/env bash\nexec "{sys.executable}" "{HERE / "selftest_cpu.py"}" '
                       '--wrap "$@"\n')
    for p in (fake_bin, fake_py):
        p.chmod(p.stat().st_mode | stat.S_IXUSR)
    env = dict(os.environ, KS_PYTHON=str(fake_py), KS_BENCH_DEADLINE_S="400")
    t0 = time.perf_counter()
    proc = subprocess.run(["bash", str(HERE / "run.sh"), str(fake_bin), str(out)], env=env,
                          capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - t0
    print(proc.stderr[-4000:])
    problems = []
    summary = out / "summary.md"
    if proc.returncode != 0:
        problems.append(f"run.sh exit status {proc.returncode}")
    if not summary.exists():
        problems.append("no summary.md")
    else:
        text = summary.read_text()
        print(text)
        for name in check_workloads_names():
            if f"| {name} |" not in text:
                problems.append(f"summary.md lacks a row for {name}")
        if "KernelBench-sized inputs" not in text:
            problems.append("summary.md lacks the KernelBench-sized table")
    steps = (out / "steps.jsonl").read_text().splitlines() if (out / "steps.jsonl").exists() else []
    import json
    for line in steps:
        s = json.loads(line)
        if s.get("rc") != 0:
            problems.append(f"step {s.get('step')} {s.get('workload')}: rc {s.get('rc')} "
                            f"({s.get('note')})")
    if len(steps) != 11:
        problems.append(f"{len(steps)} steps recorded, expected 11")
    print(f"selftest: run.sh took {wall:.0f} s on the CPU")
    if not keep:
        shutil.rmtree(tmp, ignore_errors=True)
    if problems:
        print("SELFTEST FAILED:\n  " + "\n  ".join(problems))
        return 1
    print("selftest ok")
    return 0


def check_workloads_names() -> list[str]:
    return sorted(p.name for p in (HERE / "workloads").iterdir() if p.is_dir())


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--wrap":
        wrap(sys.argv[2:])
    else:
        keep = sys.argv[sys.argv.index("--keep") + 1] if "--keep" in sys.argv else None
        sys.exit(selftest(keep))
