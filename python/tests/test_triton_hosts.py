"""Triton's host modules built by the worker for itself (triton_hosts.py): only a module this
worker built for Triton's own code, unchanged since, is accepted as Triton's."""
from __future__ import annotations

import glob
import importlib.util
import os
import shutil
import subprocess
import sys
import time
import types

import pytest

from kernelsmith_worker import native_builds, triton_hosts

triton_build = pytest.importorskip("triton.runtime.build")
if shutil.which("gcc") is None and shutil.which("clang") is None:
    pytest.skip("no C compiler", allow_module_level=True)

# plain C (no Python.h): built, not imported
_SOURCE = "int ks_triton_hosts_probe(void) { return 7; }\n"
_TRITON_FILE = os.path.join(os.path.dirname(triton_build.__file__), "ks_test_caller.py")


def _build_module() -> types.SimpleNamespace:
    """triton.runtime.build's functions, with a module loader for plain C and an original
    compile_module_from_src of its own (so install patches no real Triton module)."""
    def original(*_a, **_k):
        raise AssertionError("the original must not be called once installed")

    def load(name, path):  # not loaded: the tests judge files, and another test's ctypes hook
        return types.SimpleNamespace(__file__=path)  # refuses lookups from test frames

    fake = types.SimpleNamespace(_build=triton_build._build, platform_key=triton_build.platform_key,
                                 _load_module_from_path=load, compile_module_from_src=original)
    triton_hosts.install(fake)
    return fake


def _as_triton(fake: types.SimpleNamespace, src: str, name: str):
    """Calls compile_module_from_src from a frame under Triton's installed file name, as
    Triton's driver does."""
    scope = {"fake": fake, "src": src, "name": name}
    exec(compile("mod = fake.compile_module_from_src(src, name)", _TRITON_FILE, "exec"), scope)
    return scope["mod"]


def test_modules_triton_asks_for_are_built_once_in_the_workers_folder_and_accepted():
    fake = _build_module()
    before = triton_hosts._Setup.builds
    mod = _as_triton(fake, _SOURCE, "__triton_launcher")
    assert os.path.getsize(mod.__file__) > 0
    path = os.path.realpath(mod.__file__)
    assert path.startswith(str(triton_hosts._Setup.root) + os.sep)
    assert triton_hosts.genuine(path)
    assert native_builds.foreign({path}, time.time_ns() - 10**9) == []
    again = _as_triton(fake, _SOURCE, "__triton_launcher")
    assert os.path.realpath(again.__file__) == path and triton_hosts._Setup.builds == before + 1


def test_a_module_changed_on_disk_is_no_longer_triton_s_and_is_built_again():
    fake = _build_module()
    src = _SOURCE + "int ks_triton_hosts_changed(void) { return 1; }\n"
    path = os.path.realpath(_as_triton(fake, src, "__triton_launcher").__file__)
    planted = path + ".planted"  # written under another name: another test's ctypes hook
    with open(planted, "wb") as f:  # refuses opening a .so from a test's frame
        f.write(b"\x7fELF planted")
    os.replace(planted, path)  # another file in its place, as a candidate would put it
    assert not triton_hosts.genuine(path)
    assert len(native_builds.foreign({path}, time.time_ns() - 10**9)) == 1
    rebuilt = os.path.realpath(_as_triton(fake, src, "__triton_launcher").__file__)
    assert rebuilt == path and triton_hosts.genuine(path)


def test_candidate_code_calling_the_builder_itself_or_with_a_build_hook_gets_no_genuine_module(
        monkeypatch):
    fake = _build_module()
    src = _SOURCE + "int ks_triton_hosts_candidate(void) { return 2; }\n"
    mine = fake.compile_module_from_src(src, "__triton_launcher")  # from this test: candidate code
    assert os.path.getsize(mine.__file__) > 0
    assert not triton_hosts.genuine(mine.__file__)
    knobs = sys.modules.get("triton.knobs")
    if knobs is not None and hasattr(knobs, "build"):
        other = src + "int ks_triton_hosts_hooked(void) { return 3; }\n"
        def hook(name, src_path, tmp, *_a):  # a build hook of the candidate's
            out = os.path.join(tmp, name + ".so")
            subprocess.check_call([shutil.which("gcc") or "clang", src_path, "-shared", "-fPIC",
                                   "-o", out])
            return out

        monkeypatch.setattr(knobs.build, "impl", hook, raising=False)
        assert not triton_hosts.genuine(_as_triton(fake, other, "__triton_launcher").__file__)
        monkeypatch.setattr(knobs.build, "impl", None, raising=False)
    monkeypatch.setenv("CC", "/usr/bin/false-compiler-of-a-candidate")
    with pytest.raises(Exception):  # Triton's _build runs $CC: a compiler of the candidate's
        _as_triton(fake, src + "int x;\n", "__triton_launcher")


def test_the_record_cannot_be_changed_through_closures():
    cells = [c.cell_contents for c in triton_hosts.genuine.__closure__ or ()]
    vaults = [c for c in cells if type(c).__name__ == "Vault"]
    assert vaults
    with pytest.raises(PermissionError):
        vaults[0].put("/tmp/__triton_launcher.so", (0, 0, 0, 0, 0))


_DRIVER_PROBE = """
import sys, time
from types import SimpleNamespace as NS
from kernelsmith_worker.after_import import after_import
from kernelsmith_worker import native_builds, triton_hosts
after_import("triton.runtime.build", triton_hosts.install)
from triton.backends.nvidia import driver
driver.CudaUtils()
src = NS(constants={}, signature={"x": "*fp32", "n": "i32"}, fn=NS(arg_names=["x", "n"]))
meta = NS(num_ctas=1, global_scratch_size=0, global_scratch_align=1, profile_scratch_size=0,
          profile_scratch_align=1, launch_cooperative_grid=False, launch_pdl=False)
driver.CudaLauncher(src, meta)
mods = {m.__name__: m.__file__ for m in list(sys.modules.values())
        if str(getattr(m, "__file__", "") or "").startswith(str(triton_hosts._Setup.root))}
assert set(mods) == {"cuda_utils", "__triton_launcher"}, mods
assert all(triton_hosts.genuine(f) for f in mods.values())
assert native_builds.foreign(set(mods.values()), time.time_ns() - 10**10) == []
print("ok", triton_hosts._Setup.builds)
"""


def test_triton_s_own_driver_builds_its_modules_through_the_worker(tmp_path):
    # Triton's real NVIDIA driver (its utilities and a kernel signature's launcher), linked
    # against the CUDA toolkit's libcuda stub: no GPU needed
    stubs = sorted(glob.glob("/usr/local/cuda*/lib*/stubs/libcuda.so"))
    if not stubs or importlib.util.find_spec("triton.backends.nvidia") is None:
        pytest.skip("no CUDA toolkit libcuda stub or no Triton NVIDIA backend")
    os.symlink(stubs[0], tmp_path / "libcuda.so.1")
    os.symlink(stubs[0], tmp_path / "libcuda.so")
    env = {**os.environ, "TRITON_LIBCUDA_PATH": str(tmp_path), "TMPDIR": str(tmp_path),
           "LD_LIBRARY_PATH": str(tmp_path), "PYTHONPATH": os.path.dirname(
               os.path.dirname(os.path.abspath(triton_hosts.__file__)))}
    env.pop("CC", None)
    done = subprocess.run([sys.executable, "-c", _DRIVER_PROBE], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok 2", done.stderr[-3000:]
