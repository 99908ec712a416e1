"""compiled_code: libraries exporting inductor's AOT container ABI, mapped by the candidate."""

from __future__ import annotations

import ctypes
import shutil

import pytest

from conftest import use_cache_dir
from kernelsmith_worker import cpu_ext
from kernelsmith_worker.compiled_code import (CompiledCodeWatch, compiled_model_findings,
                                              mapped_libraries)

# The ABI every AOT-compiled model exports (torch/csrc/inductor/aoti_runtime/interface.h).
AOTI_LIKE = r"""
extern "C" int AOTInductorModelContainerCreateWithDevice(void**, unsigned long, const char*,
                                                         const char*) { return 0; }
extern "C" int AOTInductorModelContainerRun(void*) { return 0; }
"""
OWN = r"""
extern "C" int own_kernel(int x) { return x + 1; }
"""


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    use_cache_dir(monkeypatch, tmp_path)
    return tmp_path


def test_aoti_model_loaded_after_the_baseline_is_found(cache):
    path, _ = cpu_ext.build("aoti_like", AOTI_LIKE)
    watch = CompiledCodeWatch()
    assert watch.new() == []
    ctypes.CDLL(str(path))
    found = watch.new()
    assert len(found) == 1 and str(path) in found[0] and "AOTInductorModelContainer" in found[0]


def test_deleted_libraries_are_judged_by_their_mapped_code(cache, tmp_path):
    # Deleted after loading (another worker rewrote a shared cache's file, or the candidate
    # hid it): an own library passes, an AOT model is still found in its mapped segments.
    own, _ = cpu_ext.build("own_lib", OWN)
    aoti, _ = cpu_ext.build("aoti_gone", AOTI_LIKE)
    # (named so that writing them is no library file opened by candidate code: library_reach)
    own_copy, aoti_copy = tmp_path / "gone.so.copy", tmp_path / "model_gone.so.copy"
    shutil.copy(own, own_copy)
    shutil.copy(aoti, aoti_copy)
    watch = CompiledCodeWatch()
    ctypes.CDLL(str(own))
    assert watch.new() == []
    ctypes.CDLL(str(own_copy))
    own_copy.unlink()
    assert watch.new() == []
    ctypes.CDLL(str(aoti_copy))
    aoti_copy.unlink()
    found = watch.new()
    assert len(found) == 1 and "model_gone.so" in found[0] and "deleted" in found[0] \
        and "AOTInductorModelContainer" in found[0]


def test_a_deleted_library_that_cannot_be_read_is_a_finding(tmp_path):
    maps = tmp_path / "maps"
    maps.write_text("7f20-7f30 r--p 00000000 fe:00 2   /tmp/x/model.so (deleted)\n")
    found = compiled_model_findings({"/tmp/x/model.so (deleted)"}, str(maps))
    assert len(found) == 1 and "cannot be checked" in found[0]


def test_mapped_libraries_reads_maps(tmp_path):
    maps = tmp_path / "maps"
    maps.write_text("7f00-7f10 r-xp 00000000 fe:00 1   /usr/lib/libc.so.6\n"
                    "7f10-7f20 rw-p 00000000 00:00 0   [heap]\n"
                    "7f20-7f30 r-xp 00000000 fe:00 2   /tmp/x/model.so (deleted)\n")
    assert mapped_libraries(str(maps)) == {"/usr/lib/libc.so.6", "/tmp/x/model.so (deleted)"}
    assert mapped_libraries(str(tmp_path / "absent")) == set()
