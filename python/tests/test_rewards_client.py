"""kernelsmith_rewards adapters against a stdlib HTTP stub and, when KS_SERVE_BINARY names a
built `kernelsmith`, against a real `kernelsmith serve --backend cpu`."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from kernelsmith.rewards import (
    RewardClient,
    RewardServiceError,
    compute_score,
    compute_score_async,
    compute_score_batch,
    make_trl_reward,
)

REPO = Path(__file__).resolve().parents[2]
TRUTH = json.dumps({"problem_id": "p", "reference_code": "R", "parent_code": "P", "backend": "cpu"})


class Stub:
    """Answers /v1/reward with reward = len(completion); the first `busy` calls get 429."""

    def __init__(self, busy: int = 0, status: int = 200) -> None:
        self.requests: list[dict] = []
        self.busy = busy
        self.status = status
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append({"path": self.path, "body": body})
                if stub.busy > 0:
                    stub.busy -= 1
                    self.answer(429, {"error": {"message": "queue full"}}, {"Retry-After": "0"})
                elif stub.status != 200:
                    self.answer(stub.status, {"error": {"message": "missing \"items\""}})
                else:
                    results = [
                        {"reward": float(len(i["completion"])), "status": "ok"}
                        for i in body["items"]
                    ]
                    self.answer(200, {"rewards": [r["reward"] for r in results], "results": results})

            def answer(self, code, body, headers=None):
                data = json.dumps(body).encode()
                self.send_response(code)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stub():
    s = Stub()
    yield s
    s.close()


def test_the_older_name_is_an_alias_of_kernelsmith_rewards():
    import importlib.util

    import kernelsmith.rewards
    import kernelsmith_rewards
    from kernelsmith_rewards.client import RewardClient as OldClient
    from kernelsmith_rewards.verl import compute_score as old_score

    assert kernelsmith_rewards is kernelsmith.rewards
    assert OldClient is RewardClient and old_score is compute_score
    # verl loads custom_reward_function.path as a file: the old path still yields the functions
    old_path = REPO / "python" / "kernelsmith_rewards" / "verl.py"
    spec = importlib.util.spec_from_file_location("old_verl_file", old_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert callable(module.compute_score) and callable(module.compute_score_batch)


def test_verl_compute_score_posts_one_item(stub):
    assert compute_score("kernelsmith", "abcd", TRUTH, {"index": 0}, url=stub.url) == 4.0
    item = stub.requests[0]["body"]["items"][0]
    assert stub.requests[0]["path"] == "/v1/reward"
    assert item == {"completion": "abcd", "ground_truth": TRUTH}


def test_verl_async_and_batch(stub):
    async def many():
        return await asyncio.gather(
            *(compute_score_async("ks", "x" * n, TRUTH, None, url=stub.url) for n in (1, 2, 3))
        )

    assert sorted(asyncio.run(many())) == [1.0, 2.0, 3.0]
    assert compute_score_batch(["ks"] * 2, ["ab", "abc"], [TRUTH, TRUTH], url=stub.url) == [2.0, 3.0]
    assert len(stub.requests[-1]["body"]["items"]) == 2  # one request for the batch


def test_trl_reward_reads_the_label_column_and_conversational_completions(stub):
    reward = make_trl_reward(url=stub.url)
    completions = [[{"role": "assistant", "content": "abc"}], [{"role": "assistant", "content": "z"}]]
    assert reward(completions, label=[TRUTH, TRUTH], prompt=["p1", "p2"]) == [3.0, 1.0]
    # verl's layout works too.
    assert reward(["ab"], reward_model=[{"style": "rule", "ground_truth": TRUTH}]) == [2.0]
    with pytest.raises(KeyError, match="label"):
        reward(["ab"], prompt=["p"])


def test_queue_full_is_retried_after_retry_after():
    s = Stub(busy=2)
    try:
        assert RewardClient(s.url).rewards(["abc"], [TRUTH]) == [3.0]
        assert len(s.requests) == 3
    finally:
        s.close()


def test_bad_request_raises_with_the_servers_message():
    s = Stub(status=400)
    try:
        with pytest.raises(RewardServiceError, match='missing \\\\"items\\\\"|missing "items"'):
            RewardClient(s.url).rewards(["abc"], [TRUTH])
    finally:
        s.close()


def test_unreachable_service_says_so():
    client = RewardClient("http://127.0.0.1:9", retries=0)
    with pytest.raises(RewardServiceError, match="kernelsmith serve"):
        client.rewards(["abc"], [TRUTH])


# --- against the real service ---------------------------------------------------------------

BINARY = os.environ.get("KS_SERVE_BINARY")


@pytest.fixture
def real_service():
    if not BINARY:
        pytest.skip("set KS_SERVE_BINARY=path/to/kernelsmith to test against the real service")
    proc = subprocess.Popen(
        [BINARY, "serve", "--backend", "cpu", "--port", "0", "--trials", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    line = proc.stdout.readline()
    match = re.search(r"http://[\d.]+:(\d+)", line)
    if not match:
        proc.kill()
        pytest.fail(f"serve did not start: {line}{proc.stdout.read()}")
    yield f"http://127.0.0.1:{match.group(1)}"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0


def test_real_service_rewards_a_faster_child(real_service):
    seed = (REPO / "examples/colsum/cpu_seed.py").read_text()
    truth = json.dumps(
        {
            "problem_id": "colsum",
            "reference_code": (REPO / "examples/colsum/problem.py").read_text(),
            "parent_code": seed,
            "backend": "cpu",
        }
    )
    faster = "```\n<<<<<<< SEARCH\nBLOCK = 1  # ks:tune BLOCK=[1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]\n=======\nBLOCK = 256\n>>>>>>> REPLACE\n```"
    results = RewardClient(real_service).score([faster, "no code"], [truth, truth])
    assert results[0]["status"] == "ok", results[0]
    assert results[0]["parent_baseline"] == "interleaved"
    assert results[0]["reward"] > 1.0, results[0]
    assert results[1]["status"] == "parse_error" and results[1]["reward"] == 0.0
    reward = make_trl_reward(url=real_service)
    assert reward(["no code"], label=[truth]) == [0.0]
