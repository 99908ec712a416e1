"""What the worker's always-on kernel log (CUPTI kernel, memcpy and memset records) costs,
and that it sees what it must. Run on a CUDA machine from the repository root:

    PYTHONPATH=python python bench/kernel_log/overhead.py [--checks]

Times the same workloads in a process with the log and in one without (alternating, three
pairs), as CUDA-graph replays of k calls and as eager launches, and graph replays with the
log paused (as the timing stage replays its graphs), and prints per-call times and the
ratio. The "with" process also checks what the log recorded: eager and graph kernels,
a side stream, and that a CPU-only torch.profiler session leaves the log working."""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys

WORKLOADS = {
    "relu 16x16384": lambda torch: (torch.relu, [torch.rand(16, 16384, device="cuda")]),
    "softmax 16x16384": lambda torch: (lambda x: torch.softmax(x, -1),
                                       [torch.rand(16, 16384, device="cuda")]),
    "layernorm 4096x1024": lambda torch: (
        lambda x: torch.nn.functional.layer_norm(x, (1024,)),
        [torch.rand(4096, 1024, device="cuda")]),
    "matmul 4096^3": lambda torch: (torch.mm, [torch.rand(4096, 4096, device="cuda"),
                                               torch.rand(4096, 4096, device="cuda")]),
    # a device-to-device memcpy (torch copies contiguous same-dtype tensors with one)
    "clone 4096x1024": lambda torch: (torch.clone, [torch.rand(4096, 1024, device="cuda")]),
}


def _time(torch, fn, args, graph: bool, k: int, reps: int = 30,
          timed_in=contextlib.nullcontext) -> float:
    for _ in range(3):
        fn(*args)
    torch.cuda.synchronize()
    if graph:
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            fn(*args)
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            for _ in range(k):
                fn(*args)
        run = g.replay
    else:
        def run():
            for _ in range(k):
                fn(*args)
    with timed_in():
        for _ in range(5):
            run()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        times = []
        for _ in range(reps):
            e0.record()
            run()
            e1.record()
            e1.synchronize()
            times.append(e0.elapsed_time(e1) * 1e3 / k)
    return statistics.median(times)


def child(with_log: bool) -> dict:
    import torch

    out: dict = {"times": {}}
    log = None
    if with_log:
        from kernelsmith_worker import kernel_log

        torch.cuda.init()
        log = kernel_log.start()
        out["log"] = log is not None
        out["why_not"] = kernel_log.why_not() if log is None else ""
    for name, make in WORKLOADS.items():
        fn, args = make(torch)
        k = 20 if "matmul" in name or "layernorm" in name else 100
        for graph in (True, False):
            out["times"][f"{name} {'graph' if graph else 'eager'}"] = _time(torch, fn, args,
                                                                            graph, k)
        # the timing stage pauses the log while it replays its graphs
        # captured while recording, replayed with CUPTI detached
        paused = log.paused if log is not None else contextlib.nullcontext
        out["times"][f"{name} graph, log paused"] = _time(torch, fn, args, True, k,
                                                          timed_in=paused)
    if log is not None:
        out["checks"] = checks(torch, log)
    return out


def checks(torch, log) -> dict:
    """What the log records, and that it notices records switched off behind its back."""
    import ctypes

    from kernelsmith_worker import kernel_log

    def window() -> object:
        torch.cuda.synchronize()
        try:
            return sum(g.count for g in log.take())
        except kernel_log.KernelLogError as e:
            return f"error: {e}"

    x = torch.rand(1024, 1024, device="cuda")
    res: dict = {}
    window()
    for _ in range(7):
        torch.relu(x)
    res["eager_7_relu"] = window()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(5):
            torch.relu(x)
    res["capture_5_relu"] = window()  # launches into a capture run nothing: not counted
    g.replay()
    g.replay()
    res["graph_2x5_relu"] = window()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.mm(x, x)
    torch.cuda.synchronize()
    groups = log.take()
    res["side_stream"] = [(gr.name[:40], gr.stream, gr.count) for gr in groups]
    res["main_stream"] = torch.cuda.current_stream().stream_id
    for _ in range(3):
        torch.mm(x, x)
    res["cublas_3_mm"] = window()
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]):
        torch.relu(x)
    try:
        window()
    except Exception:  # noqa: BLE001
        pass
    log.restart()
    window()
    for _ in range(3):
        torch.relu(x)
    res["restarted_3_relu"] = window()
    with log.paused():
        torch.relu(x)
    for _ in range(2):
        torch.relu(x)
    res["paused_1_then_2_relu"] = window()
    # a candidate switching the records off around a cuBLAS call, through libcupti
    cupti = ctypes.CDLL(str(kernel_log._loaded_cupti()))
    cupti.cuptiActivityDisable(10)  # CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
    torch.mm(x, x)
    cupti.cuptiActivityEnable(10)
    torch.relu(x)
    res["records_off_around_mm"] = window()
    # ... or through the log's own library
    lib = log._lib
    lib.ks_klog_pause()
    torch.mm(x, x)
    lib.ks_klog_resume()
    res["log_paused_by_candidate"] = window()
    res["after"] = window()
    res["records"], res["dropped"] = log.records(), log.dropped()
    return res


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2] == "1")))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--checks":  # the checks alone, no timing
        import torch

        from kernelsmith_worker import kernel_log

        torch.cuda.init()
        log = kernel_log.start()
        print("log started:", log is not None, kernel_log.why_not() if log is None else "")
        if log is not None:
            print("checks:", json.dumps(checks(torch, log)))
        return
    runs: dict[str, list[dict]] = {"0": [], "1": []}
    for _ in range(3):
        for flag in ("0", "1"):
            p = subprocess.run([sys.executable, __file__, "--child", flag], capture_output=True,
                               text=True, env=os.environ, check=False)
            if p.returncode != 0:
                print(p.stderr[-3000:])
                sys.exit(1)
            runs[flag].append(json.loads(p.stdout.strip().splitlines()[-1]))
    print("log started:", runs["1"][0].get("log"), runs["1"][0].get("why_not"))
    print("checks:", json.dumps(runs["1"][0].get("checks")))
    print(f"| workload | without log us | with log us | ratio |\n|---|---|---|---|")
    for key in runs["0"][0]["times"]:
        a = statistics.median(r["times"][key] for r in runs["0"])
        b = statistics.median(r["times"][key] for r in runs["1"])
        print(f"| {key} | {a:.3f} | {b:.3f} | {b / a:.4f} |")


if __name__ == "__main__":
    main()
