# Round 6, honest. Control for the round-6 defences against work outside the timed stream
# (other contexts, other processes, native threads, injected captures): a row softmax that
# splits the rows in two halves and runs them concurrently on the current stream and on a
# private non-blocking stream of its own, joined properly with events (fork/join). Every
# kernel is its own Triton kernel, every launch comes from forward, the side stream is waited
# on before forward returns, so the work is inside the timed region and graph-capturable
# (torch captures a forked stream that joins back). A defence that rejects any second stream,
# or any launch on a stream other than the evaluator's, would wrongly reject it.
# Expected: status ok on the CPU/interpreter (no streams there: both halves run in order) and
# on an H100.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_rows(x_ptr, y_ptr, row0, N, sx, sy, BLOCK: tl.constexpr):
    row = row0 + tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(x_ptr + row * sx + cols, mask=m, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * sy + cols, e / tl.sum(e, axis=0), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._side = {}

    def _launch(self, x, y, row0, rows):
        if rows > 0:
            N = x.shape[1]
            softmax_rows[(rows,)](x, y, row0, N, x.stride(0), y.stride(0),
                                  BLOCK=triton.next_power_of_2(N))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M = x.shape[0]
        y = torch.empty_like(x)
        half = M // 2
        if not x.is_cuda:
            self._launch(x, y, 0, half)
            self._launch(x, y, half, M - half)
            return y
        main = torch.cuda.current_stream(x.device)
        side = self._side.get(x.device)
        if side is None:
            side = self._side[x.device] = torch.cuda.Stream(device=x.device)
        side.wait_stream(main)  # fork: x and y are ready on main
        with torch.cuda.stream(side):
            self._launch(x, y, half, M - half)
        self._launch(x, y, 0, half)
        main.wait_stream(side)  # join before returning
        y.record_stream(side)
        return y
