"""Timing of candidates whose calls return outputs over shared memory: one call per sample,
so every timed call is a checked one (fake CUDA device of test_timing)."""

from __future__ import annotations

import torch

from test_timing import FakeDevice, Kernel, busy, run_fake


class SkipsAllButLast(Kernel):
    """One shared output buffer; each captured call gets an id, and the first eager call after
    a capture marks every id of that capture but the last as 'skip' (a device flag the
    captured op reads at replay): replays then do only one call's work."""

    def __init__(self, dev, us):
        super().__init__(dev, us)
        self.out, self.skip, self.run, self.next = torch.empty(8), set(), [], 0

    def __call__(self):
        if self.dev.capturing is None:
            self.skip |= set(self.run[:-1])
            self.run = []
            busy(self.us)
            self.out.fill_(self.value)
            return self.out
        cid, self.next = self.next, self.next + 1
        self.run.append(cid)

        def op():
            if cid not in self.skip:
                busy(self.us)
                self.out.fill_(self.value)
        self.dev.launch(op)
        return self.out


def test_fake_cuda_shared_output_is_timed_one_call_per_replay():
    dev = FakeDevice()
    rec = run_fake(Kernel(dev, 40), SkipsAllButLast(dev, 40), dev)
    assert rec["ok"], rec
    assert rec["method"] == "cuda_graph"
    assert rec["calls_per_sample"] == 1
    assert "aliased_outputs" in [f["kind"] for f in rec["findings"]]
    assert rec["speedup"] < 1.6  # not the k-fold 'speedup' of skipped calls


def test_fake_cuda_shared_output_in_eager_timing_is_one_call_per_sample():
    dev = FakeDevice()

    class SharedEager(Kernel):
        """Not capturable; every call writes and returns the same buffer."""
        def __init__(self, dev, us):
            super().__init__(dev, us, capturable=False)
            self.out = torch.empty(8)

        def __call__(self):
            if self.dev.capturing is not None:
                raise RuntimeError("CUDA error: operation not permitted when stream is capturing")
            busy(self.us)
            self.out.fill_(self.value)
            return self.out
    rec = run_fake(Kernel(dev, 40), SharedEager(dev, 40), dev)
    assert rec["ok"], rec
    assert rec["method"] == "cuda_events"
    assert rec["calls_per_sample"] == 1
    kinds = {f["kind"]: f["severity"] for f in rec["findings"]}
    assert kinds.get("aliased_outputs") == "info"
    assert "timed_output_aliasing" not in kinds
