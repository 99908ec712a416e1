"""Sequential stopping of the timed blocks: repeated confidence intervals on the log speedup.

The sustained blocks run in rounds (ref, cand, cand, ref). After round k (a "look", k = 1..K)
the rule computes the interval

    I_k = exp( log(median_ref / median_cand) +/- z * se_k ),   z = Phi^-1(1 - alpha / (2K))

where se_k^2 = se_ref^2 + se_cand^2 and each function's se is the larger of the median's
sampling error (1.2533 * sd / sqrt(n) of the log samples Tukey's fences keep) and the spread
of its block medians (sd / sqrt(B) over its B blocks: a clock or placement state that moves
between blocks is noise the samples of one block do not show). Sampling stops at the first look
whose relative half-width z * se_k is <= the target, or at look K, or when the time is spent.

Error rate: each I_k alone misses the true speedup with probability <= alpha / K (a normal
interval at level 1 - alpha / K), so the probability that ANY of the K intervals misses is
<= K * alpha / K = alpha (Bonferroni). The interval at the look where sampling stopped is one of
them, so it misses with probability <= alpha whatever the stopping rule looked at: optional
stopping cannot inflate the error. docs/evaluation.md gives the derivation and the simulation
(python/tests/test_sequential.py) that checks it on lognormal samples.

The next round's sizes follow the noise: the samples a function still needs are allocated in
proportion to sqrt(variance / cost per sample) (Neyman allocation, the cheapest way to the
target variance), bounded by the time left and the per-block maximum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Sequence

from . import stats


def critical_z(alpha: float, looks: int) -> float:
    """z of a two-sided interval at level 1 - alpha / looks."""
    return NormalDist().inv_cdf(1.0 - alpha / (2.0 * max(looks, 1)))


def log_median_se(blocks: Sequence[Sequence[float]], iqr_k: float = 1.5) -> float:
    """Standard error of log(pooled median) of one function's samples, given per block: the
    larger of the median's sampling error and the spread of the block medians. inf when
    there are fewer than two samples or a sample is not positive."""
    pooled = [x for b in blocks for x in b]
    if len(pooled) < 2 or min(pooled) <= 0:
        return math.inf
    s = stats.summarize(pooled, iqr_k)
    kept = [math.log(x) for x, keep in zip(pooled, s["mask"]) if keep]
    within = stats.MEDIAN_SE_FACTOR * stats.stdev(kept) / math.sqrt(len(kept))
    meds = [math.log(stats.median(b)) for b in blocks if b]
    between = stats.stdev(meds) / math.sqrt(len(meds)) if len(meds) >= 2 else 0.0
    return max(within, between)


@dataclass(frozen=True)
class Look:
    """What one look saw: the interval on the speedup at the rule's level and whether the
    rule stops here (`stop`: why, or None to go on)."""

    index: int  # 1-based
    speedup: float
    se_ref: float  # of log(median)
    se_cand: float
    z: float
    halfwidth: float  # z * sqrt(se_ref^2 + se_cand^2): relative half-width (log scale)
    stop: str | None  # "precise", "looks" (the last look), or None

    @property
    def ci(self) -> tuple[float, float]:
        return (self.speedup * math.exp(-self.halfwidth), self.speedup * math.exp(self.halfwidth))

    def record(self, target: float, alpha: float, looks: int, stop: str) -> dict:
        lo, hi = self.ci
        return {"looks": self.index, "max_looks": looks, "alpha": alpha, "z": self.z,
                "target": target, "halfwidth": self.halfwidth,
                "ci": [lo, hi] if math.isfinite(lo) and math.isfinite(hi) else None,
                "se_ref": self.se_ref, "se_cand": self.se_cand, "stop": stop}


def look(index: int, ref_blocks: Sequence[Sequence[float]],
         cand_blocks: Sequence[Sequence[float]], *, alpha: float, looks: int, target: float,
         iqr_k: float = 1.5) -> Look:
    """Look `index` (1..looks) at the samples so far, per function per block."""
    ref = [x for b in ref_blocks for x in b]
    cand = [x for b in cand_blocks for x in b]
    med_r = stats.summarize(ref, iqr_k)["median"] if ref else math.nan
    med_c = stats.summarize(cand, iqr_k)["median"] if cand else math.nan
    speedup = med_r / med_c if med_c and med_c > 0 else math.nan
    se_r, se_c = log_median_se(ref_blocks, iqr_k), log_median_se(cand_blocks, iqr_k)
    z = critical_z(alpha, looks)
    half = z * math.sqrt(se_r ** 2 + se_c ** 2)
    stop = "precise" if half <= target else ("looks" if index >= looks else None)
    return Look(index, speedup, se_r, se_c, z, half, stop)


def next_round(seen: Look, n: dict[str, int], cost_s: dict[str, float], target: float,
               time_left_s: float, per_block: tuple[int, int], blocks_per_fn: int = 2,
               ) -> dict[str, int]:
    """Samples per block of each function for the next round, which has `blocks_per_fn`
    blocks of each: the extra samples that bring z * se down to `target` at the least cost
    (Neyman allocation: function i gets sqrt(v_i / c_i) * sum_j sqrt(v_j * c_j) / T samples in
    all, v_i = se_i^2 * n_i, T = (target / z)^2), 20 % over to spare a look, within
    [per_block[0], per_block[1]] per block (scaled down together, in proportion, where one
    function would pass the maximum) and within the time left. `n`: samples so far and
    `cost_s`: seconds a sample takes, per function ("ref", "cand")."""
    lo, hi = per_block
    se = {"ref": seen.se_ref, "cand": seen.se_cand}
    if not all(math.isfinite(v) for v in se.values()):
        want = {name: hi for name in n}
    else:
        var = {name: se[name] ** 2 * max(n[name], 1) for name in n}
        tgt = (target / seen.z) ** 2
        spend = sum(math.sqrt(var[j] * cost_s[j]) for j in n)
        total = {name: 1.2 * math.sqrt(var[name] / max(cost_s[name], 1e-12)) * spend / tgt
                 for name in n}
        # a function that would pass its per-block maximum scales the others down with it:
        # the allocation keeps its proportions when the target is out of reach
        f = min([1.0] + [(n[j] + blocks_per_fn * hi) / total[j] for j in n if total[j] > 0])
        want = {name: math.ceil(max(f * total[name] - n[name], 0.0) / blocks_per_fn)
                for name in n}
    sizes = {name: min(max(v, lo), hi) for name, v in want.items()}
    round_s = sum(blocks_per_fn * sizes[j] * cost_s[j] for j in sizes)
    if round_s > time_left_s > 0:  # scale down to the time left, never below the minimum
        f = time_left_s / round_s
        sizes = {name: max(lo, int(v * f)) for name, v in sizes.items()}
    return sizes
