"""The license file that covers a source file: the nearest LICENSE*/LICENCE*/COPYING* in its
directory or a parent, up to the repository root."""

from __future__ import annotations

from pathlib import Path

_PREFIXES: tuple[str, ...] = ("LICENSE", "LICENCE", "COPYING")


class LicenseFinder:
    """Caches one answer per directory. Not thread-safe."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._by_dir: dict[Path, str | None] = {}

    def _in_dir(self, d: Path) -> str | None:
        try:
            names = sorted(p.name for p in d.iterdir() if p.is_file())
        except OSError:
            return None
        for name in names:
            if name.upper().startswith(_PREFIXES):
                return str((d / name).relative_to(self.root))
        return None

    def find(self, file: Path) -> str | None:
        """Path of the license file relative to the root, or None."""
        d = file.resolve().parent
        chain: list[Path] = []
        found: str | None = None
        while True:
            if d in self._by_dir:
                found = self._by_dir[d]
                break
            chain.append(d)
            found = self._in_dir(d)
            if found is not None or d == self.root or self.root not in d.parents:
                break
            d = d.parent
        for c in chain:
            self._by_dir[c] = found
        return found
