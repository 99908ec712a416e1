"""Native code a candidate brings (native_builds.py): torch extensions refused outside the cuda
backend, and every library mapped during a request judged by the builder that made it."""
from __future__ import annotations

import os
import time
import types

import pytest

from kernelsmith_worker import cpu_ext, library_code, native_builds


@pytest.fixture(autouse=True)
def _request():
    native_builds.at_worker_start()
    yield
    native_builds.request_backend("")
    library_code.clear()


def _fake_extension_module() -> types.ModuleType:
    ext = types.ModuleType("fake_cpp_extension")
    ext.load_inline = lambda *a, **k: "built"
    ext.load = lambda *a, **k: "built"
    native_builds.install(ext)
    native_builds.install(ext)  # once: not wrapped twice
    return ext


def test_torch_extensions_are_refused_to_other_backends_than_cuda():
    ext = _fake_extension_module()
    for backend in ("cpu", "triton"):
        native_builds.request_backend(backend)
        with pytest.raises(native_builds.NativeBuildRefused, match="cuda backend's"):
            ext.load_inline("x", "int f();")
        with pytest.raises(native_builds.NativeBuildRefused):
            ext.load("x", ["x.cpp"])
    assert any("load_inline" in r for r in library_code.refusals())  # a reject, whatever next
    native_builds.request_backend("cuda")
    assert ext.load_inline("x", "int f();") == "built"
    assert not hasattr(ext.load_inline, "__wrapped__") or ext.load_inline.__wrapped__ is not None


def _write_library(path) -> None:
    """A file named like a library (written under another name: library_reach's hook, once
    installed by another test, refuses opening a .so from a test's frame)."""
    path.with_suffix(".bin").write_bytes(b"\x7fELF")
    os.rename(path.with_suffix(".bin"), path)


def test_libraries_mapped_during_a_request_are_judged_by_their_builder(tmp_path, monkeypatch):
    since = time.time_ns()
    time.sleep(0.01)
    native_builds.request_backend("cpu")
    own = tmp_path / "libown.so"
    _write_library(own)  # written during the request, by no builder
    assert native_builds.foreign({str(own)}, since) == [f"{own} (written during the request)"]
    assert native_builds.foreign({f"{own} (deleted)"}, since) == [f"{own} (loaded, then deleted)"]
    # an installed library that was there before the request
    libc = "/lib/x86_64-linux-gnu/libc.so.6"
    if os.path.exists(libc):
        assert native_builds.foreign({libc}, since) == []
    # an old file outside installed folders
    assert native_builds.foreign({str(own)}, time.time_ns() + 10**9) == [
        f"{own} (outside installed packages and the system library folders)"]
    # a file named like Triton's launcher in its shared cache is no builder's: Triton's host
    # modules are built by the worker in a folder of its own (test_triton_hosts.py)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    launcher = tmp_path / "ab12" / "__triton_launcher.cpython-312-x86_64-linux-gnu.so"
    launcher.parent.mkdir()
    _write_library(launcher)
    assert len(native_builds.foreign({str(launcher), f"{launcher} (deleted)"}, since)) == 2
    # the cuda backend's extension of this request
    native_builds.extension_loaded(str(own))
    assert native_builds.foreign({str(own)}, since) == []
    native_builds.request_backend("cpu")  # a new request forgets it
    assert len(native_builds.foreign({str(own)}, since)) == 1


def test_a_checked_cpu_ext_library_is_the_builders():
    since = time.time_ns()
    lib = cpu_ext.load("ks_native_probe", 'extern "C" int f() { return 3; }', {"f": "int()"})
    assert native_builds.foreign({str(lib.path)}, since) == []


def test_the_checked_record_cannot_be_changed_through_closures():
    # the record is a vault: reachable from checked_library's closure, but writable only by
    # cpu_ext's own record() when build() or load() called it
    cells = [c.cell_contents for c in cpu_ext.checked_library.__closure__ or ()]
    vaults = [c for c in cells if type(c).__name__ == "Vault"]
    assert vaults
    with pytest.raises(PermissionError):
        vaults[0].put("/tmp/libforged.so", (0, 0, 0, 0, 0))
    assert not cpu_ext.checked_library("/tmp/libforged.so")
