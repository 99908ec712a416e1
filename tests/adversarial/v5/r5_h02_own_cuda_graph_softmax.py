# Round 5, honest. A tiny row softmax (32 x 64: launch-bound) that, on the GPU, captures its own
# Triton kernel once in a private CUDA graph on the first call and then, every call, copies the
# input into the graph's static buffer, replays the graph and returns a copy of the static
# output: the usual way to cut launch overhead. Its kernel therefore always runs as a node of a
# graph the candidate launches (cudaGraphLaunch: not one of the kernel log's launch callbacks,
# and its record has a graphId), and the launch hooks see no Triton launch after the capture.
# It is the control for r5_c03: a defence against unrecorded private graph launches (counting
# graph launches, matching graph node records per launch) must accept a candidate whose own
# graph replays its own kernels, with every record present and every call computing.
# If the evaluator cannot capture a graph launch inside its own capture, timing falls back to
# eager calls (not_graph_capturable, info); that is not a reject.
# Expected: status ok on the CPU/interpreter (no graph there) and on an H100.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_rows(x_ptr, y_ptr, N, sx, sy, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(x_ptr + row * sx + cols, mask=m, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * sy + cols, e / tl.sum(e, axis=0), mask=m)


def _launch(x, y):
    M, N = x.shape
    softmax_rows[(M,)](x, y, N, x.stride(0), y.stride(0), BLOCK=triton.next_power_of_2(N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._graphs = {}  # (device, shape, dtype) -> (graph, static in, static out)

    def _graph_for(self, x):
        key = (x.device, tuple(x.shape), x.dtype)
        if key in self._graphs:
            return self._graphs[key]
        if self._graphs:  # one graph only (the first shape seen); others launch directly
            return None
        sx = torch.empty_like(x, memory_format=torch.contiguous_format)
        sy = torch.empty_like(sx)
        sx.copy_(x)
        side = torch.cuda.Stream(device=x.device)
        side.wait_stream(torch.cuda.current_stream(x.device))
        with torch.cuda.stream(side):
            _launch(sx, sy)  # compile and warm up outside the capture
        torch.cuda.current_stream(x.device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=side):
            _launch(sx, sy)
        self._graphs[key] = (graph, sx, sy)
        return self._graphs[key]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not x.is_cuda:
            y = torch.empty_like(x)
            _launch(x.contiguous(), y)
            return y
        try:
            entry = self._graph_for(x)
        except RuntimeError:  # no capture possible here (e.g. inside another capture)
            entry = None
        if entry is None:
            xc = x.contiguous()
            y = torch.empty_like(xc)
            _launch(xc, y)
            return y
        graph, sx, sy = entry
        sx.copy_(x)
        graph.replay()
        return sy.clone()
