"""CPU check of the benchmark's workloads: each candidate's Triton kernel against its problem's
reference, run in Triton's interpreter (TRITON_INTERPRET=1) on shrunken shapes, plus an
emulation of the tf32 error of the matmul candidate at the real K=4096.

    python3 bench/eval_timing/check_workloads.py            # all workloads
    python3 bench/eval_timing/check_workloads.py relu_16x16384

Exit status 0 when every check passes (atol = rtol = 1e-2, the evaluator's default).
"""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import triton.runtime.interpreter as _interp  # noqa: E402

# Triton 3.6's interpreter turns a loop bound into int(ndarray of shape (1,)), which numpy 2.x
# refuses ("only 0-dimensional arrays can be converted"); index through the single element.
_patch_lang_tensor = _interp._patch_lang_tensor


def _patch_lang_tensor_np2(tensor, scope):
    _patch_lang_tensor(tensor, scope)
    scope.set_attr(tensor, "__index__",
                   lambda self: int(np.asarray(self.handle.data).reshape(-1)[0]))


_interp._patch_lang_tensor = _patch_lang_tensor_np2

HERE = Path(__file__).resolve().parent
WORKLOADS = HERE / "workloads"

# Module-level sizes each problem's get_inputs() reads, shrunk so the interpreter is quick;
# odd sizes exercise the masks.
SMALL = {
    "softmax_16x16384": {"batch_size": 3, "dim": 1000},
    "relu_16x16384": {"batch_size": 3, "dim": 3001},
    "matmul_4096": {"N": 130},
    "gelu_128x4096x1024": {"batch_size": 2, "seq_len": 3, "hidden": 1001},
    "layernorm_4096x1024": {"batch_size": 5, "features": 1000},
    "softmax_4096x393216": {"batch_size": 3, "dim": 9000},
    "relu_4096x393216": {"batch_size": 2, "dim": 20001},
}


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # triton.jit looks its function's module up
    spec.loader.exec_module(mod)
    return mod


def check(name: str) -> bool:
    problem = load(WORKLOADS / name / "problem.py", f"problem_{name}")
    candidate = load(WORKLOADS / name / "candidate.py", f"candidate_{name}")
    for attr, value in SMALL[name].items():
        assert hasattr(problem, attr), f"{name}: problem has no {attr}"
        setattr(problem, attr, value)
    torch.manual_seed(0)
    init = problem.get_init_inputs()
    torch.manual_seed(1)
    ref_model = problem.Model(*init)
    torch.manual_seed(1)
    new_model = candidate.ModelNew(*init)
    ok = True
    for trial in range(2):
        torch.manual_seed(100 + trial)
        inputs = problem.get_inputs()
        with torch.no_grad():
            expected = ref_model(*inputs)
            got = new_model(*inputs)
        same_shape = got.shape == expected.shape and got.dtype == expected.dtype
        close = same_shape and torch.allclose(got, expected, atol=1e-2, rtol=1e-2)
        err = (got.double() - expected.double()).abs().max().item() if same_shape else float("nan")
        print(f"{name:24s} trial {trial}: shape {tuple(got.shape)} max|err| {err:.2e} "
              f"{'ok' if close else 'FAIL'}")
        ok = ok and close
    return ok


def tf32(x: torch.Tensor, mode: str) -> torch.Tensor:
    """fp32 -> tf32 (10 mantissa bits): truncation or round-to-nearest, returned as fp64."""
    bits = x.contiguous().view(torch.int32)
    if mode == "round":
        bits = bits + (1 << 12)
    bits = bits & ~((1 << 13) - 1)
    return bits.view(torch.float32).double()


def check_tf32_matmul(rows: int = 256) -> bool:
    """Max error of a tf32 product at K=4096 (fp64 accumulation) on `rows` rows of A."""
    torch.manual_seed(0)
    n = 4096
    a, b = torch.rand(rows, n), torch.rand(n, n)
    exact = a.double() @ b.double()
    ok = True
    for mode in ("truncate", "round"):
        approx = tf32(a, mode) @ tf32(b, mode)
        err = (approx - exact).abs()
        tol = 1e-2 + 1e-2 * exact.abs()
        worst = (err / tol).max().item()
        rel = (err / exact.abs()).max().item()
        print(f"matmul_4096 tf32 ({mode}): max rel err {rel:.2e}, max err/tolerance {worst:.3f} "
              f"{'ok' if worst < 1 else 'FAIL'}")
        ok = ok and worst < 1
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=sorted(SMALL))
    args = parser.parse_args()
    ok = True
    for name in args.names:
        try:
            ok = check(name) and ok
        except Exception as e:  # keep going: report every workload
            print(f"{name:24s} ERROR {type(e).__name__}: {e}")
            ok = False
    if "matmul_4096" in args.names:
        ok = check_tf32_matmul() and ok
    print("all ok" if ok else "FAILURES")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
