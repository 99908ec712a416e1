"""Reward-throughput load generator for `kernelsmith serve` (stdlib only).

N client threads post /v1/reward batches for a fixed time; prints one JSON line of figures.
Completions are SEARCH/REPLACE edits of examples/softmax/triton_candidate.py (block size and
warp count variants, plus one prose reply), so rewards mix faster, slower and unparsable.

    python3 bench/serve/load.py --url http://127.0.0.1:8080 --clients 8 --batch 8 --seconds 60
"""

from __future__ import annotations

import argparse
import itertools
import json
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def completions(parent: str) -> list[str]:
    out = []
    for block, warps in itertools.product((256, 512, 1024, 4096), (2, 4, 8)):
        out.append(
            "Try another tile.\n```\n<<<<<<< SEARCH\nBLOCK_SIZE = 2048\n=======\n"
            f"BLOCK_SIZE = {block}\n>>>>>>> REPLACE\n```\n"
            + (
                f"```\n<<<<<<< SEARCH\nNUM_WARPS = {current_warps(parent)}\n=======\n"
                f"NUM_WARPS = {warps}\n>>>>>>> REPLACE\n```\n"
                if warps != current_warps(parent)
                else ""
            )
        )
    out.append("I would fuse the two passes.")  # no code: parse_error
    return out


def current_warps(parent: str) -> int:
    for line in parent.splitlines():
        if line.startswith("NUM_WARPS = "):
            return int(line.split("=")[1].split("#")[0])
    return 4


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--backend", default="triton")
    args = ap.parse_args()

    problem = (REPO / "examples/softmax/problem.py").read_text()
    parent = (REPO / "examples/softmax/triton_candidate.py").read_text()
    truth = json.dumps(
        {"problem_id": "softmax", "reference_code": problem, "parent_code": parent,
         "backend": args.backend}
    )
    pool = completions(parent)
    lock = threading.Lock()
    latencies: list[float] = []
    statuses: dict[str, int] = {}
    rewards: list[float] = []
    refused = 0
    errors: list[str] = []
    stop_at = time.monotonic() + args.seconds
    counter = itertools.count()

    def client() -> None:
        nonlocal refused
        while time.monotonic() < stop_at:
            items = [
                {"completion": pool[next(counter) % len(pool)], "ground_truth": truth}
                for _ in range(args.batch)
            ]
            data = json.dumps({"items": items}).encode()
            req = urllib.request.Request(
                args.url + "/v1/reward", data=data, headers={"Content-Type": "application/json"}
            )
            t0 = time.monotonic()
            try:
                with urllib.request.urlopen(req, timeout=1800) as r:
                    body = json.loads(r.read())
            except urllib.error.HTTPError as e:
                if e.code == 429:
                    with lock:
                        refused += 1
                    time.sleep(float(e.headers.get("Retry-After") or 1))
                    continue
                with lock:
                    errors.append(f"HTTP {e.code}: {e.read()[:200]!r}")
                return
            dt = time.monotonic() - t0
            with lock:
                latencies.append(dt)
                for res in body["results"]:
                    statuses[res["status"]] = statuses.get(res["status"], 0) + 1
                    rewards.append(res["reward"])

    t0 = time.monotonic()
    threads = [threading.Thread(target=client) for _ in range(args.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    lat = sorted(latencies)

    def q(p: float) -> float:
        return lat[min(len(lat) - 1, max(0, int(p * len(lat) + 0.5) - 1))] if lat else 0.0

    print(json.dumps({
        "clients": args.clients, "batch": args.batch, "wall_s": round(wall, 2),
        "rewards": len(rewards), "rewards_per_s": round(len(rewards) / wall, 3),
        "p50_s": round(q(0.5), 3), "p99_s": round(q(0.99), 3), "statuses": statuses,
        "mean_reward": round(sum(rewards) / len(rewards), 4) if rewards else None,
        "refused_429": refused, "errors": errors[:3],
    }))


if __name__ == "__main__":
    main()
