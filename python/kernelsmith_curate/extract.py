"""`extract`: one record per nn.Module subclass of each file (contract in docs/curate-python.md).

A top-level class is a module when one of its bases is torch.nn.Module or a torch.nn class
(nn.Conv2d, nn.Sequential, ...), or a class of the same file or of the repository's own
code that is a module itself (indirect bases: class A(nn.Module); class B(A)). A module is
rejected when it, or a base it inherits, has no forward() and no torch.nn base other than
Module provides one, or when it cannot be made self-contained (selfcontain.py says why).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from kernelsmith_curate import family as fam
from kernelsmith_curate import imports, normalize, ops
from kernelsmith_curate.license import LicenseFinder
from kernelsmith_curate.repo import Repo
from kernelsmith_curate.scope import FileIndex, index_source
from kernelsmith_curate.selfcontain import Unresolvable, self_contain


class _ModuleInfo:
    def __init__(self, is_module: bool, has_forward: bool) -> None:
        self.is_module = is_module
        self.has_forward = has_forward


def _defines_forward(node: ast.ClassDef) -> bool:
    return any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "forward"
               for s in node.body)


def _bindings(repo: Repo, index: FileIndex) -> dict[str, str]:
    """Import bindings of the file, plus those its star imports of repository modules bring."""
    out: dict[str, str] = {}
    for module in index.star_imports:
        target = repo.resolve_module(index.path, module)
        other = repo.index(target) if target is not None else None
        if other is not None:
            out.update({k: b.qualname for k, b in other.bindings.items()})
    out.update({k: b.qualname for k, b in index.bindings.items()})
    return out


def module_info(repo: Repo, index: FileIndex, name: str, depth: int = 0) -> _ModuleInfo:
    """Whether class `name` of `index` is an nn.Module subclass, and has a forward()."""
    node = index.classes.get(name)
    if node is None or depth > 16:
        return _ModuleInfo(False, False)
    is_module, has_forward = False, _defines_forward(node)
    bindings = _bindings(repo, index)
    for base in node.bases:
        q = imports.qualified_name(base, bindings)
        if q is not None and imports.is_torch_module_class(q):
            is_module = True
            has_forward |= q not in ("torch.nn.Module", "torch.jit.ScriptModule")
            continue
        info: _ModuleInfo | None = None
        if isinstance(base, ast.Name) and base.id in index.classes and base.id != name:
            info = module_info(repo, index, base.id, depth + 1)
        elif isinstance(base, ast.Name) and base.id in index.bindings:
            b = index.bindings[base.id]
            target = repo.resolve_module(index.path, b.module) if b.from_import else None
            other = repo.index(target) if target is not None else None
            if other is not None:
                info = _resolve_class(repo, other, b.qualname.rsplit(".", 1)[-1], depth + 1)
        if info is not None and info.is_module:
            is_module = True
            has_forward |= info.has_forward
    return _ModuleInfo(is_module, has_forward)


def _resolve_class(repo: Repo, index: FileIndex, name: str, depth: int) -> _ModuleInfo:
    """module_info of `name` in `index`, following re-exports (from .x import Name)."""
    if name in index.classes or depth > 16:
        return module_info(repo, index, name, depth)
    b = index.bindings.get(name)
    if b is None or not b.from_import:
        return _ModuleInfo(False, False)
    target = repo.resolve_module(index.path, b.module)
    other = repo.index(target) if target is not None else None
    if other is None:
        return _ModuleInfo(False, False)
    return _resolve_class(repo, other, b.qualname.rsplit(".", 1)[-1], depth + 1)


def _analysis(source: str, class_name: str) -> dict[str, Any]:
    op_list = ops.source_ops(source)
    f = fam.family(op_list, class_name)
    return {"ops": op_list, "family": f}


def _class_source(source: str, node: ast.ClassDef) -> str:
    """The class's own code: its ClassDef as it appears in the self-contained `source` (the
    last top-level class of that name; the class keeps its name there), else the original."""
    own: ast.ClassDef | None = None
    for stmt in ast.parse(source).body:
        if isinstance(stmt, ast.ClassDef) and stmt.name == node.name:
            own = stmt
    return ast.unparse(own if own is not None else node) + "\n"


def _class_record(repo: Repo, index: FileIndex, node: ast.ClassDef,
                  base: dict[str, Any]) -> dict[str, Any]:
    rec = dict(base, **{"class": node.name, "line": node.lineno})
    info = module_info(repo, index, node.name)
    reason: str | None = None
    source = ast.unparse(node) + "\n"
    if not info.has_forward:
        reason = "no forward() method (abstract base or container)"
    else:
        try:
            source = self_contain(repo, index, node.name).source
        except Unresolvable as e:
            reason = str(e)
    rec.update(status="rejected" if reason else "ok", reason=reason, source=source)
    rec["ast_hash"] = normalize.ast_hash(source) if not reason else None
    rec["tokens"] = normalize.tokens(source) if not reason else []
    rec["class_tokens"] = normalize.tokens(_class_source(source, node)) if not reason else []
    rec.update(_analysis(source, node.name))
    return rec


def extract_file(repo: Repo, licenses: LicenseFinder, path: Path) -> list[dict[str, Any]]:
    """Records for one file: one per module class, or one rejected record for the file."""
    path = path.resolve()
    try:
        rel = str(path.relative_to(repo.root))
    except ValueError:
        rel = str(path)
    base: dict[str, Any] = {"file": rel, "repo": repo.root.name, "license": licenses.find(path)}
    try:
        source = path.read_bytes().decode("utf-8")
        index = index_source(source, path)
    except (OSError, UnicodeDecodeError) as e:
        return [dict(base, status="rejected", **{"class": None},
                     reason=f"unreadable: {e}")]
    except (SyntaxError, ValueError, RecursionError) as e:
        where = f" (line {e.lineno})" if isinstance(e, SyntaxError) and e.lineno else ""
        return [dict(base, status="rejected", **{"class": None},
                     reason=f"syntax error: {getattr(e, 'msg', None) or e}{where}")]
    repo.remember(path, index)
    out: list[dict[str, Any]] = []
    for unit in index.units:
        node = unit.node
        if isinstance(node, ast.ClassDef) and index.classes.get(node.name) is node and \
                module_info(repo, index, node.name).is_module:
            try:
                out.append(_class_record(repo, index, node, base))
            except (SyntaxError, ValueError, RecursionError) as e:
                out.append(dict(base, status="rejected", **{"class": node.name},
                                line=node.lineno, reason=f"internal error: {e}"))
    return out
