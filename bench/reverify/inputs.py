#!/usr/bin/env python3
"""Does the evaluator's steady-state block read slower than do_bench_cudagraph because of its
inputs (a different input set per call, L2 flushed per sample) or because of the clock?

usage: inputs.py PROBLEM.py CANDIDATE.py
Prints one JSON object. For the candidate and the reference, a CUDA graph of 10 calls is
replayed back to back for 0.5 s after 0.25 s alone, in four settings, twice in the order
same, rotating, same+flush, rotating+flush:
  same      one input set for all 10 calls (what do_bench_cudagraph times)
  rotating  10 input sets, one per call (the evaluator's timed slots)
  +flush    a 256 MB write before each replay (the evaluator's L2 flush)
Each row: median us per call, and the mean SM clock (MHz) and power (W) over its window where
NVML is readable."""
from __future__ import annotations

import importlib.util
import json
import statistics
import sys
import threading
import time

import torch

CALLS = 10


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


class Nvml:
    def __init__(self) -> None:
        try:
            import pynvml
            pynvml.nvmlInit()
            self.nv, self.h = pynvml, pynvml.nvmlDeviceGetHandleByIndex(0)
        except Exception:  # noqa: BLE001 - no NVML: figures without clocks
            self.nv = None
        self.rows: list[tuple[int, float]] = []

    def __enter__(self):
        self.rows, self.stop = [], False
        if self.nv:
            self.t = threading.Thread(target=self.loop, daemon=True)
            self.t.start()
        return self

    def loop(self) -> None:
        while not self.stop:
            clk = self.nv.nvmlDeviceGetClockInfo(self.h, self.nv.NVML_CLOCK_SM)
            pw = self.nv.nvmlDeviceGetPowerUsage(self.h) / 1000.0
            self.rows.append((clk, pw))
            time.sleep(0.005)

    def __exit__(self, *exc) -> None:
        self.stop = True
        if self.nv:
            self.t.join()

    def summary(self) -> dict:
        if not self.rows:
            return {}
        return {"mhz": round(statistics.mean(r[0] for r in self.rows)),
                "w": round(statistics.mean(r[1] for r in self.rows))}


def graph_of(fn, sets):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for xs in sets[:2]:
            fn(*xs)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        outs = [fn(*sets[j % len(sets)]) for j in range(CALLS)]
    return g, outs


def measure(g, flush, seconds, nvml):
    buf = torch.empty(64 * 1024 * 1024, dtype=torch.int32, device="cuda") if flush else None
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 0.25:  # alone first: its own sustained state
        if buf is not None:
            buf.zero_()
        g.replay()
    torch.cuda.synchronize()
    times = []
    with nvml:
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            if buf is not None:
                buf.zero_()
            e0.record()
            g.replay()
            e1.record()
            e1.synchronize()
            times.append(e0.elapsed_time(e1) * 1000.0 / CALLS)
    return {"us": statistics.median(times), "n": len(times), **nvml.summary()}


def main() -> None:
    P, C = load(sys.argv[1], "prob"), load(sys.argv[2], "cand")
    torch.manual_seed(123)
    init = P.get_init_inputs()
    torch.manual_seed(0)
    ref = P.Model(*init).cuda()
    torch.manual_seed(0)
    new = C.ModelNew(*init).cuda()
    if list(ref.state_dict()) == list(new.state_dict()):
        new.load_state_dict(ref.state_dict())
    torch.manual_seed(7)
    sets = [[t.cuda() if isinstance(t, torch.Tensor) else t for t in P.get_inputs()]
            for _ in range(CALLS)]
    nvml = Nvml()
    out: dict = {"device": torch.cuda.get_device_name(), "rows": []}
    with torch.no_grad():
        graphs = {}
        for who, fn in (("cand", new), ("ref", ref)):
            graphs[who, "same"] = graph_of(fn, sets[:1])
            graphs[who, "rotating"] = graph_of(fn, sets)
        for rep in range(2):
            for who in ("cand", "ref"):
                for setting in ("same", "rotating"):
                    for flush in (False, True):
                        row = measure(graphs[who, setting][0], flush, 0.5, nvml)
                        row.update(who=who, setting=setting + ("+flush" if flush else ""),
                                   rep=rep)
                        out["rows"].append(row)
                        print(json.dumps(row), file=sys.stderr, flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
