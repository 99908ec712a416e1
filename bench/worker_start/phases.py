"""Where a worker's start-up time goes. Starts `python -m kernelsmith_worker` the way the
engine's pool does (protocol on two pipes named by KS_PROTO_IN / KS_PROTO_OUT, the checkout's
python/ on PYTHONPATH, a scratch folder as working directory; no sandbox), and records:

- `hello_s`: spawn to hello, and the worker's own `start_phases` (hello, docs/protocol.md);
- `first_eval_s`: one eval of examples/softmax (the Triton candidate where a GPU is visible,
  else the CPU one), request to result, and `exit_s`: shutdown to process exit;
- with --binary: `one_off_eval_s`, the wall time of `BINARY eval` of the same pair.

Run from the repository root (twice: the first run on a machine may compile the kernel log
and fill Triton's cache):

    python bench/worker_start/phases.py --runs 2 [--binary build/kernelsmith] [--out FILE]

--checkout DIR times another checkout's worker (its python/, and KS_RESOURCE_DIR=DIR for the
binary), e.g. the main branch's, against this one's on the same machine. Prints one JSON
object (also written to FILE).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CHECKOUT = [ROOT]  # whose worker runs: --checkout
PROBLEM = ROOT / "examples/softmax/problem.py"
CANDIDATES = {"triton": ROOT / "examples/softmax/triton_candidate.py",
              "cpu": ROOT / "examples/softmax/cpu_candidate.py"}
DEADLINE_S = 300.0


class Worker:
    """One worker process and its protocol pipes."""

    def __init__(self, python: str, scratch: str) -> None:
        to_worker_r, self._to_worker = os.pipe()
        self._from_worker, from_worker_w = os.pipe()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(CHECKOUT[0] / "python"), os.environ.get("PYTHONPATH", "")) if p)
        env.update(PYTHONUNBUFFERED="1", KS_PROTO_IN=str(to_worker_r),
                   KS_PROTO_OUT=str(from_worker_w))
        self._stderr = tempfile.TemporaryFile()
        self.started = time.perf_counter()
        self.proc = subprocess.Popen([python, "-m", "kernelsmith_worker"], cwd=scratch, env=env,
                                     pass_fds=(to_worker_r, from_worker_w),
                                     stdout=subprocess.DEVNULL, stderr=self._stderr)
        os.close(to_worker_r)
        os.close(from_worker_w)
        self._buf = b""

    def send(self, msg: dict[str, Any]) -> None:
        os.write(self._to_worker, (json.dumps(msg) + "\n").encode())

    def receive(self) -> dict[str, Any]:
        deadline = time.perf_counter() + DEADLINE_S
        while b"\n" not in self._buf:
            left = deadline - time.perf_counter()
            if left <= 0 or not select.select([self._from_worker], [], [], left)[0]:
                raise TimeoutError(f"no message from the worker within {DEADLINE_S:.0f} s")
            chunk = os.read(self._from_worker, 65536)
            if not chunk:
                self._stderr.seek(0)
                err = self._stderr.read().decode(errors="replace")[-3000:]
                raise RuntimeError(f"the worker closed the protocol; its stderr:\n{err}")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def shutdown(self) -> float:
        """Seconds from the shutdown message to the process's exit."""
        t = time.perf_counter()
        self.send({"type": "shutdown"})
        self.proc.wait(timeout=60)
        return time.perf_counter() - t


def evaluate(worker: Worker, backend: str) -> tuple[float, str]:
    """(seconds from request to result, result status), answering lease requests."""
    candidate = CANDIDATES[backend]
    t = time.perf_counter()
    worker.send({"type": "eval", "id": "1", "backend": backend,
                 "problem": {"path": str(PROBLEM), "source": PROBLEM.read_text()},
                 "candidate": {"path": str(candidate), "source": candidate.read_text()}})
    while True:
        msg = worker.receive()
        if msg.get("type") == "lease" and msg.get("op") == "acquire":
            worker.send({"type": "lease_granted", "id": "1"})
        elif msg.get("type") == "result":
            return time.perf_counter() - t, str(msg["result"].get("status"))


def one_run(python: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ks-worker-start-") as scratch:
        worker = Worker(python, scratch)
        hello = worker.receive()
        hello_s = time.perf_counter() - worker.started
        backend = "triton" if hello.get("cuda_available") else "cpu"
        eval_s, status = evaluate(worker, backend)
        exit_s = worker.shutdown()
    phases = hello.get("start_phases", [])
    in_worker = sum(p["s"] for p in phases)
    return {"hello_s": round(hello_s, 3),
            "interpreter_s": round(hello_s - in_worker, 3),  # exec, site, the first line
            "start_phases": phases, "backend": backend, "first_eval_s": round(eval_s, 3),
            "eval_status": status, "exit_s": round(exit_s, 3), "device": hello.get("device")}


def one_off(binary: str, backend: str) -> dict[str, Any]:
    """Wall time of `binary eval` (the whole command: worker start, eval, shutdown)."""
    env = dict(os.environ, KS_RESOURCE_DIR=str(CHECKOUT[0]))
    t = time.perf_counter()
    done = subprocess.run([binary, "eval", str(PROBLEM), str(CANDIDATES[backend]), "--backend",
                           backend, "--json"], env=env, capture_output=True, text=True,
                          timeout=DEADLINE_S)
    wall = time.perf_counter() - t
    try:
        result = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise RuntimeError(f"{binary} eval printed no result (exit {done.returncode}):\n"
                           f"{done.stderr[-3000:]}")
    return {"one_off_eval_s": round(wall, 3), "status": result.get("status"),
            "duration_s": result.get("duration_s"), "exit_code": done.returncode}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--python", default=os.environ.get("KS_PYTHON", sys.executable))
    ap.add_argument("--binary", help="also time `BINARY eval` of the same pair")
    ap.add_argument("--out", help="also write the JSON here")
    ap.add_argument("--checkout", default=str(ROOT),
                    help="the checkout whose python/ worker runs (default: this one)")
    args = ap.parse_args()
    CHECKOUT[0] = Path(args.checkout).resolve()
    runs = [one_run(args.python) for _ in range(args.runs)]
    report: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "host": platform.node(),
        "command": " ".join([Path(sys.argv[0]).name] + sys.argv[1:]),
        "checkout": str(CHECKOUT[0]), "runs": runs}
    if args.binary:
        report["one_off"] = [one_off(args.binary, runs[0]["backend"]) for _ in range(args.runs)]
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
