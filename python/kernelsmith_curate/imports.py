"""Which imports a self-contained module may keep, and what a dotted name refers to.

A module may keep imports of the standard library and of ALLOWED_THIRD_PARTY (torch and
numpy, which the evaluation worker always has). Anything else is third-party code that is
either inlined (the repository's own modules, see selfcontain.py) or a reason to reject.
"""

from __future__ import annotations

import ast
import sys

ALLOWED_THIRD_PARTY: frozenset[str] = frozenset({"torch", "numpy"})
_STDLIB: frozenset[str] = frozenset(sys.stdlib_module_names)


def top_level(module: str) -> str:
    return module.split(".", 1)[0]


def is_allowed_module(module: str) -> bool:
    """True when `import module` needs nothing beyond the stdlib, torch and numpy."""
    top = top_level(module)
    return top in _STDLIB or top in ALLOWED_THIRD_PARTY or top == "__future__"


def import_bindings(node: ast.Import | ast.ImportFrom) -> dict[str, str]:
    """Local name -> fully qualified name bound by one import statement.

    `import a.b` binds `a` -> `a`; `import a.b as c` binds `c` -> `a.b`;
    `from a import b as c` binds `c` -> `a.b`; relative modules keep their leading dots.
    Star imports bind nothing (the caller reports them).
    """
    out: dict[str, str] = {}
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                out[alias.asname] = alias.name
            else:
                out[top_level(alias.name)] = top_level(alias.name)
        return out
    base = "." * node.level + (node.module or "")
    for alias in node.names:
        if alias.name == "*":
            continue
        sep = "" if base.endswith(".") or not base else "."
        out[alias.asname or alias.name] = f"{base}{sep}{alias.name}"
    return out


def from_module(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The module(s) an import statement loads (relative ones with their dots)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    return ["." * node.level + (node.module or "")]


def qualified_name(expr: ast.expr, bindings: dict[str, str]) -> str | None:
    """`nn.Conv2d` -> `torch.nn.Conv2d` given bindings {nn: torch.nn}; None if not a dotted
    name rooted at an imported name."""
    parts: list[str] = []
    node = expr
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in bindings:
        return None
    parts.append(bindings[node.id])
    return ".".join(reversed(parts))


# Names under torch.nn that are not nn.Module subclasses although capitalized.
_NOT_MODULES: frozenset[str] = frozenset({"Parameter", "Buffer", "UninitializedParameter",
                                          "UninitializedBuffer"})


def is_torch_module_class(qualname: str) -> bool:
    """True for torch.nn.Module and the torch.nn classes derived from it (by naming rule:
    a capitalized name under torch.nn, e.g. torch.nn.Conv2d, torch.nn.modules.conv._ConvNd),
    and torch.jit.ScriptModule."""
    if qualname in ("torch.jit.ScriptModule", "torch.nn.Module"):
        return True
    if not qualname.startswith("torch.nn.") or qualname.startswith("torch.nn.functional"):
        return False
    last = qualname.rsplit(".", 1)[1].lstrip("_")
    return bool(last) and last[0].isupper() and last not in _NOT_MODULES
