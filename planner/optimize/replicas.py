"""The serving buy MILP: how many servers of each kind, so that their replicas together serve the request
rate within the latency targets at least cost (a mix of kinds where it is cheaper, as Melange finds:
arXiv 2404.14527). The router sends each replica at most the rate it serves within the targets.

    minimise   sum_s cost_s x_s  (+ a tie-break on power; cost: the price, or price and energy over the years)
    subject to sum_s rate_s x_s >= rate        (rate_s: requests/s one server's replicas serve)
               sum_s price_s x_s <= budget,  sum_s power_s x_s <= power cap      (when given)
               x_s <= M y_s, sum_s y_s <= 1                                          (--single-kind)
               x_s integer >= 0
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pulp

from planner.base.errors import SolverError
from planner.optimize.solver import SolveResult, new_var, solve, var_name


@dataclass(frozen=True)
class Offer:
    """One kind of server as the MILP sees it."""

    name: str
    price_usd: float
    power_w: float
    rate_per_s: float  # requests/s its replicas serve within the targets
    cost_usd: float | None = None  # what the objective counts (None: the price)

    @property
    def cost(self) -> float:
        return self.price_usd if self.cost_usd is None else self.cost_usd


def servers_alone(rate_per_s: float, per_server: float) -> int:
    """Servers of one kind that serve the rate alone: at least one (a relative tolerance, not an absolute one,
    so a tiny rate still needs a server)."""
    return max(1, math.ceil(rate_per_s / per_server * (1 - 1e-12)))


def cheapest(
    offers: list[Offer],
    rate_per_s: float,
    budget_usd: float | None = None,
    max_power_w: float | None = None,
    single_kind: bool = False,
    solver: str = "auto",
) -> tuple[SolveResult, list[int]]:
    """The servers of each offer (in order) of the cheapest purchase, and the solve's result."""
    problem = pulp.LpProblem("serve", pulp.LpMinimize)
    most = [servers_alone(rate_per_s, o.rate_per_s) for o in offers]  # each alone: never more are needed
    x = [new_var(problem, var_name("x", i), 0, most[i]) for i, o in enumerate(offers)]
    # the power term only breaks price ties: over the whole purchase it is worth under a millionth of the
    # cheapest offer's price, so it never outweighs a price difference
    watts = max(max((o.power_w for o in offers), default=0.0), 1.0) * max(sum(most), 1)
    tie = 1e-6 * min((o.cost for o in offers), default=1.0) / watts
    problem += pulp.lpSum((o.cost + tie * o.power_w) * v for o, v in zip(offers, x, strict=True))
    # as shares of the rate (>= 1), so a tiny rate is not lost in the solver's feasibility tolerance; a share
    # above 1 counts as 1 (for whole servers the same constraint: one such server alone serves the rate), so
    # no coefficient is huge either
    share = [min(o.rate_per_s / rate_per_s, 1.0) for o in offers]
    problem += pulp.lpSum(a * v for a, v in zip(share, x, strict=True)) >= 1, "rate"
    if budget_usd is not None:
        problem += pulp.lpSum(o.price_usd * v for o, v in zip(offers, x, strict=True)) <= budget_usd, "budget"
    if max_power_w is not None:
        problem += pulp.lpSum(o.power_w * v for o, v in zip(offers, x, strict=True)) <= max_power_w, "power"
    if single_kind:
        y = [new_var(problem, var_name("y", i), 0, 1) for i in range(len(offers))]
        for i, v in enumerate(x):
            problem += v <= most[i] * y[i], var_name("kind", i)
        problem += pulp.lpSum(y) <= 1, "one_kind"
    result = solve(problem, solver)
    if not result.solved:
        return result, [0] * len(offers)
    counts = [round(v.value() or 0) for v in x]
    if sum(n * o.rate_per_s for n, o in zip(counts, offers, strict=True)) < rate_per_s * (1 - 1e-9):
        raise SolverError(f"solver {result.solver} returned a purchase short of the rate; try --solver cbc")
    return result, counts
