"""What one Python file defines at top level, and which global names each definition uses.

A file is cut into *units*: its top-level statements, after annotations are stripped
(strip.py). Each unit knows the names it binds and the global names it reads (from Python's
own `symtable`, so locals, parameters, comprehension variables and closures are told apart
from globals exactly). Top-level imports are kept apart as *bindings* (one per imported
name) so a self-contained module can keep just the imports it needs. A top-level `try`
guarding imports (`except ImportError`) is a unit of its own: its imports are optional at
run time, so they are kept as they are.
"""

from __future__ import annotations

import ast
import builtins
import symtable
from dataclasses import dataclass, field
from pathlib import Path

from kernelsmith_curate import imports
from kernelsmith_curate.strip import strip_annotations

BUILTIN_NAMES: frozenset[str] = frozenset(dir(builtins)) | {"__file__", "__name__"}


@dataclass
class Binding:
    """One name bound by a top-level import statement."""
    name: str
    qualname: str  # e.g. torch.nn.functional, .layers.Mlp (relative keeps its dots)
    module: str  # the module the statement loads
    line: str  # the import statement for this name alone, e.g. `import torch.nn as nn`
    from_import: bool  # True for `from m import name`


@dataclass
class Unit:
    index: int
    node: ast.stmt
    text: str  # the statement as source (ast.unparse)
    defines: set[str]
    free: set[str]
    # Imports inside the unit (function-local imports, guarded imports): (module, guarded).
    inner_imports: list[tuple[str, bool]] = field(default_factory=list)


@dataclass
class FileIndex:
    path: Path
    tree: ast.Module  # annotations stripped
    units: list[Unit]
    bindings: dict[str, Binding]
    definers: dict[str, list[int]]  # name -> indices of units that bind it, in file order
    star_imports: list[str]
    classes: dict[str, ast.ClassDef]  # top-level classes (last definition wins)


def _skip_statement(node: ast.stmt) -> bool:
    """`if __name__ == "__main__":` and `if TYPE_CHECKING:` blocks are never needed."""
    if not isinstance(node, ast.If):
        return False
    test = ast.unparse(node.test)
    return "__name__" in test or "TYPE_CHECKING" in test


def _is_import_guard(node: ast.stmt) -> bool:
    if not isinstance(node, ast.Try):
        return False
    for handler in node.handlers:
        caught = ast.unparse(handler.type) if handler.type is not None else "BaseException"
        if any(e in caught for e in ("ImportError", "ModuleNotFoundError", "Exception")):
            return True
    return False


def _names(node: ast.stmt, text: str) -> tuple[set[str], set[str]]:
    """(names a top-level statement binds, global names it reads and does not bind itself,
    builtins excluded)."""
    table = symtable.symtable(text or "pass", "<unit>", "exec")
    defined = {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported()}
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        defined = {node.name}
    used: set[str] = set()
    stack = [table]
    while stack:
        t = stack.pop()
        for sym in t.get_symbols():
            if not sym.is_referenced():
                continue
            if t is table and not sym.is_assigned() and not sym.is_imported():
                used.add(sym.get_name())
            elif t is not table and sym.is_global() and not sym.is_assigned():
                used.add(sym.get_name())
        stack.extend(t.get_children())
    return defined, used - defined - BUILTIN_NAMES


def _inner_imports(node: ast.stmt, guarded: bool) -> list[tuple[str, bool]]:
    out: list[tuple[str, bool]] = []

    def visit(n: ast.AST, g: bool) -> None:
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            out.extend((m, g) for m in imports.from_module(n))
            return
        if isinstance(n, ast.Try) and _is_import_guard(n):
            for child in n.body:
                visit(child, True)
            for part in (n.handlers, n.orelse, n.finalbody):
                for child in part:
                    visit(child, g)
            return
        for child in ast.iter_child_nodes(n):
            visit(child, g)

    visit(node, guarded)
    return out


def _binding_line(node: ast.Import | ast.ImportFrom, name: str) -> tuple[str, str]:
    """(import statement for `name` alone, module it loads)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            local = alias.asname or imports.top_level(alias.name)
            if local == name:
                text = f"import {alias.name}" + (f" as {alias.asname}" if alias.asname else "")
                return text, alias.name
    else:
        module = "." * node.level + (node.module or "")
        for alias in node.names:
            if (alias.asname or alias.name) == name:
                text = f"from {module} import {alias.name}" + (
                    f" as {alias.asname}" if alias.asname else "")
                return text, module
    raise KeyError(name)


def index_source(source: str, path: Path) -> FileIndex:
    """Indexes a file's source. Raises SyntaxError (and ValueError for NUL bytes)."""
    tree = strip_annotations(ast.parse(source, filename=str(path)))
    units: list[Unit] = []
    bindings: dict[str, Binding] = {}
    definers: dict[str, list[int]] = {}
    stars: list[str] = []
    classes: dict[str, ast.ClassDef] = {}
    for node in tree.body:
        if _skip_statement(node):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                stars.append("." * node.level + (node.module or ""))
                continue
            for name, qual in imports.import_bindings(node).items():
                line, module = _binding_line(node, name)
                bindings[name] = Binding(name, qual, module, line,
                                         isinstance(node, ast.ImportFrom))
            continue
        if isinstance(node, ast.Expr):
            continue  # docstrings and bare calls bind nothing
        guard = _is_import_guard(node)
        text = ast.unparse(node)
        defines, free = _names(node, text)
        unit = Unit(len(units), node, text, defines, free, _inner_imports(node, guard))
        units.append(unit)
        for name in unit.defines:
            definers.setdefault(name, []).append(unit.index)
            bindings.pop(name, None)  # a later definition shadows an import
        if isinstance(node, ast.ClassDef):
            classes[node.name] = node
    return FileIndex(path, tree, units, bindings, definers, stars, classes)
