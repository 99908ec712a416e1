"""after_import runs callbacks right after a module's first import, and the integrity guard
watches torch.utils.cpp_extension (imported late, on first use) from that moment."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import PYTHON_DIR

from kernelsmith_worker.after_import import after_import


def test_callback_runs_once_after_the_first_import(tmp_path, monkeypatch):
    (tmp_path / "ks_late_mod.py").write_text("VALUE = 41\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = []
    after_import("ks_late_mod", lambda m: seen.append(("first", m.VALUE)))
    after_import("ks_late_mod", lambda m: seen.append(("second", m.VALUE)))
    assert seen == []
    import ks_late_mod  # noqa: F401

    assert seen == [("first", 41), ("second", 41)]
    import importlib

    importlib.reload(ks_late_mod)
    assert len(seen) == 2  # once
    after_import("ks_late_mod", lambda m: seen.append(("loaded", m.VALUE)))
    assert seen[-1] == ("loaded", 41)  # already imported: at once
    assert ks_late_mod.__loader__.__class__.__name__ == "SourceFileLoader"


_SCRIPT = """
import sys
from pathlib import Path
from kernelsmith_worker.loop import build_context

ctx = build_context(Path(sys.argv[1]))
print("loaded at start", "torch.utils.cpp_extension" in sys.modules)
import torch.utils.cpp_extension as ext
print("hooked", getattr(ext.load_inline, "__ks_hook__", False))
print("intact", ctx.guard.changes())
ext.load_inline = lambda *a, **k: None
print("replaced", ctx.guard.changes())
"""


def test_cpp_extension_is_hooked_and_watched_when_first_imported(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR))
    done = subprocess.run([sys.executable, "-c", _SCRIPT, str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert "loaded at start False" in lines
    assert "hooked True" in lines and "intact []" in lines
    assert "replaced ['torch.utils.cpp_extension.load_inline was replaced']" in lines
