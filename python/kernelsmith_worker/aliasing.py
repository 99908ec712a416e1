"""Outputs that share memory with the inputs they were computed from.

A function whose reference returns a tensor of its own must not return its input, or a view
of it, even where the values agree: relu of a non-negative input is the input itself, and a
candidate that returns it computes nothing while every comparison passes. The caller's
program differs too: writing to the output would write to its input. So in each
correctness trial the candidate's output is compared with its inputs' memory, and an input
it shares that the reference's output (on the same values) does not share is a failed
check (`output_aliases_input`). Where the reference itself returns a view of an input (a
reshape, a slice) the candidate may too."""

from __future__ import annotations

from typing import Any

from kernelsmith_worker.inputs import tensors_in


def _storages(obj: Any) -> set[int]:
    return {t.untyped_storage().data_ptr() for t in tensors_in(obj)
            if t.untyped_storage().nbytes() > 0}


def aliased_inputs(out: Any, args: list[Any]) -> frozenset[int]:
    """Indices of the arguments with a tensor whose memory (storage) an output tensor
    shares."""
    outs = _storages(out)
    if not outs:
        return frozenset()
    return frozenset(k for k, a in enumerate(args) if _storages(a) & outs)
