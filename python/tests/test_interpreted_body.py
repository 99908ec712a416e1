"""Kernel bodies run by Triton's interpreter (TRITON_INTERPRET=1, set by conftest) run with the
host-call watch's profile function off; the launcher around them and candidate code outside
them stay watched (interpreted_body.py)."""
from __future__ import annotations

import sys

import torch
import triton
import triton.language as tl

from kernelsmith_worker import launches
from kernelsmith_worker.event_watch import EventWatch

_PROFILES: list[object] = []  # sys.getprofile() as each program of a launch saw it


def _probe() -> None:
    _PROFILES.append(sys.getprofile())


@triton.jit
def _double(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    _probe()
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


def test_the_profile_function_is_off_inside_an_interpreted_body_and_back_after():
    rec = launches.LaunchRecorder()
    before = launches._Installed.recorder
    launches.install(rec)
    x = torch.arange(40, dtype=torch.float32)
    out = torch.empty_like(x)
    grid_saw: list[object] = []

    def grid(meta):  # the launcher's Python: runs on a GPU too, and stays watched
        grid_saw.append(sys.getprofile())
        torch._C._len_torch_dispatch_stack()
        return (triton.cdiv(40, meta["BLOCK"]),)

    _PROFILES.clear()
    try:
        with EventWatch(rec, host_calls=True) as w:
            _double[grid](x, out, 40, BLOCK=16)
            after = sys.getprofile()
            out.numpy()  # candidate code outside the body: a host call, seen
    finally:
        launches._Installed.recorder = before
    assert torch.equal(out, x * 2)
    assert _PROFILES == [None, None, None]  # three programs, none watched
    assert grid_saw == [w._profile]
    assert after == w._profile
    assert any("_len_torch_dispatch_stack" in s for s in w.seen.get("introspection", []))
    assert w.seen.get("host_compute") == ["Tensor.numpy() on a [40] tensor"]
    assert dict(rec.counts) == {"_double": 1}
    assert sys.getprofile() is None  # the watch ended
