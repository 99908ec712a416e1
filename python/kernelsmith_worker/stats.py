"""Robust statistics for timing samples: quartiles, IQR outlier removal, median, CV, and a
paired bootstrap confidence interval of a ratio of medians.

Pure Python (numpy is used for the bootstrap when importable, only for speed); no torch.
Every function takes plain sequences of floats and is deterministic for a given seed.
"""

from __future__ import annotations

import math
import random
import warnings
from typing import Sequence

try:  # numpy makes the bootstrap ~50x faster; the pure-Python path gives the same kind of answer.
    import numpy as _np
except Exception:  # pragma: no cover - numpy is in requirements.txt
    _np = None

# Asymptotic ratio of the standard error of the median to that of the mean for normal data.
MEDIAN_SE_FACTOR = math.sqrt(math.pi / 2.0)


def quantile(sorted_xs: Sequence[float], q: float) -> float:
    """The q-quantile (0 <= q <= 1) of an ascending sequence, linear interpolation between
    order statistics (numpy's default method). Raises ValueError on an empty sequence."""
    n = len(sorted_xs)
    if n == 0:
        raise ValueError("quantile of an empty sequence")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile q={q} outside [0, 1]")
    pos = q * (n - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, n - 1)
    frac = pos - lo
    return float(sorted_xs[lo]) + (float(sorted_xs[hi]) - float(sorted_xs[lo])) * frac


def median(xs: Sequence[float]) -> float:
    return quantile(sorted(xs), 0.5)


def iqr_bounds(xs: Sequence[float], k: float = 1.5) -> tuple[float, float]:
    """[Q1 - k*IQR, Q3 + k*IQR] of xs (Tukey's fences)."""
    s = sorted(xs)
    q1, q3 = quantile(s, 0.25), quantile(s, 0.75)
    iqr = q3 - q1
    return q1 - k * iqr, q3 + k * iqr


def iqr_mask(xs: Sequence[float], k: float = 1.5) -> list[bool]:
    """True for each sample inside Tukey's fences (kept), False for outliers."""
    if not xs:
        return []
    lo, hi = iqr_bounds(xs, k)
    return [lo <= x <= hi for x in xs]


def mean(xs: Sequence[float]) -> float:
    if not xs:
        raise ValueError("mean of an empty sequence")
    return math.fsum(xs) / len(xs)


def stdev(xs: Sequence[float]) -> float:
    """Sample standard deviation (n-1); 0 for fewer than two samples."""
    n = len(xs)
    if n < 2:
        return 0.0
    m = mean(xs)
    return math.sqrt(math.fsum((x - m) ** 2 for x in xs) / (n - 1))


def cv(xs: Sequence[float]) -> float:
    """Coefficient of variation std/mean (0 when the mean is 0 or there is one sample)."""
    m = mean(xs)
    return stdev(xs) / m if m != 0 else 0.0


def rel_se_median(xs: Sequence[float]) -> float:
    """Approximate relative standard error of the median of xs: 1.2533 * std / sqrt(n) /
    median. inf for fewer than two samples."""
    n = len(xs)
    if n < 2:
        return math.inf
    med = median(xs)
    if med == 0:
        return math.inf
    return MEDIAN_SE_FACTOR * stdev(xs) / math.sqrt(n) / abs(med)


def _nanmedian_rows_py(rows: list[list[float]]) -> list[float]:
    out = []
    for r in rows:
        vals = sorted(v for v in r if v == v)
        out.append(quantile(vals, 0.5) if vals else math.nan)
    return out


def bootstrap_ratio_ci(
    num: Sequence[float],
    den: Sequence[float],
    *,
    seed: int,
    num_mask: Sequence[bool] | None = None,
    den_mask: Sequence[bool] | None = None,
    n_boot: int = 1000,
    alpha: float = 0.05,
    paired: bool = True,
) -> tuple[float, float]:
    """Percentile bootstrap CI of median(num)/median(den).

    Paired (the default): num[i] and den[i] were measured together (same pair i), so pairs
    are resampled jointly, which keeps the drift both saw. Unpaired: each series is resampled
    on its own (samples taken in separate blocks; lengths may differ). Samples whose mask
    entry is False (outliers) are dropped from each resample's median, as in the point
    estimate. Deterministic for a given seed.
    """
    n, m = len(num), len(den)
    if n == 0 or m == 0 or (paired and n != m):
        raise ValueError(f"samples of unequal or zero length ({n}, {m})")
    nm = list(num_mask) if num_mask is not None else [True] * n
    dm = list(den_mask) if den_mask is not None else [True] * m
    nums = [x if keep else math.nan for x, keep in zip(num, nm)]
    dens = [x if keep else math.nan for x, keep in zip(den, dm)]
    if _np is not None:
        rng = _np.random.default_rng(seed)
        idx = rng.integers(0, n, size=(n_boot, n))
        jdx = idx if paired else rng.integers(0, m, size=(n_boot, m))
        a = _np.asarray(nums, dtype=_np.float64)[idx]
        b = _np.asarray(dens, dtype=_np.float64)[jdx]
        with warnings.catch_warnings(), _np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)  # rows whose picks were all outliers
            ratios = _np.nanmedian(a, axis=1) / _np.nanmedian(b, axis=1)
        ratios = ratios[_np.isfinite(ratios)]
        if ratios.size == 0:
            return (math.nan, math.nan)
        lo, hi = _np.quantile(ratios, [alpha / 2, 1 - alpha / 2])
        return (float(lo), float(hi))
    rnd = random.Random(seed)
    ratios_py: list[float] = []
    for _ in range(n_boot):
        pick = [rnd.randrange(n) for _ in range(n)]
        pick_d = pick if paired else [rnd.randrange(m) for _ in range(m)]
        mn = _nanmedian_rows_py([[nums[i] for i in pick]])[0]
        md = _nanmedian_rows_py([[dens[i] for i in pick_d]])[0]
        if md and math.isfinite(mn) and math.isfinite(md):
            ratios_py.append(mn / md)
    if not ratios_py:
        return (math.nan, math.nan)
    ratios_py.sort()
    return (quantile(ratios_py, alpha / 2), quantile(ratios_py, 1 - alpha / 2))


def summarize(xs: Sequence[float], k: float = 1.5) -> dict:
    """Median, CV and counts of xs after IQR outlier removal.

    Returns {median, cv, kept, n, rel_se, mask}; mask[i] is False for dropped samples.
    """
    if not xs:
        raise ValueError("no samples")
    mask = iqr_mask(xs, k)
    kept = [x for x, keep in zip(xs, mask) if keep]
    if not kept:  # cannot happen with k >= 0, but never return an empty summary
        kept, mask = list(xs), [True] * len(xs)
    return {
        "median": median(kept),
        "cv": cv(kept),
        "kept": len(kept),
        "n": len(xs),
        "rel_se": rel_se_median(kept),
        "mask": mask,
    }
