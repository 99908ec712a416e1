"""What the worker's start-up leaves out stays out: torch._dynamo (seconds to import) is not
loaded by the worker's start nor by an evaluation of an honest candidate, timing included."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import PYTHON_DIR, SOFTMAX

_SCRIPT = f"""
import sys
from pathlib import Path
sys.path.insert(0, {str(PYTHON_DIR / 'tests')!r})
from conftest import run_eval
from kernelsmith_worker.loop import build_context

ctx = build_context(Path(sys.argv[1]))
print("start", "torch._dynamo" in sys.modules)
softmax = Path({str(SOFTMAX)!r})
result, _, _ = run_eval(ctx, softmax / "cpu_candidate.py", problem=softmax / "problem.py",
                        timing=True)
print("eval", result["status"], "torch._dynamo" in sys.modules)
"""


def test_no_dynamo_in_start_or_eval(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR))
    done = subprocess.run([sys.executable, "-c", _SCRIPT, str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert "start False" in lines, done.stdout
    assert "eval ok False" in lines, done.stdout + done.stderr[-3000:]
