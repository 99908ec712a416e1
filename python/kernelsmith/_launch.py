"""Console entry point `kernelsmith`: runs the native binary installed beside this module.
Workers and tools the binary starts use this interpreter (the one that has the package and
torch) unless KS_PYTHON or --python names another."""

from __future__ import annotations

import os
import sys

from kernelsmith import binary_path


def main() -> None:
    exe = binary_path()
    if not os.access(exe, os.X_OK):
        sys.exit(f"kernelsmith: the binary {exe} is missing or not executable; reinstall the "
                 "package (pip install --force-reinstall kernelsmith)")
    env = dict(os.environ)
    env.setdefault("KS_PYTHON", sys.executable)
    os.execve(exe, [exe, *sys.argv[1:]], env)


if __name__ == "__main__":
    main()
