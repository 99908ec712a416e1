"""Evaluation latency and throughput client for `kernelsmith serve` (stdlib only).

Posts /v1/evaluate for the cpu (or GPU) candidate of examples/colsum, each request made unique
by a trailing comment so the cluster's idempotent results are not reused; prints one JSON line.
`overhead_ms_*`: each request's latency minus the worker's own time for the evaluation (the
EvalResult's duration_s): what the service and the dispatch add, resolvable even where the
evaluation itself takes seconds and varies by hundreds of milliseconds.

    python3 bench/cluster/evals.py --url http://127.0.0.1:8080 --n 30 --clients 1
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--n", type=int, default=30, help="evaluations")
    ap.add_argument("--clients", type=int, default=1, help="requests at once")
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--candidate", default=str(REPO / "examples/colsum/cpu_seed.py"))
    ap.add_argument("--problem", default=str(REPO / "examples/colsum/problem.py"))
    ap.add_argument("--tag", default=str(time.time_ns()))
    ap.add_argument("--dump", help="append each EvalResult's stage durations here (JSON lines)")
    a = ap.parse_args()
    problem = Path(a.problem).read_text()
    cand = Path(a.candidate).read_text()
    lat: list[float] = []
    over: list[float] = []  # latency minus the worker's own evaluation time (duration_s)
    statuses: dict[str, int] = {}
    lock = threading.Lock()
    counter = iter(range(a.n))

    def client() -> None:
        while True:
            with lock:
                i = next(counter, None)
            if i is None:
                return
            body = {"problem_source": problem, "candidate_source": f"{cand}\n# {a.tag}-{i}\n",
                    "backend": a.backend, "trials": 2}
            req = urllib.request.Request(a.url + "/v1/evaluate", json.dumps(body).encode(),
                                         {"Content-Type": "application/json"})
            t0 = time.perf_counter()
            with urllib.request.urlopen(req, timeout=600) as r:
                res = json.load(r)
            dt = time.perf_counter() - t0
            with lock:
                if a.dump:
                    stages = {k: v.get("duration_s") for k, v in res.get("stages", {}).items()
                              if isinstance(v, dict)}
                    with open(a.dump, "a") as f:
                        f.write(json.dumps({"latency_s": round(dt, 3), "status": res["status"],
                                            "stages": stages,
                                            "timing": {k: res.get("stages", {}).get("timing", {})
                                                       .get(k) for k in ("samples", "method",
                                                                         "calls_per_sample")}})
                                + "\n")
                lat.append(dt)
                if isinstance(res.get("duration_s"), (int, float)):
                    over.append(dt - float(res["duration_s"]))
                statuses[res["status"]] = statuses.get(res["status"], 0) + 1

    t0 = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(a.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    print(json.dumps({"n": a.n, "clients": a.clients, "wall_s": round(wall, 3),
                      "evals_per_s": round(a.n / wall, 3),
                      "latency_ms_mean": round(1000 * statistics.mean(lat), 2),
                      "latency_ms_median": round(1000 * statistics.median(lat), 2),
                      "overhead_ms_median": round(1000 * statistics.median(over), 2)
                      if over else None,
                      "overhead_ms_p90": round(1000 * sorted(over)[int(0.9 * (len(over) - 1))], 2)
                      if over else None,
                      "statuses": statuses}))


if __name__ == "__main__":
    main()
