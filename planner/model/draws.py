"""Random draws of what a plan does not know, for `planner sweep` (assumptions: planner/assumptions/uncertainty.py).

One draw is
  * a price factor per part: lognormal with mean 1 and log standard deviation s = the catalog row's confidence
    (PRICE_UNCERTAINTY: solid 5%, medium 15%, low 30%, estimate 40%), its log made of a share rho
    (PRICE_FAMILY_SHARE) common to the part's vendor and category and 1 - rho its own:
    log f = s (sqrt(rho) z_family + sqrt(1 - rho) z_part) - s^2 / 2;
  * a throughput factor per validation group (arch|framework|fabric, as planner.model.calibration picks it):
    measured / predicted = exp(-r), r drawn from the group's leave-one-publication-out log residuals (their
    quantiles p5..p95, linear between them and extrapolated from the end slopes beyond, within the calibration's
    bounds), one r per group, so every configuration of one GPU, framework and fabric shares the model's error;
  * one multiplier on every interruption rate (FAILURE_RATE_SPREAD, mean 1);
  * a lead-time factor per part family (LEAD_TIME_SPREAD, median 1: a family's stated weeks are its typical
    delivery, and the last part to arrive sets the plan's).

Draw k comes from numpy's generator seeded with (seed, k), so it is the same however the draws are split into
tasks, whichever worker runs them and whether a sweep is resumed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from planner.base.limits import MAX_LOG_RESIDUAL
from planner.model.calibration import QUANTILES

PROBABILITIES = np.asarray(QUANTILES, dtype=float)


@dataclass(frozen=True)
class Spread:
    """How much each uncertain input varies, in the fixed order draws are made in."""

    price_sigma: np.ndarray  # per part: the log standard deviation of its price
    price_family: np.ndarray  # per part: the index of its vendor-and-category family
    families: int
    family_share: float
    residuals: np.ndarray  # per validation group: its log-residual quantiles at PROBABILITIES
    rate_sigma: float
    lead_sigma: float
    lead_families: int


@dataclass(frozen=True)
class Draws:
    """Draws first..first+n-1 of a sweep (rows: draws)."""

    first: int
    price: np.ndarray  # [n x parts] factor on each part's price
    throughput: np.ndarray  # [n x groups] measured / predicted throughput
    rate: np.ndarray  # [n] factor on the job's interruption rate
    lead: np.ndarray  # [n x lead families] factor on each family's lead time


def draw(spread: Spread, seed: int, first: int, count: int) -> Draws:
    """Draws first..first+count-1."""
    rows = [_one(spread, np.random.default_rng([seed, k])) for k in range(first, first + count)]
    price, throughput, rate, lead = (np.array([r[i] for r in rows]) for i in range(4))
    return Draws(first, price.reshape(count, -1), throughput.reshape(count, -1), rate, lead.reshape(count, -1))


def _one(s: Spread, rng: np.random.Generator) -> tuple:
    # the order of the calls below is the draw's definition: changing it changes every sweep's numbers
    family_z = rng.standard_normal(s.families)
    own_z = rng.standard_normal(len(s.price_sigma))
    z = np.sqrt(s.family_share) * family_z[s.price_family] + np.sqrt(1 - s.family_share) * own_z
    price = np.exp(s.price_sigma * z - s.price_sigma**2 / 2)
    throughput = np.exp(-residual(s.residuals, rng.random(len(s.residuals))))
    rate = float(np.exp(s.rate_sigma * rng.standard_normal() - s.rate_sigma**2 / 2))
    lead = np.exp(s.lead_sigma * rng.standard_normal(s.lead_families))
    return price, throughput, rate, lead


def residual(quantiles: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The log residual at probability u[g] of each group g's quantile function (`quantiles`: [groups x
    PROBABILITIES]): linear between the quantiles, the end segments' slopes beyond p5 and p95."""
    p, out = PROBABILITIES, np.empty(len(u))
    for g, (q, ug) in enumerate(zip(quantiles, u, strict=True)):
        if ug < p[0]:
            value = q[0] - (p[0] - ug) * (q[1] - q[0]) / (p[1] - p[0])
        elif ug > p[-1]:
            value = q[-1] + (ug - p[-1]) * (q[-1] - q[-2]) / (p[-1] - p[-2])
        else:
            value = np.interp(ug, p, q)
        out[g] = value
    return np.clip(out, -MAX_LOG_RESIDUAL, MAX_LOG_RESIDUAL)
