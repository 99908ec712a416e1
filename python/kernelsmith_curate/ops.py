"""The torch operators a source uses, by lowercased canonical name.

Counted: every dotted name that resolves (through the source's imports) under torch, e.g.
`nn.Conv2d` -> conv2d, `F.relu` -> relu, `torch.matmul` -> matmul, also when passed as a
value (`act_layer=nn.GELU` -> gelu); tensor method calls from a known list (`x.softmax(-1)`
-> softmax); the `@` operator (matmul); and `+ - * / **` outside `__init__` (add, sub, mul,
div, pow). Not counted: containers (Sequential, ModuleList, Identity), parameters, init
functions, tensor creation, dtype/device/no_grad/jit helpers.
"""

from __future__ import annotations

import ast

from kernelsmith_curate.imports import import_bindings, qualified_name

NOT_OPS: frozenset[str] = frozenset({
    "module", "sequential", "modulelist", "moduledict", "parameterlist", "parameterdict",
    "identity", "parameter", "buffer", "tensor", "no_grad", "enable_grad", "inference_mode",
    "is_tensor", "zeros", "ones", "empty", "full", "arange", "linspace", "eye", "zeros_like",
    "ones_like", "empty_like", "full_like", "tensor", "as_tensor", "from_numpy", "device",
    "dtype", "float32", "float16", "bfloat16", "float64", "int64", "int32", "long", "bool",
    "manual_seed", "size", "finfo", "iinfo", "is_grad_enabled", "get_default_dtype",
    "functional", "nn", "torch", "checkpoint", "register_buffer",
})

TENSOR_METHOD_OPS: frozenset[str] = frozenset({
    "relu", "relu_", "sigmoid", "tanh", "softmax", "log_softmax", "exp", "log", "sqrt",
    "rsqrt", "pow", "abs", "clamp", "clamp_min", "clamp_max", "sum", "mean", "max", "min",
    "amax", "amin", "argmax", "argmin", "prod", "std", "var", "norm", "logsumexp", "cumsum",
    "matmul", "mm", "bmm", "mul", "add", "sub", "div", "neg", "reciprocal", "sin", "cos",
    "masked_fill", "topk", "sort", "erf", "square", "softplus", "gelu", "silu", "tril",
    "triu", "addmm", "baddbmm", "exp_", "mul_", "add_", "div_", "sigmoid_", "tanh_",
})

_ARITH: dict[type, str] = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div",
                           ast.Pow: "pow", ast.MatMult: "matmul"}


def _canonical(name: str) -> str:
    name = name.lower()
    if name.endswith("_") and not name.endswith("__"):
        name = name[:-1]
    return name


def _torch_op(qualname: str) -> str | None:
    if qualname != "torch" and not qualname.startswith("torch."):
        return None
    parts = qualname.split(".")
    if any(p in parts for p in ("init", "jit", "cuda", "autograd", "distributed")):
        return None
    op = _canonical(parts[-1]).lstrip("_")
    if "utils" in parts and op not in ("weight_norm", "spectral_norm"):
        return None
    if not op or op in NOT_OPS:
        return None
    return op


class _OpVisitor(ast.NodeVisitor):
    def __init__(self, bindings: dict[str, str]) -> None:
        self.bindings = bindings
        self.ops: list[str] = []
        self._in_init = 0

    def _add(self, op: str | None) -> None:
        if op and op not in self.ops:
            self.ops.append(op)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        init = node.name == "__init__"
        self._in_init += init
        self.generic_visit(node)
        self._in_init -= init

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def _dotted(self, node: ast.Attribute | ast.Name) -> bool:
        """Records node if it is a torch name; True when it resolved (do not descend)."""
        q = qualified_name(node, self.bindings)
        if q is None:
            return False
        if q.startswith("torch"):
            self._add(_torch_op(q))
        return True

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if not self._dotted(node):
            self.visit(node.value)

    def visit_Name(self, node: ast.Name) -> None:
        self._dotted(node)

    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        if isinstance(f, ast.Attribute) and qualified_name(f, self.bindings) is None \
                and f.attr in TENSOR_METHOD_OPS:
            self._add(_canonical(f.attr))
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        op = _ARITH.get(type(node.op))
        if op == "matmul" or op and not self._in_init:
            self._add(op)
        self.generic_visit(node)


def source_ops(source: str) -> list[str]:
    """Distinct canonical operator names, in order of first use. Raises SyntaxError."""
    tree = ast.parse(source)
    bindings: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bindings.update(import_bindings(node))
    v = _OpVisitor(bindings)
    v.visit(tree)
    return v.ops
