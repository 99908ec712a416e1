"""One child process per module, forked from a forkserver that has torch imported already.

Each child is a fresh process (nothing a previous module did is visible to it), with: its
own process group (killed whole at the deadline), stdout/stderr sent to /dev/null (the
module's prints cannot reach the JSON Lines on our stdout), a scratch working directory,
one CPU thread, and resource limits (address space = what torch already maps + mem_bytes,
CPU seconds, file size 64 MiB, no core files). The result comes back over a pipe; a child
that dies or overstays its deadline is reported as such.

The forkserver only imports torch (no thread pool started), so forking it is safe.

These limits are per module, inside the tool. Around the whole tool process, `kernelsmith
curate` applies the evaluation workers' sandbox (src/sandbox: no network, writes only to the
call's scratch directory, process and memory watchdog; docs/security.md).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import resource
import shutil
import signal
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

_CTX: Any = None


def _context() -> Any:
    global _CTX  # one forkserver per `inputs` process, started on first use
    if _CTX is None:
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        os.environ.setdefault("MKL_NUM_THREADS", "1")
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # CPU only
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["torch", "kernelsmith_curate.child"])
        _CTX = ctx
    return _CTX


def _vm_bytes() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _child(conn: Connection, payload: dict[str, Any], workdir: str, timeout_s: float,
           mem_bytes: int) -> None:
    os.setpgrp()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.chdir(workdir)
    cpu = int(timeout_s) + 2
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 20, 64 << 20))
    if mem_bytes > 0:
        limit = _vm_bytes() + mem_bytes
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from kernelsmith_curate.child import run_module
    try:
        result = run_module(payload, Path(workdir))
    except MemoryError:
        result = {"status": "rejected", "reason": "out of memory (limit reached)",
                  "problem": None, "runtime_us": None, "attempts": 0,
                  "last_error": "MemoryError"}
    conn.send(result)
    conn.close()


def run_in_child(payload: dict[str, Any], timeout_s: float, mem_bytes: int = 8 << 30
                 ) -> dict[str, Any]:
    """run_module(payload) in a sandboxed child; a rejection record on timeout or crash."""
    ctx = _context()
    workdir = tempfile.mkdtemp(prefix="ks-curate-")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, payload, workdir, timeout_s, mem_bytes))
    start = time.monotonic()
    try:
        proc.start()
        send.close()
        result: dict[str, Any] | None = None
        if recv.poll(timeout_s):
            try:
                result = recv.recv()
            except (EOFError, OSError):
                result = None
        elapsed = time.monotonic() - start
        if proc.is_alive():
            proc.join(1.0)
        if proc.is_alive() and proc.pid is not None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()
            proc.join()
        if result is not None:
            return result
        if elapsed >= timeout_s:
            reason = f"timeout after {timeout_s:g} s"
        elif proc.exitcode is not None and proc.exitcode < 0:
            reason = f"crashed ({signal.Signals(-proc.exitcode).name})"
        else:
            reason = f"child exited with status {proc.exitcode} without a result"
        return {"status": "rejected", "reason": reason, "problem": None, "runtime_us": None,
                "attempts": 0, "last_error": reason}
    finally:
        recv.close()
        shutil.rmtree(workdir, ignore_errors=True)
