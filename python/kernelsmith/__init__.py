"""kernelsmith as an installed Python package: the `kernelsmith` command (a native binary in
this package's bin/, started by `kernelsmith._launch`) and its resources (share/kernelsmith).
The reward adapters are kernelsmith.rewards (kernelsmith_rewards is its older name, an
alias); the evaluation worker and curate tool are the sibling packages kernelsmith_worker and
kernelsmith_curate."""

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
