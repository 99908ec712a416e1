"""Op classes and the torch-compute rules of the dispatch-level audit."""

from __future__ import annotations

import torch

from kernelsmith_worker.audit import OpCounter, torch_compute_findings, trial_findings
from kernelsmith_worker.correctness import CorrectnessOutcome
from kernelsmith_worker.launches import LaunchRecorder
from kernelsmith_worker.integrity import IntegrityGuard
from kernelsmith_worker.opclass import ALLOWED_CLASSES, classify, format_ops


def test_classify():
    assert classify("aten.mm") == "heavy"
    assert classify("aten._softmax") == "heavy"
    assert classify("aten.native_layer_norm") == "heavy"
    assert classify("aten.sum") == "heavy"
    assert classify("aten.convolution") == "heavy"
    assert classify("aten.upsample_bilinear2d") == "heavy"
    assert classify("aten.add") == "light"
    assert classify("aten.relu_") == "light"
    assert classify("aten.view") == "view"
    assert classify("aten.empty_like") == "alloc"
    assert classify("aten.fill_") == "alloc"
    assert classify("aten.clone") == "copy"
    assert classify("aten._to_copy") == "copy"
    assert classify("myext.softmax") == "custom"


def test_classify_allow_list():
    # Light only when known to be light: torch's pointwise tag or the data-movement list.
    assert classify("aten.addcmul_") == "light"  # pointwise by torch's tag, not by a list
    assert classify("aten.gather") == "light"
    assert classify("aten.constant_pad_nd") == "light"
    assert classify("aten.permute_copy") == "copy"
    assert classify("aten.unsqueeze_") == "view"  # in-place variants classed like their op
    assert classify("aten.eye") == "alloc"
    # Anything else is compute the candidate did not write: a batched GEMM in _trilinear, a
    # reduction in dist, and ops no list names.
    assert classify("aten._trilinear") == "heavy"
    assert classify("aten.dist") == "heavy"
    assert classify("aten.fancy_new_gemm") == "unlisted"
    assert classify("aten.cholesky_solve") == "unlisted"


def test_ops_without_tensors_are_state_reads_not_compute():
    # Taking and returning no tensor, an op cannot compute on the problem's data: the
    # integrity guard's reading of the cuFFT plan cache's size (on CUDA, after every call,
    # inside the counted window) must not read as torch compute.
    assert classify("aten._cufft_get_plan_cache_max_size") == "view"
    assert classify("aten._cufft_clear_plan_cache") == "view"
    assert classify("aten.cholesky_solve") == "unlisted"  # takes tensors
    guard = IntegrityGuard()
    counter = OpCounter(None)
    with counter:
        assert guard.changes(True) == []
    assert all(classify(op) in ALLOWED_CLASSES for op in counter.counts), counter.counts


def test_unlisted_op_next_to_a_launch_is_rejected():
    def kinds(counts, launches):
        return {(f["kind"], f["severity"]) for f in torch_compute_findings(counts, launches)}

    assert kinds({"aten.cholesky_solve": 1, "aten.add": 1}, 2) == {
        ("torch_compute", "reject"), ("torch_compute_light", "warn")}
    detail = torch_compute_findings({"aten.cholesky_solve": 1}, 1)[0]["detail"]
    assert "not known to be light" in detail and "aten.cholesky_solve x1" in detail
    outcome = CorrectnessOutcome(record={}, call_ops=[({"aten.cholesky_solve": 1}, 1)])
    assert [f["kind"] for f in trial_findings(outcome)] == ["torch_compute"]


def test_trilinear_gemm_is_counted_and_rejected():
    # F.bilinear's op computing x @ W^T: the dispatch-level audit must reject it.
    counter = OpCounter(LaunchRecorder())
    x, w = torch.randn(8, 16), torch.randn(4, 16)
    with torch.no_grad(), counter:
        y = torch.ops.aten._trilinear(x, w.t(), torch.ones(16), [2], [0], [0, 2], [1])
    torch.testing.assert_close(y, x @ w.t())
    found = torch_compute_findings(dict(counter.counts), 1)
    assert [(f["kind"], f["severity"]) for f in found] == [("torch_compute", "reject")]
    assert "aten._trilinear" in found[0]["detail"]


def test_rules():
    def kinds(counts, launches):
        return {(f["kind"], f["severity"]) for f in torch_compute_findings(counts, launches)}

    assert kinds({"aten.mm": 1}, 0) == {("torch_compute", "reject")}
    assert kinds({"aten.add": 2}, 0) == {("torch_compute", "reject")}
    assert kinds({"aten.mm": 1}, 3) == {("torch_compute", "reject")}
    assert kinds({"aten.add": 1}, 1) == {("torch_compute_light", "warn")}
    assert kinds({"aten.clone": 1, "aten.view": 2, "aten.empty": 1}, 1) == {("torch_copy", "info")}
    assert kinds({"aten.view": 1}, 0) == set()
    detail = torch_compute_findings({"aten.mm": 1, "aten.add": 3}, 0)[0]["detail"]
    assert "[aten.add x3, aten.mm x1]" in detail
    assert format_ops({f"aten.op{i}": 1 for i in range(10)}, limit=2).endswith("8 more]")


def test_op_counter_counts_candidate_ops_inside_launches():
    # only Triton's own code inside a launch is exempt (test_observer_switches.py): an op
    # candidate code issues there (a grid callable, a launch hook) is the candidate's
    rec = LaunchRecorder()
    counter = OpCounter(rec)
    x = torch.randn(4, 4)
    with torch.no_grad(), counter:
        torch.softmax(x, 1)
        with rec.launch("kernel"):
            x.clone()
    assert counter.counts == {"aten._softmax": 1, "aten.clone": 1}
    assert rec.counts == {"kernel": 1}
