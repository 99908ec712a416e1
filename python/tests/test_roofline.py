"""Roofline: the work of known problems (FLOPs by class, minimum bytes), the measured device
peaks and their cache, and the roofline record of an evaluation (lazy optimization)."""

from __future__ import annotations

import json

import pytest
import torch

from conftest import CASES, run_eval, use_cache_dir
from kernelsmith_worker import device_peaks
from kernelsmith_worker.roofline_work import forward_work

F32 = 4  # bytes per fp32 element


class MatMul(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b


class Softmax(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


# Matmul and convolution FLOPs and every byte count are exact (tolerance 0): they follow from
# the shapes alone. Softmax and layer norm follow the stated per-element conventions.
def test_matmul_flops_are_2mnk_and_bytes_read_a_b_write_c():
    m, k, n = 96, 40, 24
    w = forward_work(MatMul(), [torch.randn(m, k), torch.randn(k, n)])
    assert w.flops == {"fp32": 2 * m * n * k}
    assert w.bytes == F32 * (m * k + k * n + m * n)


def test_bf16_matmul_is_its_own_class():
    w = forward_work(MatMul(), [torch.randn(16, 8).bfloat16(), torch.randn(8, 4).bfloat16()])
    assert w.flops == {"bf16": 2 * 16 * 4 * 8}
    assert w.bytes == 2 * (16 * 8 + 8 * 4 + 16 * 4)


def test_softmax_is_five_flops_per_element_and_reads_and_writes_once():
    x = torch.randn(32, 256)
    w = forward_work(Softmax(), [x])
    assert w.flops == {"fp32": 5 * x.numel()}
    assert w.bytes == 2 * F32 * x.numel()


def test_layernorm_counts_parameters_and_eight_flops_per_element():
    model = torch.nn.LayerNorm(128)
    x = torch.randn(16, 128)
    w = forward_work(model, [x])
    assert w.flops == {"fp32": 8 * x.numel()}
    assert w.bytes == F32 * (2 * x.numel() + 2 * 128)  # x, y, weight, bias


def test_conv2d_flops_and_bytes():
    model = torch.nn.Conv2d(3, 8, kernel_size=3, bias=False)
    x = torch.randn(2, 3, 18, 18)
    w = forward_work(model, [x])
    out = 2 * 8 * 16 * 16
    assert w.flops == {"fp32": 2 * out * 3 * 3 * 3}
    assert w.bytes == F32 * (x.numel() + 8 * 3 * 3 * 3 + out)


def test_an_input_passed_twice_is_read_once():
    x = torch.randn(8, 8)
    w = forward_work(MatMul(), [x, x])
    assert w.bytes == F32 * (64 + 64)


def test_peaks_are_measured_then_cached_per_device(tmp_path, monkeypatch):
    use_cache_dir(monkeypatch, tmp_path)
    monkeypatch.setattr(device_peaks, "BUDGET_S", 0.05)
    calls = []
    real = device_peaks.measure
    monkeypatch.setattr(device_peaks, "measure", lambda dev: calls.append(dev) or real(dev))
    dev = torch.device("cpu")
    first = device_peaks.peaks(dev)
    assert calls == [dev] and first["cached"] is False and first["datasheet"] is None
    assert first["bw_bytes_per_s"] > 1e8  # any CPU copies faster than 100 MB/s
    assert set(first["flops_per_s"]) == {"fp32", "bf16", "fp16"}
    assert all(v > 1e7 for v in first["flops_per_s"].values())
    assert 0 < first["launch_us"] < 1e4
    second = device_peaks.peaks(dev)
    assert calls == [dev] and second["cached"] is True
    assert second["bw_bytes_per_s"] == first["bw_bytes_per_s"]
    files = list((tmp_path / "roofline").glob("peaks-*.json"))
    assert len(files) == 1
    # A cache file written for another key is not used.
    data = json.loads(files[0].read_text())
    data["key"]["threads"] = -1
    files[0].write_text(json.dumps(data))
    assert device_peaks.peaks(dev)["cached"] is False and len(calls) == 2


def test_datasheets_only_for_named_parts():
    assert device_peaks.datasheet_for("NVIDIA H100 80GB HBM3")["name"] == "H100 SXM"
    assert device_peaks.datasheet_for("NVIDIA H200")["name"] == "H200"
    assert device_peaks.datasheet_for("NVIDIA H100 PCIe") is None
    assert device_peaks.datasheet_for("NVIDIA A100-SXM4-80GB") is None


def _timed(ctx, monkeypatch, candidate, problem):
    from test_timing_stage import fake_time_pair

    time_pair, _ = fake_time_pair()
    monkeypatch.setattr(ctx, "time_pair", time_pair)
    result, _, _ = run_eval(ctx, CASES / candidate, problem=CASES / problem, timing=True)
    assert result["status"] == "ok", result["message"]
    return result["roofline"]


def test_evaluation_records_work_peaks_and_candidate_torch_work(worker_ctx, monkeypatch):
    r = _timed(worker_ctx, monkeypatch, "cpu_honest.py", "problem_softmax_small.py")
    assert r["error"] is None
    assert r["work"] == {"flops": {"fp32": 5 * 32 * 64}, "bytes": 2 * F32 * 32 * 64}
    assert r["peaks"]["bw_bytes_per_s"] > 0 and "fp32" in r["peaks"]["flops_per_s"]
    assert r["candidate_torch"]["flops"] == 0 and r["candidate_torch"]["bytes"] == 0
    assert r["custom_device_share"] is None  # not measured on the cpu backend


def test_lazy_candidate_leaves_the_work_to_torch_ops(worker_ctx, monkeypatch):
    n = 32 * 64
    honest = _timed(worker_ctx, monkeypatch, "cpu_pointwise_chain.py",
                    "problem_pointwise_chain.py")
    assert honest["work"]["flops"] == {"fp32": 6 * n}  # sin, cos, mul, scale, add, relu
    assert honest["candidate_torch"]["flops"] == 0
    lazy = _timed(worker_ctx, monkeypatch, "cpu_lazy.py", "problem_pointwise_chain.py")
    assert lazy["candidate_torch"]["flops"] == 5 * n  # all but the relu
    assert lazy["candidate_torch"]["bytes"] >= 2 * F32 * n
    assert {"aten.sin", "aten.cos", "aten.mul", "aten.add"} <= set(lazy["candidate_torch"]["ops"])


def test_no_roofline_without_timing(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_honest.py")
    assert result["roofline"] is None


def test_the_peak_measurement_leaves_torchs_tf32_setting_in_every_form():
    # Setting allow_tf32, even back to its own value, turns fp32_precision from 'none' into
    # 'ieee': the integrity guard then blamed the next candidate (evaluator_tampering).
    from kernelsmith_worker import integrity

    cmm = torch.backends.cuda.matmul
    before = {k: get() for k, (get, _) in integrity._settings().items()
              if k.startswith("torch.backends.cuda.matmul")}
    with device_peaks._tf32_setting_kept():
        cmm.allow_tf32 = True
        cmm.allow_tf32 = False
    after = {k: get() for k, (get, _) in integrity._settings().items()
             if k.startswith("torch.backends.cuda.matmul")}
    assert after == before
