"""The purchase MILP (MODEL.md s.6), built with pulp from the candidate table. No I/O, no solving.

Sets and data: candidates k (candidates.py), each with a node range [lo_k, hi_k] (or an explicit list V_k of
allowed node counts when a global batch fixes grad_accum), e_k endpoints (NIC ports) per node, switch ports
p_k, breakout b_k, leaf down/up ports d_k/u_k, aggregation down-ports a_k, and cost/power coefficients.

Variables: z_k in {0,1} picks one candidate; integer n_k nodes; integer D_k switch down-ports; integer switch
counts per tier. Every coefficient is a catalog price or power, so the objective is the bill of materials.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd
import pulp

from planner import fabric
from planner.scenario import Scenario

HOURS_PER_YEAR = 8760.0


def new_var(
    problem: pulp.LpProblem, name: str, low: float | None = 0, up: float | None = None, cat: str = "Integer"
) -> pulp.LpVariable:
    """Variables owned by the problem (PuLP >= 3.3's add_variable; plain LpVariable before it)."""
    if hasattr(problem, "add_variable"):
        return problem.add_variable(name, low, up, cat)
    return pulp.LpVariable(name, low, up, cat)


def usd_per_watt_drawn(objective) -> float:
    """Energy cost of one watt of IT draw over the horizon: hours x years x PUE x $/kWh / 1000."""
    return HOURS_PER_YEAR * objective.years * objective.pue * objective.usd_per_kwh / 1e3


def var_name(*parts: object) -> str:
    """Solver-safe variable names; results are read through the Python objects, never by parsing names."""
    return re.sub(r"[^A-Za-z0-9_]", "_", "_".join(str(p) for p in parts))


@dataclass
class CandidateVars:
    z: pulp.LpVariable
    nodes: pulp.LpAffineExpression
    down_ports: pulp.LpVariable | None = None
    switches: dict[str, pulp.LpAffineExpression] = field(default_factory=dict)
    uplinks: pulp.LpAffineExpression | int = 0
    choices: dict[int, pulp.LpVariable] = field(default_factory=dict)  # allowed node count -> binary


@dataclass
class Model:
    problem: pulp.LpProblem
    vars: dict[int, CandidateVars]
    capex: pulp.LpAffineExpression
    power_w: pulp.LpAffineExpression
    energy_usd: pulp.LpAffineExpression


def define_choice(problem: pulp.LpProblem, k: int, row: dict) -> CandidateVars:
    """One-hot pick and node count: lo_k z_k <= n_k <= hi_k z_k, or n_k = sum_v v y_kv with sum_v y_kv = z_k
    over the allowed node counts V_k."""
    z = new_var(problem, var_name("z", k), 0, 1, "Binary")
    allowed = row["allowed_nodes"]
    if allowed is None:
        n = new_var(problem, var_name("n", k), 0, row["n_hi"])
        problem += n >= row["n_lo"] * z, var_name("nodes_min", k)
        problem += n <= row["n_hi"] * z, var_name("nodes_max", k)
        return CandidateVars(z, pulp.lpSum([n]))
    y = {v: new_var(problem, var_name("y", k, v), 0, 1, "Binary") for v in allowed}
    problem += pulp.lpSum(y.values()) == z, var_name("nodes_pick", k)
    return CandidateVars(z, pulp.lpSum(v * y[v] for v in allowed), choices=y)


def define_fabric(problem: pulp.LpProblem, k: int, row: dict, cv: CandidateVars) -> None:
    """Switch sizing as linear constraints (fabric.size gives the same integers in closed form):
      b_k D_k >= e_k n_k                                   down-ports for all endpoints (breakout b_k)
      tier 1:  D_k <= p_k z_k, one switch                  (z_k itself)
      tier 2:  d_k L_k >= D_k, L_k <= p_k z_k, p_k S_k >= u_k L_k              leaves, spines
      tier 3:  d_k L_k >= D_k, a_k A_k >= u_k L_k, p_k C_k >= (p_k - a_k) A_k  leaves, aggregation, core
    Uplinks (switch-to-switch links) = u_k L_k (+ (p_k - a_k) A_k)."""
    tier = row["tier"]
    if tier == 0:
        return
    p, b, d, u, a = row["switch_ports"], row["breakout"], row["leaf_down"], row["leaf_up"], row["agg_down"]
    cap = fabric.max_down_ports(tier, p, row["oversubscription"])
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


def cost_terms(row: dict, nodes, down_ports, switches, uplinks):
    """(capex USD, nameplate power W, node power W) of a candidate from its quantities. The quantities may be
    numbers (solve.costs, the brute force) or pulp expressions (the MILP): one formula serves both."""
    endpoints = row["endpoints_per_node"] * nodes
    capex = (
        row["node_usd"] * nodes
        + row["switch_usd"] * switches
        + row["endpoint_usd"] * endpoints
        + row["port_usd"] * down_ports
        + row["uplink_usd"] * uplinks
    )
    node_w = row["node_w"] * nodes
    network_w = (
        row["switch_w"] * switches
        + row["endpoint_w"] * endpoints
        + row["port_w"] * down_ports
        + row["uplink_w"] * uplinks
    )
    return capex, node_w + network_w, node_w


def build_model(
    candidates: pd.DataFrame,
    scenario: Scenario,
    restrict: dict[str, object] | None = None,
    exclude: list[list[int]] | None = None,
) -> Model:
    """min capex (or capex + energy over the horizon)
    s.t. sum_k z_k = 1; budget; power cap; optional restriction (column == value) and no-good cuts."""
    problem = pulp.LpProblem("cluster_plan", pulp.LpMinimize)
    rows = candidates.to_dict("records")
    all_vars: dict[int, CandidateVars] = {}
    capex_terms, power_terms, draw_terms = [], [], []
    objective = scenario.objective
    for k, row in enumerate(rows):
        cv = define_choice(problem, k, row)
        define_fabric(problem, k, row, cv)
        switches = pulp.lpSum(cv.switches.values()) if cv.switches else 0
        down = cv.down_ports if cv.down_ports is not None else 0
        capex, power, node_w = cost_terms(row, cv.nodes, down, switches, cv.uplinks)
        all_vars[k] = cv
        capex_terms.append(capex)
        power_terms.append(power)
        draw_terms.append(objective.server_draw_fraction * node_w + (power - node_w))
    problem += pulp.lpSum(v.z for v in all_vars.values()) == 1, "one_configuration"
    for column, value in (restrict or {}).items():
        problem += (
            pulp.lpSum(all_vars[k].z for k, r in enumerate(rows) if r[column] == value) == 1,
            var_name("only", column),
        )
    for i, group in enumerate(exclude or []):
        problem += pulp.lpSum(all_vars[k].z for k in group) == 0, var_name("nogood", i)
    capex, power_w = pulp.lpSum(capex_terms), pulp.lpSum(power_terms)
    energy = pulp.lpSum(draw_terms) * usd_per_watt_drawn(objective)
    problem += capex + (energy if objective.kind == "tco" else 0)
    if scenario.constraints.budget_usd is not None:
        problem += capex <= scenario.constraints.budget_usd, "budget"
    if scenario.constraints.power_kw is not None:
        problem += power_w <= scenario.constraints.power_kw * 1e3, "power"
    return Model(problem, all_vars, capex, power_w, energy)
