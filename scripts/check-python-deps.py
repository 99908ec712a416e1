"""Exits 0 when every requirement in the given file is installed at a matching version."""
import sys
from importlib import metadata

try:
    from packaging.requirements import Requirement
except ImportError:  # pip vendors packaging
    from pip._vendor.packaging.requirements import Requirement


def main(path: str) -> int:
    bad = []
    for line in open(path, encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        req = Requirement(line)
        try:
            version = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            bad.append(f"{req.name}: not installed")
            continue
        if req.specifier and not req.specifier.contains(version, prereleases=True):
            bad.append(f"{req.name}: {version} installed, {req.specifier} required")
    for b in bad:
        print(b)
    print("python deps: ok" if not bad else "python deps: missing")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
