"""Shared helpers of the kernelsmith_curate tests: run the CLI as the C++ side does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

PYTHON_DIR = Path(__file__).resolve().parents[2]
DATA = PYTHON_DIR / "tests" / "curate_data"
REPO_A = DATA / "repo_a"
REPO_B = DATA / "repo_b"


def run_cli(args: list[str], stdin: str = "", timeout: float = 300,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR), **(env or {}))
    return subprocess.run([sys.executable, "-m", "kernelsmith_curate", *args], input=stdin,
                          capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=str(PYTHON_DIR))


def jsonl(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def extract(root: Path, files: list[Path]) -> list[dict[str, Any]]:
    proc = run_cli(["extract", "--root", str(root), *map(str, files)])
    assert proc.returncode == 0, proc.stderr
    return jsonl(proc.stdout)
