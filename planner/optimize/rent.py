"""The rental MILP: one offering, its instance count, and the split of those instances over pricing models.

Data: options o (an offering at one micro-batch), each with allowed instance counts n and the training time
T_o(n) in hours (1 hour when no token count is given: the objective is then the hourly cost).
Variables: binaries y_{o,n} pick the option and its count; integers x_{o,n,p} split the n instances over
pricing models p. Cost = sum T_o(n) * rate_{o,p} * x_{o,n,p}.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pulp

from planner.costing import best_mix, hourly_rate
from planner.errors import SolverError
from planner.optimize.solver import SolveResult, chosen, new_var, solve, var_name
from planner.rows import CloudRow


@dataclass(frozen=True)
class RentOption:
    """One offering at one micro-batch, with its allowed instance counts and their figures."""

    row: CloudRow
    micro_batch: int
    counts: list[int]
    hours: dict[int, float]  # training hours (or 1) per count
    figures: dict[int, dict]  # perf figures per count


@dataclass(frozen=True)
class RentSolution:
    option: RentOption
    count: int
    mix: dict[str, int]
    cost_usd: float
    result: SolveResult


@dataclass
class Model:
    problem: pulp.LpProblem
    picks: dict[tuple[int, int], pulp.LpVariable]
    splits: dict[tuple[int, int], dict[str, pulp.LpVariable]]
    cost: pulp.LpAffineExpression


def create_model(options: list[RentOption], pricings: list[str], spot_share: float, budget_usd) -> Model:
    problem = pulp.LpProblem("cloud_plan", pulp.LpMinimize)
    picks = define_pick(problem, options, pricings, spot_share)
    splits = define_pricing_split(problem, options, picks, pricings)
    define_spot_share(problem, picks, splits, spot_share)
    cost = pulp.lpSum(
        options[i].hours[n] * hourly_rate(options[i].row, p) * x for (i, n), xs in splits.items() for p, x in xs.items()
    )
    problem += cost
    if budget_usd is not None:
        problem += cost <= budget_usd, "budget"
    return Model(problem, picks, splits, cost)


def define_pick(problem, options, pricings, spot_share) -> dict[tuple[int, int], pulp.LpVariable]:
    """sum_{o,n} y_{o,n} = 1 over the counts that can win (useful_counts)."""
    picks = {
        (i, n): new_var(problem, var_name("y", i, n), 0, 1, "Binary")
        for i, o in enumerate(options)
        for n in useful_counts(o, pricings, spot_share)
    }
    problem += pulp.lpSum(picks.values()) == 1, "one_offering"
    return picks


def define_pricing_split(problem, options, picks, pricings) -> dict[tuple[int, int], dict[str, pulp.LpVariable]]:
    """sum_p x_{o,n,p} = n y_{o,n}: the picked count is split over the pricing models the offering has."""
    splits = {}
    for i, n in picks:
        offered = [p for p in pricings if hourly_rate(options[i].row, p) is not None]
        splits[(i, n)] = {p: new_var(problem, var_name("x", i, n, p), 0, n) for p in offered}
        problem += pulp.lpSum(splits[(i, n)].values()) == n * picks[(i, n)], var_name("count", i, n)
    return splits


def define_spot_share(problem, picks, splits, spot_share) -> None:
    """x_{o,n,spot} <= floor(share * n) y_{o,n}."""
    for (i, n), xs in splits.items():
        if "spot" in xs:
            problem += xs["spot"] <= math.floor(spot_share * n + 1e-9) * picks[(i, n)], var_name("spot", i, n)


def useful_counts(o: RentOption, pricings: list[str], spot_share: float) -> list[int]:
    """Counts that can beat the smallest one. Instance-hours n*T(n) never fall as n grows (per-instance
    throughput never rises), so once n*T(n) times the cheapest possible blended rate exceeds the best
    integer mix at the smallest count, no larger count can win: an exact bound, not a heuristic."""
    first = o.counts[0]
    best = best_mix(o.row, first, pricings, spot_share)[0] * o.hours[first]
    rates = {p: hourly_rate(o.row, p) for p in pricings if hourly_rate(o.row, p) is not None}
    spot = rates.pop("spot", None)
    other = min(rates.values(), default=math.inf)
    if spot is None:
        blended = other
    elif other == math.inf:
        blended = spot if spot_share >= 1 else math.inf
    else:
        blended = min(other, spot_share * spot + (1 - spot_share) * other)
    if best == math.inf:
        return o.counts
    return [n for n in o.counts if n * o.hours[n] * blended <= best + 1e-6]


def optimize(options: list[RentOption], cloud, budget_usd, solver: str = "auto") -> RentSolution | None:
    """The cheapest option, count and pricing mix; None when nothing is feasible (the budget)."""
    if not options:
        return None
    model = create_model(options, cloud.pricing, cloud.spot_share_max, budget_usd)
    result = solve(model.problem, solver)
    if not result.solved:
        return None
    picked = chosen(model.picks)
    if len(picked) != 1:
        raise SolverError(f"solver {result.solver} returned {len(picked)} offerings instead of one")
    i, n = picked[0]
    mix = {p: int(round(pulp.value(v))) for p, v in model.splits[(i, n)].items() if round(pulp.value(v) or 0)}
    return RentSolution(options[i], n, mix, float(pulp.value(model.cost)), result)
