// Test-only: candidate programs shared by the propose tests.
#pragma once

#include <string_view>

namespace ks::testing {

// A Triton softmax candidate. Lines 8-27 form the EVOLVE-BLOCK body.
inline constexpr std::string_view kSoftmaxSeed = R"PY(import torch
import torch.nn as nn
import triton
import triton.language as tl


# EVOLVE-BLOCK-START
@triton.jit
def softmax_kernel(out_ptr, in_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_SIZE)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * n_cols + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * n_cols + offs, num / tl.sum(num, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        BLOCK_SIZE = 16384
        softmax_kernel[(x.shape[0],)](out, x, x.shape[1], BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
        return out
# EVOLVE-BLOCK-END


BLOCK_OUTSIDE = 128
)PY";

}  // namespace ks::testing
