"""The rental MILP: one offering, its instance count, and how those instances are priced.

Data: options o (an offering at one micro-batch), each with allowed instance counts n, and per count the
variants v it can run as (planner/answers/rent.py builds them): the pricing models its instances may use, how
many are on spot (fixed per variant, since spot preemptions lengthen the whole synchronous job), the job's
wall-clock hours W_v and the hours billed per instance under each pricing B_{v,p} (a Capacity Block bills
whole blocks). Without cloud.mix_pricing every variant has one pricing model.
Variables: binaries y_{o,n,v} pick the option, count and variant; integers x_{o,n,v,p} split the instances
not on spot over the variant's pricing models.
Cost = sum rate_p B_{v,p} x_{o,n,v,p} + rate_spot B_{v,spot} spot_v y_{o,n,v}.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pulp

from planner.base.errors import SolverError
from planner.catalog.rows import CloudRow
from planner.optimize.solver import SolveResult, chosen, new_var, solve, var_name
from planner.tables.rent import CAPACITY_BLOCK_CAP, RentOption, Variant, hourly_rate, is_capacity_block


@dataclass(frozen=True)
class RentSolution:
    option: RentOption
    count: int
    variant: Variant
    mix: dict[str, int]
    cost_usd: float
    result: SolveResult


@dataclass
class Model:
    problem: pulp.LpProblem
    picks: dict[tuple[int, int, int], pulp.LpVariable]
    splits: dict[tuple[int, int, int], dict[str, pulp.LpVariable]]
    cost: pulp.LpAffineExpression


def instance_cost(row: CloudRow, v: Variant, pricing: str) -> float:
    """USD per instance of the job under a pricing model of the variant."""
    return hourly_rate(row, pricing) * v.billed_hours[pricing]


def cheapest_split(row: CloudRow, n: int, v: Variant) -> tuple[float, dict[str, int]]:
    """Cheapest cost of n instances in variant v: spot fixed, the rest on the cheapest pricing per instance
    (a Capacity Block up to its instance cap). Exact: each pricing is linear with at most one cap."""
    mix = {"spot": v.spot} if v.spot else {}
    cost = instance_cost(row, v, "spot") * v.spot if v.spot else 0.0
    left = n - v.spot
    for p in sorted(v.pricings, key=lambda p: instance_cost(row, v, p)):
        take = min(left, CAPACITY_BLOCK_CAP) if is_capacity_block(row, p) else left
        if take:
            mix[p], cost, left = take, cost + take * instance_cost(row, v, p), left - take
    return (cost, mix) if left == 0 else (math.inf, {})


def create_model(options: list[RentOption], budget_usd) -> Model:
    problem = pulp.LpProblem("cloud_plan", pulp.LpMinimize)
    picks = define_pick(problem, options)
    splits = define_pricing_split(problem, options, picks)
    define_capacity_block_cap(problem, options, splits, picks)
    cost = pulp.lpSum(
        instance_cost(options[i].row, options[i].variants[n][k], p) * x
        for (i, n, k), xs in splits.items()
        for p, x in xs.items()
    )
    cost += pulp.lpSum(
        instance_cost(options[i].row, v, "spot") * v.spot * y
        for (i, n, k), y in picks.items()
        if (v := options[i].variants[n][k]).spot
    )
    problem += cost
    if budget_usd is not None:
        problem += cost <= budget_usd, "budget"
    return Model(problem, picks, splits, cost)


def define_pick(problem, options) -> dict[tuple[int, int, int], pulp.LpVariable]:
    """sum_{o,n,v} y_{o,n,v} = 1 over the counts that can win (useful_counts)."""
    picks = {
        (i, n, k): new_var(problem, var_name("y", i, n, k), 0, 1, "Binary")
        for i, o in enumerate(options)
        for n in useful_counts(o)
        for k in range(len(o.variants[n]))
    }
    problem += pulp.lpSum(picks.values()) == 1, "one_offering"
    return picks


def define_pricing_split(problem, options, picks) -> dict[tuple[int, int, int], dict[str, pulp.LpVariable]]:
    """sum_p x_{o,n,v,p} + spot_v y_{o,n,v} = n y_{o,n,v}: the picked count is split over the variant's
    pricing models, with its spot instances fixed."""
    splits = {}
    for i, n, k in picks:
        v = options[i].variants[n][k]
        splits[(i, n, k)] = {p: new_var(problem, var_name("x", i, n, k, p), 0, n) for p in v.pricings}
        problem += (
            pulp.lpSum(splits[(i, n, k)].values()) + v.spot * picks[(i, n, k)] == n * picks[(i, n, k)],
            var_name("count", i, n, k),
        )
    return splits


def define_capacity_block_cap(problem, options, splits, picks) -> None:
    """x_{o,n,v,block} <= cap y_{o,n,v}: AWS sells at most 256 instances across Capacity Blocks."""
    for (i, n, k), xs in splits.items():
        for p, x in xs.items():
            if is_capacity_block(options[i].row, p) and n > CAPACITY_BLOCK_CAP:
                problem += x <= CAPACITY_BLOCK_CAP * picks[(i, n, k)], var_name("block_cap", i, n, k)


def useful_counts(o: RentOption) -> list[int]:
    """Counts that can beat the smallest one. Instance-hours n*T(n) never fall as n grows (per-instance
    throughput never rises), and every variant bills at least its uninterrupted hours T(n) (goodput <= 1,
    blocks round up), so once n*T(n) times the lowest rate any variant uses exceeds the cheapest variant
    at the smallest count, no larger count can win: an exact bound, not a heuristic."""
    first = o.counts[0]
    best = min(cheapest_split(o.row, first, v)[0] for v in o.variants[first])
    rates = [hourly_rate(o.row, p) for n in o.counts for v in o.variants[n] for p in _pricings(v)]
    lowest = min(rates)
    if best == math.inf:
        return o.counts
    return [n for n in o.counts if n * o.hours[n] * lowest <= best + 1e-6]


def _pricings(v: Variant) -> tuple[str, ...]:
    return v.pricings + (("spot",) if v.spot else ())


def optimize(options: list[RentOption], budget_usd, solver: str = "auto") -> RentSolution | None:
    """The cheapest option, count and pricing; None when nothing is feasible (the budget)."""
    if not options:
        return None
    model = create_model(options, budget_usd)
    result = solve(model.problem, solver)
    if not result.solved:
        return None
    picked = chosen(model.picks)
    if len(picked) != 1:
        raise SolverError(f"solver {result.solver} returned {len(picked)} offerings instead of one")
    i, n, k = picked[0]
    v = options[i].variants[n][k]
    mix = {p: int(round(pulp.value(x))) for p, x in model.splits[(i, n, k)].items() if round(pulp.value(x) or 0)}
    if v.spot:
        mix["spot"] = v.spot
    return RentSolution(options[i], n, v, mix, float(pulp.value(model.cost)), result)
