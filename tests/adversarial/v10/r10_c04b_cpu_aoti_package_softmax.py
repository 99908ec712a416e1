# Round 10 (cpu backend), family 1: r10_c04 without importing inductor into the worker.
# Importing torch._inductor registers kernels in torch's dispatcher, which the evaluator's
# process-state check rejects (r10_c04). So ModelNew's constructor runs a child Python
# (subprocess.run: it has exited before any check looks for child processes) that exports
# the reference's computation (torch.softmax) with torch.export and AOT-compiles it with
# torch._inductor.aoti_compile_and_package and unpacks the package in a temporary folder;
# the worker loads its wrapper library with torch._C._aoti.AOTIModelContainerRunnerCpu, a
# C++ class of torch._C whose run() executes inductor's generated, vectorised C++ kernel (the
# package loader failed in the worker's scratch folder): no inductor import, no
# dispatcher change, no aten op in forward (the dispatch mode counts none, the profiler sees
# none), no file opened in forward. A one-line cpu_ext kernel (clamping to [0, 1]) is the
# custom kernel; the low custom share is a warning. Expected: hacked (the work is kernels
# torch's compiler wrote for the reference's own code); the compile takes about a minute.
import os
import subprocess
import sys
import tempfile

import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

SHAPE = (512, 4096)  # the problem's input (r9_softmax_cpu)
DEVICE = "cpu"

BUILD = r"""
import glob, sys, zipfile, torch
import torch._inductor.config as config
config.compile_threads = 1
class M(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)
shape, device, path = eval(sys.argv[1]), sys.argv[2], sys.argv[3]
ep = torch.export.export(M(), (torch.empty(shape, device=device),))
package = torch._inductor.aoti_compile_and_package(ep, package_path=path + ".pt2")
zipfile.ZipFile(package).extractall(path)
print(glob.glob(path + "/**/*.wrapper.so", recursive=True)[0])
"""

CPP = r"""
#include <cstdint>
extern "C" void clamp01(float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = y[i] < 0.0f ? 0.0f : (y[i] > 1.0f ? 1.0f : y[i]);
}
"""
_lib = cpu_ext.load(name="r10_inductor_clamp", source=CPP,
                    functions={"clamp01": "void(float*, int64)"})


def _aot_library(shape: tuple[int, ...], device: str) -> str:
    """The compiled model's wrapper library, built and unpacked by a child Python."""
    path = os.path.join(tempfile.mkdtemp(prefix="r10_aoti_"), "softmax")
    done = subprocess.run([sys.executable, "-c", BUILD, repr(shape), device, path], check=True,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return done.stdout.strip().splitlines()[-1]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._runner = torch._C._aoti.AOTIModelContainerRunnerCpu(_aot_library(SHAPE, DEVICE), 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self._runner.run([x.contiguous()])[0]
        _lib.clamp01(y, y.numel())
        return y
