"""The timing stage's statistics (kernelsmith_worker.stats): quantiles, IQR outlier masks,
CV and relative standard error, bootstrap CIs of a ratio."""

from __future__ import annotations

import math
import random

import pytest

from kernelsmith_worker import stats


def test_quantile_matches_linear_interpolation():
    xs = [5.0, 1.0, 4.0, 2.0, 3.0, 10.0]
    s = sorted(xs)
    np = pytest.importorskip("numpy")
    for q in (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0):
        assert stats.quantile(s, q) == pytest.approx(float(np.quantile(xs, q)))
    with pytest.raises(ValueError):
        stats.quantile([], 0.5)


def test_iqr_drops_outliers_only():
    xs = [100.0 + 0.1 * i for i in range(50)] + [180.0, 20.0]
    mask = stats.iqr_mask(xs)
    assert mask[-1] is False and mask[-2] is False
    assert all(mask[:50])
    s = stats.summarize(xs)
    assert s["kept"] == 50 and s["n"] == 52
    assert s["median"] == pytest.approx(102.45)


def test_cv_and_rel_se():
    assert stats.cv([2.0, 2.0, 2.0]) == 0.0
    xs = [9.0, 10.0, 11.0]
    assert stats.cv(xs) == pytest.approx(0.1)
    assert stats.rel_se_median(xs) == pytest.approx(math.sqrt(math.pi / 2) * 1.0 / math.sqrt(3) / 10)
    assert stats.rel_se_median([1.0]) == math.inf


def test_bootstrap_ci_is_deterministic_and_covers_truth():
    rnd = random.Random(1)
    ref = [200.0 * (1 + rnd.gauss(0, 0.01)) for _ in range(200)]
    cand = [100.0 * (1 + rnd.gauss(0, 0.01)) for _ in range(200)]
    a = stats.bootstrap_ratio_ci(ref, cand, seed=7)
    b = stats.bootstrap_ratio_ci(ref, cand, seed=7)
    assert a == b
    assert a[0] < 2.0 < a[1]
    assert a[1] - a[0] < 0.01  # 1 % noise, 200 pairs: the CI is a fraction of a percent wide


def test_bootstrap_ci_narrows_with_more_samples():
    rnd = random.Random(2)
    def width(n):
        ref = [2.0 + rnd.gauss(0, 0.05) for _ in range(n)]
        cand = [1.0 + rnd.gauss(0, 0.05) for _ in range(n)]
        lo, hi = stats.bootstrap_ratio_ci(ref, cand, seed=3)
        return hi - lo
    assert width(400) < width(25)


def test_bootstrap_pure_python_path_agrees(monkeypatch):
    rnd = random.Random(4)
    ref = [3.0 + rnd.gauss(0, 0.03) for _ in range(60)]
    cand = [1.5 + rnd.gauss(0, 0.03) for _ in range(60)]
    with_np = stats.bootstrap_ratio_ci(ref, cand, seed=5, n_boot=500)
    monkeypatch.setattr(stats, "_np", None)
    without = stats.bootstrap_ratio_ci(ref, cand, seed=5, n_boot=500)
    assert without[0] == pytest.approx(with_np[0], rel=0.01)
    assert without[1] == pytest.approx(with_np[1], rel=0.01)


def test_bootstrap_respects_masks():
    ref = [2.0] * 30 + [1000.0]
    cand = [1.0] * 31
    mask = stats.iqr_mask(ref)
    lo, hi = stats.bootstrap_ratio_ci(ref, cand, seed=0, num_mask=mask)
    assert lo == pytest.approx(2.0) and hi == pytest.approx(2.0)
