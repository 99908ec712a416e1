"""kernelsmith_curate: the Python half of `kernelsmith curate`.

Subcommands (`python3 -m kernelsmith_curate ...`, JSON Lines in and out, see docs/curate-python.md):
  extract  find nn.Module subclasses in Python files and make each self-contained
  inputs   deduce constructor args and input shapes, run the execution filter
  cluster  TF-IDF (or MiniLM) features + HDBSCAN
"""

__all__ = ["__version__"]
__version__ = "1"
