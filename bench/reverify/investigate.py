#!/usr/bin/env python3
"""Why does kernelsmith time compute-heavy candidates faster than a steady-state harness?

usage: investigate.py PROBLEM.py CANDIDATE.py [--quick]
Prints one JSON object: the evaluator's own timing (time_pair) under several settings, the
independent steady-state figure (triton.testing.do_bench_cudagraph, as the re-verification
harness uses it), and per-replay traces of the candidate's CUDA graph (back to back, after a
reference replay, after idle) with SM clock and power where NVML is readable."""
from __future__ import annotations

import importlib.util
import json
import statistics
import sys
import threading
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
from kernelsmith_worker.timing import time_pair  # noqa: E402
from kernelsmith_worker.timing_policy import TimingConfig  # noqa: E402


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


class Sampler:
    """SM clock (MHz) and power (W) every ~2 ms through NVML, in a thread."""

    def __init__(self) -> None:
        self.rows: list[tuple[float, int, float]] = []
        self.ok = True
        try:
            import pynvml  # noqa: F401
            pynvml.nvmlInit()
            self.h = pynvml.nvmlDeviceGetHandleByIndex(0)
            self.nv = pynvml
        except Exception as e:  # noqa: BLE001
            self.ok, self.err = False, repr(e)

    def __enter__(self):
        self.stop = False
        if self.ok:
            self.t = threading.Thread(target=self.loop, daemon=True)
            self.t.start()
        return self

    def loop(self) -> None:
        nv = self.nv
        while not self.stop:
            c = nv.nvmlDeviceGetClockInfo(self.h, nv.NVML_CLOCK_SM)
            p = nv.nvmlDeviceGetPowerUsage(self.h) / 1000.0
            self.rows.append((time.perf_counter(), c, p))
            time.sleep(0.002)

    def __exit__(self, *a):
        self.stop = True
        if self.ok:
            self.t.join()

    def summary(self, t0: float, t1: float) -> dict:
        r = [x for x in self.rows if t0 <= x[0] <= t1]
        if not r:
            return {}
        return {"sm_mhz_median": statistics.median(x[1] for x in r),
                "sm_mhz_min": min(x[1] for x in r), "power_w_median": statistics.median(x[2] for x in r),
                "power_w_max": max(x[2] for x in r)}


def graph_of(fn, k: int):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn(); fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(k):
            fn()
    torch.cuda.synchronize()
    return g


def replay_trace(g, n: int, k: int, before=None) -> list[float]:
    """n replays, events around each (ms per call); before() is queued before each replay."""
    evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
    for a, b in evs:
        if before is not None:
            before()
        a.record(); g.replay(); b.record()
    torch.cuda.synchronize()
    return [a.elapsed_time(b) / k for a, b in evs]


def main() -> None:
    prob, cand = load(sys.argv[1], "prob"), load(sys.argv[2], "cand")
    quick = "--quick" in sys.argv
    dev = torch.device("cuda")
    init = prob.get_init_inputs()
    torch.manual_seed(0)
    with torch.device(dev):
        ref = prob.Model(*init).to(dev)
    torch.manual_seed(0)
    with torch.device(dev):
        new = cand.ModelNew(*init).to(dev)
    torch.manual_seed(7)
    with torch.device(dev):
        xs = [t.to(dev) if isinstance(t, torch.Tensor) else t for t in prob.get_inputs()]
    xr = [t.clone() if isinstance(t, torch.Tensor) else t for t in xs]
    xc = [t.clone() if isinstance(t, torch.Tensor) else t for t in xs]

    def rf():
        with torch.no_grad():
            return ref(*xr)

    def cf():
        with torch.no_grad():
            return new(*xc)

    out: dict = {"case": Path(sys.argv[2]).parent.name, "device": torch.cuda.get_device_name()}
    with torch.no_grad():
        err = (rf().float() - cf().float()).abs().max().item()
    out["max_abs_err"] = err
    configs = {"default": TimingConfig(), "no_l2_flush": TimingConfig(l2_flush_factor=0.0),
               "replay_100ms": TimingConfig(replay_target_s=0.1, max_replay_s=0.6)}
    from triton.testing import do_bench_cudagraph
    sampler = Sampler()
    out["nvml"] = sampler.ok or sampler.err
    with sampler:
        for name, cfg in configs.items():
            t0 = time.perf_counter()
            rec = time_pair(rf, cf, device=dev, seed=1, config=cfg)
            t1 = time.perf_counter()
            out[f"ks_{name}"] = {k: rec.get(k) for k in ("ref_us", "cand_us", "speedup", "speedup_ci95",
                                                          "calls_per_sample", "samples", "method",
                                                          "warmup_s")}
            out[f"ks_{name}"]["clocks"] = sampler.summary(t0, t1)
        with torch.no_grad():
            t0 = time.perf_counter()
            tr = [do_bench_cudagraph(rf, rep=200) for _ in range(3)]
            t1 = time.perf_counter()
            tn = [do_bench_cudagraph(cf, rep=200) for _ in range(3)]
            t2 = time.perf_counter()
        out["steady_graph"] = {"ref_us": 1e3 * statistics.median(tr), "cand_us": 1e3 * statistics.median(tn),
                               "speedup": statistics.median(tr) / statistics.median(tn),
                               "ref_clocks": sampler.summary(t0, t1), "cand_clocks": sampler.summary(t1, t2)}
        # per-replay traces of the candidate graph (~3 ms per replay, like the evaluator's samples)
        with torch.no_grad():
            one = do_bench_cudagraph(cf, rep=20) * 1e-3
            k = max(1, int(3e-3 / one))
            gc_ = graph_of(cf, k)
            gr = graph_of(rf, max(1, int(3e-3 / (do_bench_cudagraph(rf, rep=20) * 1e-3))))
            time.sleep(0.5)
            t0 = time.perf_counter()
            back = replay_trace(gc_, 300 if quick else 700, k)
            t1 = time.perf_counter()
            after_ref = replay_trace(gc_, 100, k, before=gr.replay)
            t2 = time.perf_counter()
            idle = []
            for _ in range(10):
                time.sleep(0.1)
                idle += replay_trace(gc_, 1, k)

        def pts(v):
            return {str(i): round(1e3 * statistics.median(v[i:i + 5]), 2)
                    for i in (0, 5, 10, 20, 40, 80, 160, 300, 600) if i + 5 <= len(v)}
        out["trace_k"] = k
        out["trace_back_to_back_us"] = pts(back)
        out["trace_back_to_back_clocks"] = sampler.summary(t0, t1)
        out["trace_after_ref_us"] = round(1e3 * statistics.median(after_ref), 2)
        out["trace_after_ref_clocks"] = sampler.summary(t1, t2)
        out["trace_after_idle_us"] = round(1e3 * statistics.median(idle), 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
