"""Fresh input draws for the timing stage: the bases its slots are refreshed from.

Timed inputs made only by transforming trial 0 (rescaling, jitter, permutation) keep
whatever the transformation keeps: zeros and infinities, boolean masks, sorted offsets, the
multiset of integer ids. A candidate can key a memo on such a property, exact on every timed
sample and every check. So before any candidate code runs, the evaluator calls the problem's
own get_inputs() D more times, each under a seed from os.urandom (not derived from the
request's seed, which the candidate may know), and the timing stage gives every slot, at
every refresh, the values of a draw picked at random from the OS's entropy (timed_inputs.py
applies its rescale, jitter and signs on top). D is as large as a byte budget allows, at
most MAX_DRAWS; the draws are kept on the host until timing starts.

A slot takes each of its tensors from its own draw, picked independently (`mixed` tells
whether the problem allows it): were a slot's tensors all from one draw, one cheaply probed
tensor would name the draw of all the others (a multiplicative refresh of floats keeps
log-magnitudes up to a bounded shift), and a memo keyed on it could serve whatever depends
only on what the refresh keeps of the rest (the multiset of permuted ids, a mask). Mixing
needs the tensors not to depend on each other's values; before the candidate is imported the
reference runs once on a combination no draw made (tensor i from draw i mod D), and where it
raises, or is not finite where trial 0's output was, the tensors stay paired.

Fewer than two usable draws (inputs too large for the budget, get_inputs() raising, or its
draws not shaped like trial 0's: a varying shape, dtype or non-tensor argument), or draws all
alike (a problem whose inputs are a fixed list), leaves the timing on trial 0's values alone,
as before, and the evaluation says so in an info finding.
"""

from __future__ import annotations

import os
from typing import Any
from collections.abc import Callable

import torch

from kernelsmith_worker import errors
from kernelsmith_worker.correctness import bitwise_equal
from kernelsmith_worker.inputs import (free_memory_budget, generate_inputs, host_copy,
                                       map_tensors, nbytes, tensors_in)

MAX_DRAWS = 16
MIN_DRAWS = 2
KIND = "timed_inputs_not_redrawn"


def draw_budget(dev: torch.device) -> int:
    """Bytes the draws may take: $KS_FRESH_DRAW_BYTES, else 1/16 of the GPU's free memory up
    to 2 GiB (half the timed slots' own budget), else 128 MiB on the CPU."""
    return free_memory_budget(dev, "KS_FRESH_DRAW_BYTES", 16, 2 << 30, 128 << 20)


def _signature(args: Any) -> Any:
    """What a draw must share with trial 0 to stand in for it: the containers, every tensor's
    shape and dtype, every other value."""
    return repr(map_tensors(args, lambda t: ("tensor", tuple(t.shape), str(t.dtype))))


def draw(get_inputs: Callable[[], Any], base: list[Any], dev: torch.device,
         budget: int) -> tuple[list[list[Any]], dict[str, Any] | None]:
    """(the draws, on the host; an info finding when fewer than MIN_DRAWS could be made, and
    the draws are then empty). Raises what get_inputs() raised only when it broke the
    device (a CUDA error poisons the process); any other failure ends the drawing."""
    per = max(nbytes(base), 1)
    want = min(MAX_DRAWS, budget // per)
    if want < MIN_DRAWS:
        return [], _finding(f"the inputs take {per} bytes and the budget for fresh draws "
                            f"is {budget} ($KS_FRESH_DRAW_BYTES)")
    sig = _signature(base)
    draws: list[list[Any]] = []
    why = ""
    # the global generators are put back as they were: the draws' seeds stay unknown
    with torch.random.fork_rng(devices=[dev] if dev.type == "cuda" else []):
        for _ in range(want):
            seed = int.from_bytes(os.urandom(8), "little") >> 1
            try:
                inputs = generate_inputs(get_inputs, seed, dev)
            except BaseException as e:  # noqa: BLE001 - problem code may raise anything
                if errors.is_cuda_poison(e):
                    raise
                why = f"get_inputs() raised {errors.describe(e)} under a fresh seed"
                break
            if _signature(inputs) != sig:
                why = ("get_inputs() under a fresh seed returned other shapes, dtypes or "
                       "non-tensor arguments than trial 0's")
                continue
            draws.append(list(host_copy(inputs, per_request=True)))
            del inputs
    if len(draws) < MIN_DRAWS:
        return [], _finding(why or "no draw could be made")
    if all(bitwise_equal(d, draws[0]) for d in draws[1:]):
        return [], _finding("get_inputs() returned the same values under every fresh seed")
    return draws, None


def per_input(draws: list[list[Any]], base: list[Any]) -> dict[int, list[torch.Tensor]]:
    """Per base tensor (by id): its values in every draw, in draw order (on the host)."""
    per_draw = [list(tensors_in(d)) for d in draws]
    return {id(t): [d[i] for d in per_draw] for i, t in enumerate(tensors_in(base))}


def mixed(draws: list[list[Any]], base: list[Any]) -> list[Any]:
    """base's arguments with tensor i (in tensors_in order) taken from draw i mod D, on the
    host: a combination of the draws no single draw made."""
    per = per_input(draws, base)
    pick = {key: vals[i % len(vals)] for i, (key, vals) in enumerate(per.items())}
    return list(map_tensors(base, lambda t: pick[id(t)]))


def _finding(why: str) -> dict[str, Any]:
    return {"kind": KIND, "severity": "info",
            "detail": f"the timed inputs are trial 0's values transformed, not fresh draws of "
                      f"get_inputs() ({why}): a memo keyed on what the transformation keeps "
                      f"(zeros, masks, integer values) is not ruled out"}
