"""The kernel log's set-up: where it finds CUPTI and its headers, what it says when it cannot
start. Recording itself needs a CUDA device (bench/kernel_log/overhead.py checks it there)."""
from pathlib import Path

import pytest

from kernelsmith_worker import kernel_log


def test_headers_are_found_beside_a_pip_package_or_a_toolkit(tmp_path):
    pip = tmp_path / "nvidia" / "cu13"
    (pip / "lib").mkdir(parents=True)
    (pip / "include").mkdir()
    (pip / "include" / "cupti.h").write_text("")
    assert kernel_log._headers_for(pip / "lib" / "libcupti.so.13") == pip / "include"
    toolkit = tmp_path / "cuda" / "extras" / "CUPTI"
    (toolkit / "lib64").mkdir(parents=True)
    (toolkit / "include").mkdir()
    (toolkit / "include" / "cupti.h").write_text("")
    assert kernel_log._headers_for(toolkit / "lib64" / "libcupti.so") == toolkit / "include"
    assert kernel_log._headers_for(tmp_path / "lib" / "libcupti.so") is None


def test_a_worker_without_a_device_has_no_log_and_says_why():
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA machine: the log starts there")
    assert kernel_log.start() is None
    assert kernel_log.current() is None
    assert "could not start" in kernel_log.why_not()


def test_the_recorder_compiles_against_the_cupti_torch_ships(tmp_path, monkeypatch):
    monkeypatch.setenv("KS_CACHE_DIR", str(tmp_path))
    lib = kernel_log._loaded_cupti()
    if lib is None or kernel_log._headers_for(lib) is None:
        pytest.skip("this torch has no libcupti with headers (a CPU build)")
    path, cupti = kernel_log.build()
    assert Path(path).is_file() and cupti == lib
