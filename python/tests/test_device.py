"""The CPU thread policy: both sides of a CPU timing get KS_CPU_THREADS threads (default 1)."""

from __future__ import annotations

import pytest
import torch

from kernelsmith_worker.device import DEFAULT_CPU_THREADS, apply_cpu_threads, cpu_threads


def test_cpu_threads_default_and_setting(monkeypatch):
    monkeypatch.delenv("KS_CPU_THREADS", raising=False)
    assert cpu_threads() == DEFAULT_CPU_THREADS == 1
    monkeypatch.setenv("KS_CPU_THREADS", "3")
    assert cpu_threads() == 3


@pytest.mark.parametrize("bad", ["0", "-2", "two", "1.5"])
def test_a_bad_cpu_threads_setting_is_a_clear_error(monkeypatch, bad):
    monkeypatch.setenv("KS_CPU_THREADS", bad)
    with pytest.raises(ValueError, match="KS_CPU_THREADS"):
        cpu_threads()


def test_apply_gives_torch_and_openmp_the_same_count(monkeypatch):
    before = torch.get_num_threads()
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    try:
        apply_cpu_threads(1)
        assert torch.get_num_threads() == 1
        import os
        assert os.environ["OMP_NUM_THREADS"] == "1"
    finally:
        torch.set_num_threads(before)
