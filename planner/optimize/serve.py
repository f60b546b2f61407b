"""The serving model: among machine configurations that each meet the latency target at their cheapest
machine count, pick one: min sum_k usd_k z_k s.t. sum_k z_k = 1."""

from __future__ import annotations

import pulp

from planner.base.errors import SolverError
from planner.optimize.solver import chosen, new_var, solve, var_name


def create_model(usd: list[float]) -> tuple[pulp.LpProblem, dict[int, pulp.LpVariable]]:
    problem = pulp.LpProblem("inference", pulp.LpMinimize)
    z = define_pick(problem, len(usd))
    problem += pulp.lpSum(cost * z[k] for k, cost in enumerate(usd))
    return problem, z


def define_pick(problem: pulp.LpProblem, count: int) -> dict[int, pulp.LpVariable]:
    """sum_k z_k = 1."""
    z = {k: new_var(problem, var_name("z", k), 0, 1, "Binary") for k in range(count)}
    problem += pulp.lpSum(z.values()) == 1, "one_configuration"
    return z


def optimize(usd: list[float], solver: str = "auto") -> int:
    """The index of the configuration the model picks."""
    problem, z = create_model(usd)
    result = solve(problem, solver)
    picked = chosen(z) if result.solved else []
    if len(picked) != 1:
        raise SolverError(f"solver {result.solver} ended with status {result.status!r} and {len(picked)} picks")
    return picked[0]
