"""The purchase MILP (docs/plan.md section 3), built with pulp from the candidate table.

Sets and data: candidates k (candidates.py), each with a node range [lo_k, hi_k] (or an explicit list V_k of
allowed node counts when a global batch fixes grad_accum), e_k endpoints (NIC ports) per node, switch ports
p_k, breakout b_k, leaf down/up ports d_k/u_k, aggregation down-ports a_k, and cost/power coefficients.

Variables: z_k in {0,1} picks one candidate; integer n_k nodes; integer D_k switch down-ports; integer switch
counts per tier. Every coefficient is a catalog price or power (costing.configuration_cost), so the
objective is the bill of materials.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
import pulp

from planner import costing, fabric
from planner.candidates import allowed_nodes, leaf_split_columns
from planner.errors import SolverError
from planner.optimize.solver import SolveResult, chosen, integer_value, new_var, solve, var_name
from planner.workload import Requirements


@dataclass
class CandidateVars:
    z: pulp.LpVariable
    nodes: pulp.LpAffineExpression
    down_ports: pulp.LpVariable | int = 0
    switches: dict[str, pulp.LpAffineExpression] = field(default_factory=dict)
    uplinks: pulp.LpAffineExpression | int = 0


@dataclass
class Model:
    problem: pulp.LpProblem
    vars: dict[int, CandidateVars]
    cost: costing.Cost


@dataclass(frozen=True)
class Solution:
    """The picked candidate (its position in the table given) and its integer quantities."""

    k: int
    nodes: int
    down_ports: int
    switches: dict[str, int]
    uplinks: int
    result: SolveResult


def create_model(candidates: pd.DataFrame, req: Requirements, objective, constraints) -> Model:
    """min capex (or capex + energy over the horizon) s.t. one configuration, its fabric, budget, power."""
    problem = pulp.LpProblem("cluster_plan", pulp.LpMinimize)
    rows = candidates.to_dict("records")
    variables = {k: define_node_count(problem, k, row, req) for k, row in enumerate(rows)}
    for k, row in enumerate(rows):
        define_fabric(problem, k, row, variables[k])
    define_one_configuration(problem, variables)
    cost = define_cost(rows, variables)
    define_objective(problem, cost, objective)
    define_budget(problem, cost, constraints.budget_usd)
    define_power_cap(problem, cost, constraints.power_kw)
    return Model(problem, variables, cost)


def define_node_count(problem: pulp.LpProblem, k: int, row: dict, req: Requirements) -> CandidateVars:
    """One-hot pick and node count: lo_k z_k <= n_k <= hi_k z_k, or n_k = sum_v v y_kv with sum_v y_kv = z_k
    over the allowed node counts V_k."""
    z = new_var(problem, var_name("z", k), 0, 1, "Binary")
    allowed = allowed_nodes(row, req)
    if allowed is None:
        n = new_var(problem, var_name("n", k), 0, row["n_hi"])
        problem += n >= row["n_lo"] * z, var_name("nodes_min", k)
        problem += n <= row["n_hi"] * z, var_name("nodes_max", k)
        return CandidateVars(z, pulp.lpSum([n]))
    y = {v: new_var(problem, var_name("y", k, v), 0, 1, "Binary") for v in allowed}
    problem += pulp.lpSum(y.values()) == z, var_name("nodes_pick", k)
    return CandidateVars(z, pulp.lpSum(v * y[v] for v in allowed))


def define_fabric(problem: pulp.LpProblem, k: int, row: dict, cv: CandidateVars) -> None:
    """Switch sizing as linear constraints (fabric.size_arrays gives the same integers in closed form):
      b_k D_k >= e_k n_k                                   down-ports for all endpoints (breakout b_k)
      tier 1:  D_k <= p_k z_k, one switch                  (z_k itself)
      tier 2:  d_k L_k >= D_k, L_k <= p_k z_k, p_k S_k >= u_k L_k              leaves, spines
      tier 3:  d_k L_k >= D_k, a_k A_k >= u_k L_k, p_k C_k >= (p_k - a_k) A_k  leaves, aggregation, core
    Uplinks (switch-to-switch links) = u_k L_k (+ (p_k - a_k) A_k)."""
    tier = int(row["tier"])
    if tier == 0:
        return
    p, b = int(row["switch_ports"]), int(row["breakout"])
    d, u, a = leaf_split_columns(row)
    cap = int(fabric.max_down_ports(tier, p, row["oversubscription"]))
    D = new_var(problem, var_name("D", k), 0, cap)
    problem += b * D >= row["endpoints_per_node"] * cv.nodes, var_name("ports", k)
    problem += cap * cv.z >= D, var_name("capacity", k)
    cv.down_ports = D
    if tier == 1:
        cv.switches = {"leaf": pulp.lpSum([cv.z])}
        return
    leaves = new_var(problem, var_name("L", k), 0, -(-cap // d))
    problem += d * leaves >= D, var_name("leaves", k)
    if tier == 2:
        spines = new_var(problem, var_name("S", k))
        problem += leaves <= p * cv.z, var_name("leaf_max", k)
        problem += p * spines >= u * leaves, var_name("spines", k)
        cv.switches, cv.uplinks = {"leaf": 1 * leaves, "spine": 1 * spines}, u * leaves
        return
    aggs = new_var(problem, var_name("A", k))
    cores = new_var(problem, var_name("C", k))
    problem += a * aggs >= u * leaves, var_name("aggs", k)
    problem += p * cores >= (p - a) * aggs, var_name("cores", k)
    cv.switches = {"leaf": 1 * leaves, "spine": 1 * aggs, "core": 1 * cores}
    cv.uplinks = u * leaves + (p - a) * aggs


def define_one_configuration(problem: pulp.LpProblem, variables: dict[int, CandidateVars]) -> None:
    """sum_k z_k = 1."""
    problem += pulp.lpSum(v.z for v in variables.values()) == 1, "one_configuration"


def define_cost(rows: list[dict], variables: dict[int, CandidateVars]) -> costing.Cost:
    """capex and power summed over candidates, each by costing.configuration_cost on its variables."""
    parts = [
        costing.configuration_cost(
            row, cv.nodes, cv.down_ports, pulp.lpSum(cv.switches.values()) if cv.switches else 0, cv.uplinks
        )
        for row, cv in zip(rows, variables.values(), strict=True)
    ]
    return costing.Cost(
        pulp.lpSum(p.capex_usd for p in parts),
        pulp.lpSum(p.power_w for p in parts),
        pulp.lpSum(p.node_w for p in parts),
    )


def define_objective(problem: pulp.LpProblem, cost: costing.Cost, objective) -> None:
    """capex, or capex + energy over the horizon (TCO)."""
    problem += costing.objective_usd(cost, objective)


def define_budget(problem: pulp.LpProblem, cost: costing.Cost, budget_usd: float | None) -> None:
    if budget_usd is not None:
        problem += cost.capex_usd <= budget_usd, "budget"


def define_power_cap(problem: pulp.LpProblem, cost: costing.Cost, power_kw: float | None) -> None:
    if power_kw is not None:
        problem += cost.power_w <= power_kw * 1e3, "power"


def optimize(
    candidates: pd.DataFrame,
    scenario,
    solver: str = "auto",
    time_limit_s: float | None = None,
    gap: float | None = None,
) -> Solution | None:
    """The optimal (or time-limited best) purchase among `candidates`, or None when none is feasible."""
    if candidates.empty:
        return None
    req = Requirements.of(scenario)
    model = create_model(candidates, req, scenario.objective, scenario.constraints)
    result = solve(model.problem, solver, time_limit_s, gap)
    if not result.solved:
        return None
    picked = chosen({k: v.z for k, v in model.vars.items()})
    if len(picked) != 1:
        raise SolverError(f"solver {result.solver} returned {len(picked)} configurations instead of one")
    cv = model.vars[picked[0]]
    return Solution(
        k=picked[0],
        nodes=integer_value(cv.nodes),
        down_ports=integer_value(cv.down_ports),
        switches={t: integer_value(e) for t, e in cv.switches.items()},
        uplinks=integer_value(cv.uplinks),
        result=result,
    )
