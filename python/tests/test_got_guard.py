"""got_guard: a library's relocation slot rewritten by native code is seen (in a process
started with LD_BIND_NOW, as the engine starts the worker); ordinary work changes none."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PYTHON_DIR = Path(__file__).resolve().parents[1]

_SCRIPT = r"""
import ctypes
import torch
from kernelsmith_worker.got_guard import GotGuard, bind_now
from kernelsmith_worker.process_state import ProcessState

assert bind_now()
state = ProcessState.capture()
guard = GotGuard.capture()
assert guard.libraries() > 10
x = torch.rand(300, 300)
(x @ x).sum(); torch.softmax(x, 1); torch.sort(x)
import numpy, json, decimal, sqlite3  # new libraries, taken in on first sight
assert guard.changes() == [], guard.changes()
assert state.quick_changes() == []
maps = [line.split() for line in open("/proc/self/maps")]

def writable(a):
    return any(int(r.split("-")[0], 16) <= a < int(r.split("-")[1], 16) and "w" in p
               for r, p, *_ in maps)

(name, _), (lo, hi, _, _) = next((k, v) for k, v in guard._ranges.items()
                              if "libc10.so" in k[0] and writable(v[1] - 8))
slot = ctypes.c_uint64.from_address(hi - 8)  # a call slot of libc10 (.got.plt)
old = slot.value
slot.value = old + 16  # what a hook does: another function's address
found = guard.changes()
assert len(found) == 1 and "libc10.so" in found[0], found
assert any("libc10.so" in c for c in state.quick_changes())
assert any("libc10.so" in c for c in state.restore())  # not put back: the worker is replaced
slot.value = old
assert guard.changes() == []
print("ok")
"""


def test_a_rewritten_relocation_slot_is_seen_and_ordinary_work_changes_none():
    env = dict(os.environ, LD_BIND_NOW="1", PYTHONPATH=str(PYTHON_DIR))
    run = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stderr[-3000:]


def test_without_bind_now_the_slots_are_not_compared():
    env = {k: v for k, v in os.environ.items() if k != "LD_BIND_NOW"}
    env["PYTHONPATH"] = str(PYTHON_DIR)
    run = subprocess.run([sys.executable, "-c",
                          "from kernelsmith_worker.got_guard import bind_now\n"
                          "from kernelsmith_worker.process_state import ProcessState\n"
                          "assert not bind_now() and ProcessState.capture()._got is None\n"
                          "print('ok')"], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stderr[-3000:]


_TRITON_COMPILE = r"""
import torch, triton, triton.language as tl
from triton.backends.compiler import GPUTarget
from kernelsmith_worker.got_guard import GotGuard

guard = GotGuard.capture()

@triton.jit
def add(x, y, o, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    m = i < n
    tl.store(o + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)

src = triton.compiler.ASTSource(fn=add, signature={"x": "*fp32", "y": "*fp32", "o": "*fp32",
                                                   "n": "i32"}, constexprs={"B": 128})
try:  # MLIR and LLVM passes in libtriton.so; ptxas where the toolkit has it
    triton.compile(src, target=GPUTarget("cuda", 90, 32))
except Exception as e:  # noqa: BLE001 - no ptxas here: the passes ran all the same
    print("compile stopped:", type(e).__name__)
assert guard.changes() == [], guard.changes()
print("ok")
"""


def test_triton_compiling_a_kernel_changes_no_slot(tmp_path):
    # libtriton.so (linked by lld) keeps .data between .got and .got.plt: the compiler's own
    # data writes there are not slots (on an H200 a whole-range comparison rejected every
    # honest Triton candidate)
    env = dict(os.environ, LD_BIND_NOW="1", PYTHONPATH=str(PYTHON_DIR))
    env.pop("TRITON_INTERPRET", None)
    script = tmp_path / "compile_one.py"  # @triton.jit needs its source in a file
    script.write_text(_TRITON_COMPILE)
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stderr[-3000:]
