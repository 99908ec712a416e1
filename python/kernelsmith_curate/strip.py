"""AST transformations applied before a file's definitions are inlined or hashed.

`strip_annotations` removes type annotations (they are not needed to run a module, and they
are where most unresolvable names hide: `act_layer: LayerType`, `x: Optional[Tensor]`).
Annotations stay where they carry meaning at run time: functions decorated with
torch.jit.script / torch.jit.export (TorchScript reads them) and the bodies of dataclasses,
NamedTuples and TypedDicts (their fields are annotations).

`strip_docstrings` drops docstrings (for hashing and token streams only; the emitted source
keeps them).
"""

from __future__ import annotations

import ast

_FIELD_CLASS_MARKERS: tuple[str, ...] = ("dataclass", "NamedTuple", "TypedDict")


def _dotted(expr: ast.expr) -> str:
    try:
        return ast.unparse(expr)
    except Exception:  # noqa: BLE001 - unparse of odd nodes; treat as unnamed
        return ""


def _keeps_annotations(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any("jit" in _dotted(d) or "script" in _dotted(d) for d in node.decorator_list)


def _is_field_class(node: ast.ClassDef) -> bool:
    names = [_dotted(d) for d in node.decorator_list] + [_dotted(b) for b in node.bases]
    return any(m in n for n in names for m in _FIELD_CLASS_MARKERS)


class _AnnotationStripper(ast.NodeTransformer):
    def __init__(self) -> None:
        self._field_class_depth = 0

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        field = _is_field_class(node)
        self._field_class_depth += field
        self.generic_visit(node)
        self._field_class_depth -= field
        if not node.body:
            node.body = [ast.Pass()]
        return node

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        if not _keeps_annotations(node):
            a = node.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
                if arg is not None:
                    arg.annotation = None
            node.returns = None
        self.generic_visit(node)
        if not node.body:
            node.body = [ast.Pass()]
        return node

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST | None:
        if self._field_class_depth:
            return node
        if node.value is None:
            return None
        return ast.copy_location(ast.Assign(targets=[node.target], value=node.value), node)

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and field == "body" and not body and \
                    not isinstance(node, ast.Module):
                body.append(ast.Pass())
        return node


def strip_annotations(tree: ast.Module) -> ast.Module:
    """tree without type annotations (except where they matter at run time); modifies tree."""
    out = _AnnotationStripper().visit(tree)
    ast.fix_missing_locations(out)
    return out


def _drop_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:] or [ast.Pass()]
    return body


def strip_docstrings(tree: ast.Module) -> ast.Module:
    """tree without module/class/function docstrings; modifies tree."""
    out = tree
    out.body = _drop_docstring(out.body)
    for node in ast.walk(out):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            node.body = _drop_docstring(node.body)
    return out
