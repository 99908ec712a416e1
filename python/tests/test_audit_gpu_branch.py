"""The audit's CUDA branch, driven by a fake profile (no GPU needed)."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

import torch

from kernelsmith_worker import gpu_profile
from kernelsmith_worker.audit import AuditInputs, run_audit
from kernelsmith_worker.correctness import TOLERANCES
from kernelsmith_worker.gpu_profile import KernelProfile
from kernelsmith_worker.inputs import TrialData
from kernelsmith_worker.launches import LaunchRecorder


class _Source:
    def pristine(self, trial: int) -> TrialData:
        return TrialData([torch.full((4, 4), float(trial))])

    def reference(self, trial: int) -> Any:
        return torch.full((4, 4), float(trial)) * 2


def _audit(monkeypatch, profile: KernelProfile) -> tuple[dict, dict[str, str]]:
    monkeypatch.setattr(gpu_profile, "profile_forward", lambda call, names, hooked=None, again=None: (call(), profile)[1])
    rec = LaunchRecorder()

    def run_candidate(args: list[Any], mode: Any = None) -> Any:
        with torch.no_grad(), (mode if mode is not None else nullcontext()):
            y = torch.empty_like(args[0])  # a CUDA C++ kernel would fill it: invisible to hooks
            y.copy_(args[0] * 2)
        return y

    a = AuditInputs(backend="cuda", dev=torch.device("cuda"), recorder=rec,
                    run_candidate=run_candidate, kernel_names=lambda: {"my_kernel"},
                    source=_Source(), tolerance=TOLERANCES["default"], correct=True,
                    constant_trials=None, interpret=False)
    record, found = run_audit(a)
    return record, {f["kind"]: f["severity"] for f in found}


def test_profiled_custom_kernels_count_as_launches(monkeypatch):
    prof = KernelProfile(total_us=10.0, custom_us=9.0, custom_launches=1,
                         custom_names={"my_kernel"}, kernels=2, marker_stream=7)
    record, kinds = _audit(monkeypatch, prof)
    assert record["custom_launches"] == 1 and record["custom_kernels"] == ["my_kernel"]
    assert record["custom_device_share"] == 0.9
    assert "no_custom_kernel" not in kinds
    assert kinds.get("torch_compute_light") == "warn"  # the aten.mul next to the kernel


def test_side_stream_and_low_share(monkeypatch):
    prof = KernelProfile(total_us=10.0, custom_us=2.0, custom_launches=1,
                         custom_names={"my_kernel"}, kernels=2, marker_stream=7,
                         side_streams={13: ["my_kernel(float*)"]})
    _, kinds = _audit(monkeypatch, prof)
    assert kinds["forked_stream"] == "warn" and "side_stream" not in kinds
    assert kinds["low_custom_share"] == "warn"


def test_forked_stream_is_allowed_only_when_timed_in_a_cuda_graph():
    from kernelsmith_worker.audit import untimed_fork_findings

    forked = [{"kind": "forked_stream", "detail": "", "severity": "warn"}]
    assert untimed_fork_findings(forked, "cuda_graph") == []  # the capture proves the join
    for method in ("cuda_events", None):  # eager timing, or no timing record
        (f,) = untimed_fork_findings(forked, method)
        assert f["kind"] == "side_stream" and f["severity"] == "reject"
    assert untimed_fork_findings([], "cuda_events") == []


def test_no_profiled_kernel_is_rejected(monkeypatch):
    prof = KernelProfile(total_us=10.0, kernels=1, marker_stream=7)
    record, kinds = _audit(monkeypatch, prof)
    assert kinds["no_custom_kernel"] == "reject" and kinds["torch_compute"] == "reject"
    assert record["custom_device_share"] == 0.0


class _Range:
    def __init__(self, us: float) -> None:
        self._us = us

    def elapsed_us(self) -> float:
        return self._us


class _Event:
    def __init__(self, name: str, stream: int, us: float) -> None:
        self.name, self.device_resource_id, self.time_range = name, stream, _Range(us)


def test_classify_events():
    events = [
        _Event("void at::cuda::(anonymous namespace)::spin_kernel(long)", 7, 50.0),
        _Event("softmax_rows_kernel(float const*, float*, int)", 7, 30.0),
        _Event("void at::native::vectorized_elementwise_kernel<4>(...)", 7, 10.0),
        _Event("softmax_rows_kernel(float const*, float*, int)", 21, 5.0),
        _Event("void at::native::copy_kernel_impl<float>(...)", 7, 5.0),
    ]
    prof = gpu_profile.classify_events(events, {"softmax_rows_kernel"}, markers=1)
    assert prof.marker_stream == 7 and prof.kernels == 4
    assert prof.total_us == 50.0 and prof.custom_us == 35.0 and prof.custom_launches == 2
    assert prof.share() == 0.7
    assert list(prof.side_streams) == [21]


def test_only_the_markers_the_evaluator_launched_are_left_out():
    events = [_Event("void at::cuda::(anonymous namespace)::spin_kernel(long)", 7, 50.0),
              _Event("spin_kernel_gemm", 7, 30.0),  # a candidate kernel named like the marker
              _Event("void at::cuda::(anonymous namespace)::spin_kernel(long)", 7, 20.0)]
    prof = gpu_profile.classify_events(events, {"spin_kernel_gemm"}, markers=1)
    assert prof.kernels == 2 and prof.custom_launches == 1 and prof.total_us == 50.0


def test_library_kernels_and_foreign_share_are_rejected():
    from kernelsmith_worker.gpu_profile import classify_events, foreign_findings
    from types import SimpleNamespace as NS

    def ev(name, us):
        return NS(name=name, device_resource_id=7, time_range=NS(elapsed_us=lambda: us))

    names = {"my_kernel"}
    lib = classify_events([ev("my_kernel", 1.0), ev("sm90_xmma_gemm_f32f32_tf32", 9.0)], names)
    assert [f["kind"] for f in foreign_findings(lib, "x")] == ["foreign_compute"]
    # a Triton kernel named like the library kernel counts only as often as the hooks saw it
    spoof = classify_events([ev("sm90_xmma_gemm", 1.0), ev("sm90_xmma_gemm", 9.0)],
                            {"sm90_xmma_gemm"}, {"sm90_xmma_gemm": 1})
    assert spoof.library and spoof.custom_launches == 1
    glue = classify_events([ev("my_kernel", 9.0), ev("at::native::FillFunctor<float>", 1.0)],
                           names)
    assert foreign_findings(glue, "x") == []
    # a "copy" taking most of the time is not a copy (a renamed kernel doing the work)
    heavy = classify_events([ev("my_kernel", 1.0), ev("at::native::FillFunctor<float>", 9.0)],
                            names)
    assert [f["kind"] for f in foreign_findings(heavy, "x")] == ["glue_compute"]
    other = classify_events([ev("my_kernel", 1.0), ev("some_other_kernel", 3.0)], names)
    assert [f["severity"] for f in foreign_findings(other, "x")] == ["reject"]


def test_a_timed_sample_that_batches_or_skips_calls_is_rejected():
    from kernelsmith_worker.gpu_profile import timed_findings

    own = {"mm_kernel"}
    honest = [["mm_kernel", 10.0]] * 8 + [["void at::native::FillFunctor<float>", 1.0]]
    assert timed_findings(honest, own, calls=8, per_call=1) == []
    batched = [["mm_kernel", 60.0]]  # 8 calls, one launch computing all of them
    found = timed_findings(batched, own, calls=8, per_call=1)
    assert [f["kind"] for f in found] == ["timed_launch_deficit"]
    assert found[0]["severity"] == "reject" and "8 timed calls launched 1" in found[0]["detail"]
    # no per-call figure (CPU, or no profile in the audit): nothing to compare
    assert timed_findings(batched, own, calls=8, per_call=0) == []
