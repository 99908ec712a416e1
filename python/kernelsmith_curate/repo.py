"""A repository's files, parsed once, and where its own imports lead.

`Repo.resolve_module` maps an import of the repository's own code to a file under the root:
relative imports (`from .mlp import Mlp`) against the importing file, absolute ones when
their first component is the root itself (root = site-packages/timm, `import timm.layers`)
or a package directory inside the root (root = a checkout holding timm/).
"""

from __future__ import annotations

from pathlib import Path

from kernelsmith_curate.scope import FileIndex, index_source


class Repo:
    """Parsed files of one repository root (cached). Not thread-safe."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._cache: dict[Path, FileIndex | None] = {}

    def index(self, path: Path) -> FileIndex | None:
        """The file's index, or None when it cannot be read or parsed."""
        path = path.resolve()
        if path not in self._cache:
            try:
                source = path.read_text(encoding="utf-8", errors="replace")
                self._cache[path] = index_source(source, path)
            except (OSError, SyntaxError, ValueError, RecursionError):
                self._cache[path] = None
        return self._cache[path]

    def remember(self, path: Path, index: FileIndex) -> None:
        """Caches an index parsed elsewhere."""
        self._cache[path.resolve()] = index

    def _inside_root(self, path: Path) -> bool:
        return path == self.root or self.root in path.parents

    @staticmethod
    def _module_file(base: Path, parts: list[str]) -> Path | None:
        target = base.joinpath(*parts) if parts else base
        if parts and target.with_suffix(".py").is_file():
            return target.with_suffix(".py")
        if (target / "__init__.py").is_file():
            return target / "__init__.py"
        return None

    def resolve_module(self, importer: Path, module: str) -> Path | None:
        """The file `module` names when imported from `importer`, if it is the repo's own."""
        level = len(module) - len(module.lstrip("."))
        parts = [p for p in module.lstrip(".").split(".") if p]
        if level:
            base = importer.resolve().parent
            for _ in range(level - 1):
                base = base.parent
            found = self._module_file(base, parts)
        elif not parts:
            return None
        elif parts[0] == self.root.name:
            found = self._module_file(self.root, parts[1:])
        elif (self.root / parts[0]).is_dir() or (self.root / f"{parts[0]}.py").is_file():
            found = self._module_file(self.root, parts)
        else:
            found = None
        return found if found is not None and self._inside_root(found) else None
