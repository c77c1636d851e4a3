"""Means and 95 % confidence intervals over seeds (Student t), for the sweep's tables and plots.

The interval of a point measured with n seeds is mean ± t(0.975, n - 1) · s / √n, s the sample
standard deviation: the usual interval for a mean of independent runs whose results are close
to normally distributed. One seed gives no interval (null). Plain Python: no SciPy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import polars as pl

# The summary fields averaged over seeds in `aggregate.csv` and the sweep's table.
METRICS: tuple[str, ...] = (
    "offered_load",
    "accepted_load",
    "latency_mean_ns",
    "latency_p99_ns",
    "network_latency_mean_ns",
    "hops_mean",
    "minimal_fraction",
)
LEVEL = 0.95


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        even = m * (b - m) * x / ((qam + m2) * (a + m2))
        odd = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        delta = 1.0
        for aa in (even, odd):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            delta = d * c
            h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with `df` degrees of freedom."""
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The `p` quantile (0.5 <= p < 1) of Student's t with `df` degrees of freedom."""
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return (lo + hi) / 2.0


def ci_half_width(values: Sequence[float], level: float = LEVEL) -> float | None:
    """Half the width of the `level` confidence interval of the mean of `values` (None for
    fewer than two)."""
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return t_quantile(0.5 + level / 2.0, n - 1) * sd / math.sqrt(n)


def aggregate(frame: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """One row per group of `by` (the coordinates but the seed): `seeds` (how many), and per
    metric of METRICS present, `<metric>_mean` and `<metric>_ci95` (half-width of the 95 %
    interval; null with one seed or an empty sample). Sorted by `by`."""
    metrics = [m for m in METRICS if m in frame.columns]
    n = pl.col("seed").count().alias("seeds") if "seed" in frame.columns else pl.len()
    grouped = frame.group_by(list(by), maintain_order=True).agg(
        n.alias("seeds"),
        *(pl.col(m).cast(pl.Float64).alias(m) for m in metrics),
    )
    rows = []
    for row in grouped.iter_rows(named=True):
        out = {key: row[key] for key in by}
        out["seeds"] = row["seeds"]
        for metric in metrics:
            values = [v for v in row[metric] if v is not None and math.isfinite(v)]
            out[f"{metric}_mean"] = sum(values) / len(values) if values else None
            out[f"{metric}_ci95"] = ci_half_width(values)
        rows.append(out)
    schema: dict[str, pl.DataType] = {key: frame.schema[key] for key in by}
    schema["seeds"] = pl.UInt32()
    for metric in metrics:
        schema[f"{metric}_mean"] = pl.Float64()
        schema[f"{metric}_ci95"] = pl.Float64()
    result = pl.DataFrame(rows, schema=schema, strict=False)
    return result.sort(list(by), nulls_last=True) if by else result
