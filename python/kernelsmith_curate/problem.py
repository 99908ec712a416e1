"""A KernelBench-format problem file from a self-contained source and a deduced spec.

The file is the source, then `class Model(<Name>)` (when the class is not already called
Model, or when the wrapper must do something), then get_inputs() and get_init_inputs().
The wrapper passes keyword arguments a problem needs (keyword-only parameters, dropout set
to 0.0) and, when the module returns a tuple or list, returns its first element: a
KernelBench problem compares one output tensor. A class already named Model that needs a
wrapper is renamed to Model_ first.
"""

from __future__ import annotations

import ast

from kernelsmith_curate.deduce import Spec


def _rename_class(source: str, old: str, new: str) -> str:
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == old:
            node.id = new
        elif isinstance(node, ast.ClassDef) and node.name == old:
            node.name = new
    return ast.unparse(tree) + "\n"


def _binds_torch(source: str) -> bool:
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.Import) and any(
                a.name.split(".")[0] == "torch" and a.asname is None for a in node.names):
            return True
    return False


def render(source: str, class_name: str, spec: Spec | None, first_output: bool,
           get_inputs_src: str | None = None, get_init_inputs_src: str | None = None) -> str:
    """The problem file. Either spec or both *_src (candidate inputs) must be given."""
    needs_wrapper = first_output or bool(spec and spec.init_kwargs)
    base = class_name
    if class_name == "Model" and needs_wrapper:
        base = "Model_"
        source = _rename_class(source, "Model", base)
    if not _binds_torch(source):
        lines = source.split("\n")
        at = 0
        while at < len(lines) and lines[at].startswith("from __future__"):
            at += 1
        source = "\n".join(lines[:at] + ["import torch"] + lines[at:])
    parts = [source.rstrip("\n")]
    if base != "Model":
        lines = [f"class Model({base}):"]
        if spec and spec.init_kwargs:
            kw = ", ".join(f"{k}={v!r}" for k, v in spec.init_kwargs.items())
            lines += ["", "    def __init__(self, *args):", f"        super().__init__(*args, {kw})"]
        if first_output:
            lines += ["", "    def forward(self, *args):",
                      "        return super().forward(*args)[0]"]
        if len(lines) == 1:
            lines.append("    pass")
        parts.append("\n".join(lines))
    if spec is not None:
        inputs = ", ".join(t.code() for t in spec.inputs)
        init = ", ".join(repr(v) for v in spec.init_args)
        parts.append(f"def get_inputs():\n    return [{inputs}]")
        parts.append(f"def get_init_inputs():\n    return [{init}]")
    else:
        parts.append((get_inputs_src or "").strip())
        parts.append((get_init_inputs_src or "").strip())
    return "\n\n\n".join(parts) + "\n"
