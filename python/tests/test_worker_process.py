"""The real worker process, driven over its protocol descriptors."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import CASES, PYTHON_DIR, SOFTMAX


class Worker:
    """Spawns `python -m kernelsmith_worker` as the engine does (fds via KS_PROTO_IN/OUT)."""

    def __init__(self, scratch: Path) -> None:
        req_r, self._req_w = os.pipe()
        self._res_r, res_w = os.pipe()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PYTHON_DIR), str(CASES)]), KS_PROTO_IN=str(req_r),
                   KS_PROTO_OUT=str(res_w), TMPDIR=str(scratch))
        self.stdout_path, self.stderr_path = scratch / "stdout.txt", scratch / "stderr.txt"
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen([sys.executable, "-m", "kernelsmith_worker"], cwd=scratch,
                                         env=env, pass_fds=(req_r, res_w),
                                         stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                         start_new_session=True)
        os.close(req_r)
        os.close(res_w)
        self._buf = b""

    def _stderr_tail(self) -> str:
        return self.stderr_path.read_text(errors="replace")[-3000:]

    def send(self, msg: dict[str, Any]) -> None:
        os.write(self._req_w, (json.dumps(msg) + "\n").encode())

    def receive(self, timeout: float = 120.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._res_r], [], [], max(0.0, left))
            if not ready:
                raise TimeoutError(f"no protocol line; stderr:\n{self._stderr_tail()}")
            chunk = os.read(self._res_r, 65536)
            if not chunk:
                raise EOFError(f"worker closed the protocol; stderr:\n{self._stderr_tail()}")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def eval(self, request: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Sends request, grants leases, returns (result message, every message before it)."""
        self.send(request)
        seen: list[dict[str, Any]] = []
        while True:
            msg = self.receive()
            if msg["type"] == "result":
                return msg, seen
            seen.append(msg)
            if msg["type"] == "lease" and msg["op"] == "acquire":
                self.send({"type": "lease_granted", "id": msg["id"]})

    def close(self) -> int:
        self.send({"type": "shutdown"})
        try:
            return self.proc.wait(timeout=60)
        finally:
            os.close(self._req_w)
            os.close(self._res_r)


def eval_request(rid: str, candidate: Path, problem: Path, **kw: Any) -> dict[str, Any]:
    return {"type": "eval", "id": rid, "backend": "cpu", "trials": 2, "tolerance": "default",
            "seed": 42, "timing": False,
            "problem": {"path": str(problem), "source": problem.read_text()},
            "candidate": {"path": str(candidate), "source": candidate.read_text()}, **kw}


@pytest.fixture()
def worker(tmp_path):
    w = Worker(tmp_path)
    yield w
    if w.proc.poll() is None:
        w.proc.kill()
        w.proc.wait()


def test_hello_eval_shutdown(worker):
    hello = worker.receive()
    assert hello["type"] == "hello" and hello["protocol"] == 1
    assert hello["pid"] == worker.proc.pid
    assert "cpu" in hello["backends"] and hello["device"]["kind"] in ("cpu", "cuda")
    assert hello["torch"] and hello["python"]

    result, seen = worker.eval(eval_request("a1", SOFTMAX / "cpu_candidate.py",
                                            SOFTMAX / "problem.py"))
    assert result["id"] == "a1" and result["worker_poisoned"] is False
    assert result["result"]["status"] == "ok", result["result"]["message"]
    assert [m["stage"] for m in seen if m["type"] == "stage"] == ["load", "correctness", "audit"]
    assert all(m["id"] == "a1" for m in seen)

    bad, _ = worker.eval({"type": "eval", "id": "a2", "backend": "cpu"})
    assert bad["result"]["status"] == "infra_error"
    assert "bad eval request" in bad["result"]["message"]

    exit_hack, _ = worker.eval(eval_request("a3", CASES / "cpu_sys_exit.py",
                                            CASES / "problem_softmax_small.py"))
    assert exit_hack["result"]["status"] == "runtime_error"
    assert worker.close() == 0


def test_chatty_candidate_does_not_corrupt_the_protocol(worker):
    assert worker.receive()["type"] == "hello"
    result, seen = worker.eval(eval_request("p1", CASES / "cpu_prints.py",
                                            CASES / "problem_softmax_small.py"))
    assert result["id"] == "p1"
    assert result["result"]["status"] == "ok", result["result"]["message"]
    assert all(m["type"] in ("stage", "lease") for m in seen)
    assert worker.close() == 0
    stdout = worker.stdout_path.read_text()
    assert "forward noise" in stdout and '{"type": "result", "id": "fake"}' in stdout
    assert len(stdout) > 200000


def test_timing_request_uses_the_lease(worker):
    assert worker.receive()["type"] == "hello"
    result, seen = worker.eval(eval_request("t1", CASES / "cpu_honest.py",
                                            CASES / "problem_softmax_small.py", timing=True))
    # the reference timed alone in the load stage, then the timing stage: each under the lease
    order = [m.get("stage") or m.get("op") for m in seen if m["type"] in ("stage", "lease")]
    assert order == ["load", "acquire", "release", "correctness", "audit", "acquire", "timing",
                     "release"]
    res = result["result"]
    assert res["status"] == "ok", res.get("message")
    assert res["speedup"] is not None and res["speedup"] > 0  # timed, not just correct
    assert worker.close() == 0


def test_hello_reports_the_start_phases(worker):
    hello = worker.receive()
    phases = [p["phase"] for p in hello["start_phases"]]
    assert phases[:2] == ["import torch", "import worker modules"]
    assert "integrity snapshot" in phases and phases[-1] == "hello"
    assert all(p["s"] >= 0 for p in hello["start_phases"])
    assert sum(p["s"] for p in hello["start_phases"]) > 0.1  # torch cannot import in less
    assert worker.close() == 0


def test_dynamo_imported_by_a_candidate_is_not_tampering(worker):
    """The snapshot is taken without torch._dynamo loaded: a candidate importing it (which
    rebinds torch.manual_seed to torch's wrapper) is honest, and the worker stays usable;
    that wrapper around another function, or redirected through its cache (before or after
    it is in place), is tampering; the next request is not blamed for the first."""
    assert worker.receive()["type"] == "hello"
    problem = CASES / "problem_softmax_small.py"
    trap, _ = worker.eval(eval_request("d0", CASES / "cpu_tamper_seed_trap.py", problem))
    assert trap["result"]["status"] == "hacked", trap["result"]["message"]
    assert "manual_seed was redirected (its __dynamo_disable was set)" in trap["result"]["message"]
    lazy, _ = worker.eval(eval_request("d1", CASES / "cpu_lazy_dynamo.py", problem))
    assert lazy["result"]["status"] == "ok", lazy["result"]["message"]
    assert lazy["worker_poisoned"] is False
    # with the wrapper in place (d1 imported dynamo)
    for i, case in enumerate(("cpu_tamper_seed_cache.py", "cpu_tamper_seed_wrapper.py")):
        hack, _ = worker.eval(eval_request(f"d{i + 2}", CASES / case, problem))
        assert hack["result"]["status"] == "hacked", (case, hack["result"]["message"])
        assert "evaluator_tampering" in hack["result"]["message"], case
        assert "manual_seed was re" in hack["result"]["message"], case  # replaced, redirected
    again, _ = worker.eval(eval_request("d4", CASES / "cpu_honest.py", problem))
    assert again["result"]["status"] == "ok", again["result"]["message"]
    assert worker.close() == 0
