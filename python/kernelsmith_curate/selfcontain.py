"""Makes one class self-contained: the class plus everything it needs, as one source text.

Starting from the class, every global name it reads is followed: a top-level definition of
the same file (function, class, constant, guarded import block) is inlined and followed in
turn; an import of the standard library, torch or numpy is kept (that one name only); an
import of the repository's own code (`from .layers import Mlp`, `from timm.layers import
Mlp` under a timm root) is followed into that file and inlined from there. Anything else
is a reason to reject, reported in words: a third-party import, a star import, an undefined
name, a name defined differently in two inlined files (unless one of them is a guarded
import block, `try: from torch.nn.functional import f except ImportError: ...`, taken to
provide the same function), a function-local third-party import.

The source lists `from __future__` imports, the kept imports, then the inlined definitions
(files a definition depends on first, each file in its original order), the class last.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from kernelsmith_curate import imports
from kernelsmith_curate.repo import Repo
from kernelsmith_curate.scope import BUILTIN_NAMES, FileIndex

_MAX_NAMES = 2000  # a class needing more than this is a whole framework, not a module


class Unresolvable(Exception):
    """The class cannot be made self-contained; the message says why."""


@dataclass
class SelfContained:
    source: str
    files: list[str]  # files inlined from, the class's own first


def _rel(repo: Repo, path: Path) -> str:
    try:
        return str(path.resolve().relative_to(repo.root))
    except ValueError:
        return str(path)


class _Closure:
    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.units: dict[tuple[Path, int], str] = {}  # (file, unit index) -> text
        self.import_lines: dict[str, str] = {}  # local name -> import line
        self.future_lines: set[str] = set()
        self.aliases: dict[str, tuple[Path, str]] = {}  # alias line -> (file, text)
        self.owner: dict[str, tuple[Path, str]] = {}  # name -> (file, defining text)
        self.file_deps: dict[Path, list[Path]] = {}
        self.seen: set[tuple[Path, str]] = set()
        self.guarded_names: set[str] = set()

    def _claim(self, name: str, path: Path, text: str, guarded: bool = False) -> None:
        """Records who defines name. A guarded import block (try: from torch... import f
        except ImportError: ...) may rebind a name another file defines: both are meant
        to be the same function from different providers."""
        prev = self.owner.get(name)
        if guarded or name in self.guarded_names:
            self.guarded_names.add(name)
            if prev is None:
                self.owner[name] = (path, text)
            return
        if prev is not None and prev[0] != path and prev[1] != text:
            raise Unresolvable(
                f"name clash: '{name}' is defined differently in {_rel(self.repo, prev[0])} and "
                f"{_rel(self.repo, path)} (cross-file inlining cannot merge them)")
        self.owner[name] = (path, text)

    def _add_file_dep(self, src: Path, dst: Path) -> None:
        deps = self.file_deps.setdefault(src, [])
        if dst != src and dst not in deps:
            deps.append(dst)

    def need(self, index: FileIndex, name: str, depth: int = 0) -> None:
        key = (index.path, name)
        if key in self.seen:
            return
        self.seen.add(key)
        if len(self.seen) > _MAX_NAMES:
            raise Unresolvable(f"needs more than {_MAX_NAMES} definitions (a framework, "
                               "not a module)")
        if name in index.definers:
            for i in index.definers[name]:
                self._add_unit(index, i, depth)
        elif name in index.bindings:
            self._add_binding(index, name, depth)
        elif name in BUILTIN_NAMES:
            return
        elif index.star_imports:
            if self._from_star(index, name, depth):
                return
            bad = [m for m in index.star_imports if not imports.is_allowed_module(m)]
            if bad:
                raise Unresolvable(f"name '{name}' may come from star import 'from {bad[0]} "
                                   "import *' (unresolvable)")
            for m in index.star_imports:
                self.import_lines[f"*{m}"] = f"from {m} import *"
        else:
            raise Unresolvable(f"undefined name '{name}' in {_rel(self.repo, index.path)}")

    def _from_star(self, index: FileIndex, name: str, depth: int) -> bool:
        """Follows `from .mod import *` of the repository's own modules to `name`."""
        for module in index.star_imports:
            target = self.repo.resolve_module(index.path, module)
            other = self.repo.index(target) if target is not None else None
            if other is None or not (name in other.definers or name in other.bindings
                                     or other.star_imports):
                continue
            if name not in other.definers and name not in other.bindings and depth > 12:
                continue
            self._add_file_dep(index.path, other.path)
            try:
                self.need(other, name, depth + 1)
            except Unresolvable:
                if name in other.definers or name in other.bindings:
                    raise
                continue  # not in that module's star imports either; try the next
            return True
        return False

    def _add_unit(self, index: FileIndex, i: int, depth: int) -> None:
        key = (index.path, i)
        if key in self.units:
            return
        unit = index.units[i]
        text = unit.text
        guarded = isinstance(unit.node, ast.Try)
        for name in unit.defines:
            self._claim(name, index.path, text, guarded)
        self.units[key] = text
        for module, guarded in unit.inner_imports:
            if guarded or imports.is_allowed_module(module):
                continue
            what = "repository module" if module.startswith(".") or self.repo.resolve_module(
                index.path, module) else "third-party module"
            raise Unresolvable(f"needs {what} '{module}' imported inside a function "
                               "(unresolvable)")
        for name in sorted(unit.free):
            self.need(index, name, depth)

    def _add_binding(self, index: FileIndex, name: str, depth: int) -> None:
        b = index.bindings[name]
        if b.module == "__future__":
            self.future_lines.add(b.line)
            return
        if imports.is_allowed_module(b.module):
            self._claim(name, index.path, f"import {b.qualname}")
            self.import_lines.setdefault(name, b.line)
            return
        target = self.repo.resolve_module(index.path, b.module)
        if target is None or not b.from_import:
            kind = "repository module" if target is not None else "third-party import"
            raise Unresolvable(f"needs {kind} '{b.module}' (unresolvable)")
        if depth > 12:
            raise Unresolvable(f"re-export chain too deep for '{b.qualname}'")
        # A name exported by a package __init__ may be a submodule: that is a namespace.
        attr = b.qualname.rsplit(".", 1)[-1]
        other = self.repo.index(target)
        if other is None:
            raise Unresolvable(f"cannot parse repository module '{b.module}' "
                               f"({_rel(self.repo, target)})")
        if attr not in other.definers and attr not in other.bindings:
            sub = self.repo.resolve_module(target, f".{attr}") if target.name == "__init__.py" \
                else None
            what = "as a namespace" if sub is not None else "which does not define it"
            raise Unresolvable(f"needs '{attr}' from repository module '{b.module}' {what} "
                               "(unresolvable)")
        self._add_file_dep(index.path, other.path)
        self.need(other, attr, depth + 1)
        if attr != name:
            line = f"{name} = {attr}"
            self._claim(name, index.path, line)
            self.aliases[line] = (index.path, line)

    def _file_order(self, start: Path) -> dict[Path, int]:
        order: dict[Path, int] = {}
        visiting: set[Path] = set()

        def visit(p: Path) -> None:
            if p in order or p in visiting:
                return
            visiting.add(p)
            for d in self.file_deps.get(p, []):
                visit(d)
            order[p] = len(order)

        visit(start)
        for p, _ in self.units:
            visit(p)
        return order

    def render(self, start: Path) -> SelfContained:
        order = self._file_order(start)
        parts: list[str] = sorted(self.future_lines)
        parts += sorted(set(self.import_lines.values()), key=_import_sort_key)
        body: list[tuple[int, int, str]] = []
        for (path, i), text in self.units.items():
            body.append((order[path], i, text))
        for line, (path, _) in self.aliases.items():
            body.append((order[path], -1, line))
        body.sort(key=lambda t: (t[0], t[1]))
        chunks = ["\n".join(parts)] if parts else []
        emitted: set[str] = set()
        for _, _, text in body:
            if text not in emitted:
                emitted.add(text)
                chunks.append(text)
        files = [_rel(self.repo, start)] + [
            _rel(self.repo, p) for p in sorted(order, key=order.get) if p != start]
        return SelfContained("\n\n".join(chunks) + "\n", files)


def _import_sort_key(line: str) -> tuple[int, str]:
    module = line.split()[1]
    top = imports.top_level(module)
    return (0 if top not in imports.ALLOWED_THIRD_PARTY else 1, line)


def self_contain(repo: Repo, index: FileIndex, class_name: str) -> SelfContained:
    """The class and everything it needs as one source. Raises Unresolvable."""
    closure = _Closure(repo)
    if class_name not in index.definers:
        raise Unresolvable(f"class '{class_name}' not found at top level")
    closure.need(index, class_name)
    return closure.render(index.path)
