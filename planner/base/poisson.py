"""The Poisson tail and quantile, vectorised: how many nodes are under repair at once (an M/G/infinity queue's
occupancy is Poisson with mean arrivals x mean service time), which the goodput and the spare nodes follow."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

# terms beyond mean + TAIL_SIGMAS sqrt(mean) + TAIL_FLOOR carry under 1e-40 of the mass: the sums stop there
TAIL_SIGMAS, TAIL_FLOOR = 15.0, 30.0
# above this mean the normal approximation with continuity correction (off by under 1e-3 of the tail) replaces
# the term-by-term sums, which would take ~mean terms (an absurd failure rate or repair time must not hang a plan)
NORMAL_FROM = 400.0
_ERFC = np.frompyfunc(math.erfc, 1, 1)


def tail(mean, k) -> np.ndarray:
    """P(X > k) for X Poisson with `mean` (arrays or scalars; k < 0 gives 1, an infinite k 0, a mean of 0 gives
    0)."""
    mean = np.asarray(mean, dtype=float)
    k = np.asarray(k, dtype=float)
    mean, k = np.broadcast_arrays(mean, k)
    large = np.isfinite(k) & (mean > NORMAL_FROM)
    if large.any():
        out = np.array(tail(np.where(large, 0.0, mean), np.where(large, 0.0, k)), dtype=float)
        z = (np.floor(k[large]) + 0.5 - mean[large]) / np.sqrt(2.0 * mean[large])
        out[large] = 0.5 * _ERFC(z).astype(float)
        return out
    counted = np.isfinite(k) & (mean > 0)
    whole = np.where(counted, np.floor(k), -1.0)
    top = float(mean[counted].max()) if counted.any() else 0.0
    last = int(min(whole.max(initial=-1.0), top + TAIL_SIGMAS * math.sqrt(top) + TAIL_FLOOR))
    log_mean = np.log(np.where(counted, mean, 1.0))
    within = np.zeros(mean.shape)
    for j in range(last + 1):
        within += np.where(j <= whole, np.exp(j * log_mean - mean - math.lgamma(j + 1)), 0.0)
    beyond = np.where(whole > last, 0.0, np.clip(1.0 - within, 0.0, 1.0))
    return np.where(counted & (whole >= 0), beyond, np.where(counted, 1.0, 0.0))


def quantile(mean, q: float) -> np.ndarray:
    """The smallest whole k with P(X > k) <= 1 - q (arrays; 0 where the mean is 0 or q is 0): the cumulative
    mass summed once, term by term."""
    mean = np.asarray(mean, dtype=float)
    k = np.full(mean.shape, -1, dtype=np.int64)
    if q <= 0 or not mean.size:
        return np.zeros(mean.shape, dtype=np.int64)
    large = mean > NORMAL_FROM
    if large.any():
        out = quantile(np.where(large, 0.0, mean), q)
        z = NormalDist().inv_cdf(q)
        out[large] = np.ceil(mean[large] + z * np.sqrt(mean[large]) - 0.5).astype(np.int64)
        return out
    top = float(mean.max())
    last = int(top + TAIL_SIGMAS * math.sqrt(top) + TAIL_FLOOR)
    positive = mean > 0
    log_mean = np.log(np.where(positive, mean, 1.0))
    within = np.zeros(mean.shape)
    for j in range(last + 1):
        within += np.where(positive, np.exp(j * log_mean - mean - math.lgamma(j + 1)), float(j == 0))
        k = np.where((k < 0) & (1.0 - within <= 1.0 - q), j, k)
        if (k >= 0).all():
            break
    return np.where(k < 0, last, k)
