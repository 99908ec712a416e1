"""kernelsmith as an installed Python package: the `kernelsmith` command (a native binary in
this package's bin/, started by `kernelsmith._launch`) and its resources (share/kernelsmith).
The evaluation worker, curate tool and reward adapters are the sibling packages
kernelsmith_worker, kernelsmith_curate and kernelsmith_rewards."""

from __future__ import annotations

import importlib.metadata
import os

try:
    __version__ = importlib.metadata.version("kernelsmith")
except importlib.metadata.PackageNotFoundError:  # a source checkout, not installed
    __version__ = "0+unknown"


def binary_path() -> str:
    """Path of the installed `kernelsmith` binary (it may be missing in a source checkout)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "kernelsmith")
