"""The purchase MILP (docs/plan.md section 3), built with pulp from the candidate table.

Sets and data: candidates k (candidates.py), each with a node range [lo_k, hi_k] (or an explicit list V_k of
allowed node counts when a global batch fixes grad_accum) and the parameters of its designs (design.py):
e_k endpoints (NIC ports) per node, switch ports p_k, breakout b_k, endpoints per switch cage c_k, leaf
down/up ports d_k/u_k, aggregation down-ports a_k, the topology (rail-optimised or leaf-spine, leaves on top
of each rack or in the rows), nodes per rack, the storage, in-band, out-of-band and subnet-manager designs,
and the cost and power coefficients of every priced quantity.

Variables: z_k in {0,1} picks one candidate; integer n_k nodes; an integer per sized quantity (down-ports,
cages, switches per tier, scalable units, racks, rows, storage leaves and spines, management switches). Each
constraint is the linear form of a closed-form rule of planner/hardware/sizing.py, so at the optimum every quantity
equals its closed form and every coefficient is a catalog price or power (costing.configuration_cost): the
objective is the bill of materials.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pulp

from planner.assumptions import facility as F
from planner.assumptions import hardware as H
from planner.base.errors import SolverError
from planner.hardware import costing, fabric, sizing
from planner.model.workload import Requirements
from planner.optimize.solver import SolveResult, chosen, integer_value, new_var, solve, var_name
from planner.tables.buy import allowed_nodes, leaf_split_columns


@dataclass
class CandidateVars:
    z: pulp.LpVariable
    nodes: pulp.LpAffineExpression
    n_hi: int = 0
    q: dict[str, object] = field(default_factory=dict)  # quantity name -> variable or expression

    @property
    def priced(self) -> dict[str, object]:
        from planner.hardware.sizing import PRICED, SPARES

        return {name: self.q.get(name, 0) for name in (*PRICED, *SPARES)}


@dataclass
class Model:
    problem: pulp.LpProblem
    vars: dict[int, CandidateVars]
    cost: costing.Cost


@dataclass(frozen=True)
class Solution:
    """The picked candidate (its position in the table given) and its node count."""

    k: int
    nodes: int
    result: SolveResult


def create_model(candidates: pd.DataFrame, req: Requirements, objective, constraints) -> Model:
    """min capex (or capex + energy over the horizon, or an output objective's score) s.t. one configuration,
    its designs, budget, power."""
    problem = pulp.LpProblem("cluster_plan", pulp.LpMinimize)
    rows = candidates.to_dict("records")
    variables = {k: define_node_count(problem, k, row, req) for k, row in enumerate(rows)}
    for k, row in enumerate(rows):
        cv = variables[k]
        define_racks(problem, k, row, cv)
        define_fabric(problem, k, row, cv)
        define_storage(problem, k, row, cv)
        define_management(problem, k, row, cv)
        define_storage_system(problem, k, row, cv)
        define_network_racks(problem, k, row, cv)
        define_oob(problem, k, row, cv)
        define_cooling(problem, k, row, cv)
        define_spares(problem, k, row, cv)
        define_installation(row, cv)
    define_one_configuration(problem, variables)
    cost = define_cost(rows, variables)
    define_objective(problem, cost, objective, rows, variables)
    define_budget(problem, cost, constraints.budget_usd)
    define_power_cap(problem, cost, constraints.power_kw)
    return Model(problem, variables, cost)


def _int(problem: pulp.LpProblem, name: str, k: int, up: float | None = None) -> pulp.LpVariable:
    return new_var(problem, var_name(name, k), 0, up)


def define_node_count(problem: pulp.LpProblem, k: int, row: dict, req: Requirements) -> CandidateVars:
    """One-hot pick and node count: lo_k z_k <= n_k <= hi_k z_k, or n_k = sum_v v y_kv with sum_v y_kv = z_k
    over the allowed node counts V_k."""
    z = new_var(problem, var_name("z", k), 0, 1, "Binary")
    allowed = allowed_nodes(row, req)
    if allowed is None:
        n = new_var(problem, var_name("n", k), 0, row["n_hi"])
        problem += n >= row["n_lo"] * z, var_name("nodes_min", k)
        problem += n <= row["n_hi"] * z, var_name("nodes_max", k)
        return CandidateVars(z, pulp.lpSum([n]), int(row["n_hi"]))
    y = {v: new_var(problem, var_name("y", k, v), 0, 1, "Binary") for v in allowed}
    problem += pulp.lpSum(y.values()) == z, var_name("nodes_pick", k)
    return CandidateVars(z, pulp.lpSum(v * y[v] for v in allowed), max(allowed))


def define_racks(problem: pulp.LpProblem, k: int, row: dict, cv: CandidateVars) -> None:
    """npr_k R_k >= n_k; compute racks = span_k R_k (a server's span is 1; a rack-scale system is span_k racks
    per node, npr_k = 1)."""
    racks = _int(problem, "Rc", k)
    problem += int(row["nodes_per_rack"]) * racks >= cv.nodes, var_name("compute_racks", k)
    cv.q["compute_racks"] = int(row["rack_span"]) * racks


def define_cooling(problem: pulp.LpProblem, k: int, row: dict, cv: CandidateVars) -> None:
    """Coolant distribution units: cap_k (U_k - spares z_k) >= liquid_k n_k (sizing.cdus in closed form)."""
    liquid_w, capacity_w = float(row["liquid_w"]), float(row["cdu_kw"]) * 1e3
    if liquid_w <= 0 or capacity_w <= 0:
        return
    units = _int(problem, "U", k)
    spares = int(F.CDU_SPARES.value)
    problem += capacity_w * (units - spares * cv.z) >= liquid_w * cv.nodes, var_name("cdus", k)
    cv.q["cdus"] = units


def define_fabric(problem: pulp.LpProblem, k: int, row: dict, cv: CandidateVars) -> None:
    """The compute fabric (fabric.size_arrays gives the same integers in closed form):
      b_k D_k >= e_k n_k                                   logical down-ports for all endpoints
      c_k K_k >= e_k n_k  (rails: K_k = r_k K'_k, c_k K'_k >= e_rail n_k)   switch cages used
      tier 1:  D_k <= p_k z_k, one switch
      leaves:  d_k L_k >= D_k + h_k;  rail: L_k = r_k sigma_k, SU_k sigma_k >= n_k + s_k;  on top of racks:
               L_k >= l_k R_k (+ 1 when a full rack has no room for h_k)   (s_k, h_k: the subnet manager's slot)
      leaf uplinks U_k: u_k L_k (rail), t_k L_k (top of rack), ppc_k W_k with d_k ppc_k W_k >= u_k D_k (in order)
      tier 2:  p_k S_k >= U_k, S_k a divisor of a leaf's uplinks;  tier 3: a_k A_k >= U_k, p_k C_k >= (p_k - a_k) A_k
    Uplinks (switch-to-switch links) = U_k (+ (p_k - a_k) A_k). All of one plane (e_k / P_k endpoints per node),
    its counts times the P_k planes (fabric.Topology.planes)."""
    tier = int(row["tier"])
    if tier == 0:
        return
    planes = max(int(row["planes"]), 1)
    p, b, e = int(row["switch_ports"]), int(row["breakout"]), int(row["endpoints_per_node"]) // planes
    d, u, a = leaf_split_columns(row)
    cap = int(fabric.max_down_ports(tier, p, row["oversubscription"], int(row["ports_per_cage"])))
    D = _int(problem, "D", k, cap)
    held = _held_ports(row)
    problem += b * D >= e * cv.nodes, var_name("ports", k)
    problem += cap * cv.z >= D + held * cv.z, var_name("capacity", k)
    cv.q["down_ports"] = D
    rail = bool(row["rail"]) and tier >= 2
    c = int(row["cage_endpoints"])
    if rail:
        per_rail = _int(problem, "Kr", k)
        problem += c * per_rail >= int(row["rail_endpoints"]) * cv.nodes, var_name("rail_cages", k)
        cv.q["cages"] = int(row["rails"]) * per_rail
    else:
        cages = _int(problem, "K", k)
        problem += c * cages >= e * cv.nodes, var_name("cages", k)
        cv.q["cages"] = cages
    if tier == 1:
        cv.q["switches"], cv.q["leaf"] = pulp.lpSum([cv.z]), pulp.lpSum([cv.z])
        _all_planes(cv, planes)
        return
    leaves = _leaves(problem, k, row, cv, D, d, rail)
    problem += leaves <= int(fabric.max_leaves(tier, p)) * cv.z, var_name("leaf_max", k)
    up = _leaf_uplinks(problem, k, row, leaves, D, d, u, rail)
    if tier == 2:
        spines = _striped_spines(problem, k, row, cv, u)
        problem += p * spines >= up, var_name("spines", k)
        cv.q["switches"], cv.q["uplinks"] = leaves + spines, up
    else:
        aggs, cores = _int(problem, "A", k), _int(problem, "C", k)
        problem += a * aggs >= up, var_name("aggs", k)
        problem += p * cores >= (p - a) * aggs, var_name("cores", k)
        cv.q["switches"], cv.q["uplinks"] = leaves + aggs + cores, up + (p - a) * aggs
    cv.q["leaf"] = leaves
    _all_planes(cv, planes)


PLANE_QUANTITIES = ("down_ports", "cages", "switches", "leaf", "uplinks")


def _all_planes(cv: CandidateVars, planes: int) -> None:
    """One plane's fabric quantities times the planes (each plane alike)."""
    if planes > 1:
        for name in PLANE_QUANTITIES:
            if name in cv.q:
                cv.q[name] = planes * cv.q[name]


def _striped_spines(problem, k: int, row: dict, cv: CandidateVars, u: int):
    """S = sum_v v x_kv over the divisors v of a leaf's uplinks, sum_v x_kv = z_k (fabric.striped_spines:
    every leaf spreads its uplinks evenly over every spine; the objective takes the smallest that holds U)."""
    per_leaf = int(row["rack_leaf_up"]) if row["tor"] else int(row["rail_leaf_up"]) if row["rail"] else u
    options = fabric.divisors(per_leaf)
    picks = [new_var(problem, var_name("spines_of", k, v), 0, 1, "Binary") for v in options]
    problem += pulp.lpSum(picks) == cv.z, var_name("spine_pick", k)
    return pulp.lpSum(v * x for v, x in zip(options, picks, strict=True))


def _leaf_uplinks(problem, k: int, row: dict, leaves, down_ports, d: int, u: int, rail: bool):
    """The leaves' uplinks (fabric.uplinks_for): u per rail leaf (the full SU), the full rack's per top-of-rack
    leaf, and for leaves filled in order ppc W with d ppc W >= u D (W whole uplink cages)."""
    if rail:
        return int(row["rail_leaf_up"]) * leaves
    if row["tor"]:
        return int(row["rack_leaf_up"]) * leaves
    ppc = max(int(row["ports_per_cage"]), 1)
    cages = _int(problem, "W", k)
    problem += d * ppc * cages >= u * down_ports, var_name("uplink_cages", k)
    return ppc * cages


def _held_ports(row: dict) -> int:
    """Leaf down-ports of one plane held for the subnet manager: one node slot's (fabric.size_arrays)."""
    per_plane = int(row["endpoints_per_node"]) // max(int(row["planes"]), 1)
    return -(-int(row["reserved_nodes"]) * per_plane // max(int(row["breakout"]), 1))


def _leaves(problem, k: int, row: dict, cv: CandidateVars, down_ports, d: int, rail: bool):
    """Leaves, with the subnet manager's slot held: rail SUs for n + r nodes; in order d L >= D + held; on
    top of racks one more leaf when a full rack's leaves have no room for the held ports."""
    leaves, reserved, held = _int(problem, "L", k), int(row["reserved_nodes"]), _held_ports(row)
    if rail:
        sus = _int(problem, "SU", k)
        problem += int(row["su_nodes"]) * sus >= cv.nodes + reserved * cv.z, var_name("scalable_units", k)
        problem += leaves == int(row["rails"]) * sus, var_name("rail_leaves", k)
        cv.q["sus"] = sus
    elif row["tor"]:
        npr, b = int(row["nodes_per_rack"]), max(int(row["breakout"]), 1)
        room = int(row["rack_leaves"]) * d - -(-npr * int(row["endpoints_per_node"]) // b)
        extra = 1 if room < held else 0
        rack_leaves = int(row["rack_leaves"]) * cv.q["compute_racks"]
        problem += leaves >= rack_leaves + extra * cv.z, var_name("rack_leaves", k)
    else:
        problem += d * leaves >= down_ports + held * cv.z, var_name("leaves", k)
    return leaves


def define_storage(problem: pulp.LpProblem, k: int, row: dict, cv: CandidateVars) -> None:
    """Storage leaves of d_s down-ports; spines and uplinks only when there are two leaves or more:
    d_s L_s >= s n_k,  c_s K_s >= s n_k,  L_s <= 1 + M w_k,  p_s S_s >= u_s L_s - u_s M (1 - w_k),
    U_s >= u_s L_s - u_s M (1 - w_k)   (w_k binary: a second leaf brings the spines)."""
    s = int(row["storage_ports_per_node"])
    if int(row["tier"]) == 0 or s == 0:
        return
    ports = s * cv.nodes
    d, up, p = int(row["storage_down"]), int(row["storage_up"]), int(row["storage_switch_ports"])
    big = -(-s * cv.n_hi // d) + 1
    leaves, spines, uplinks = _int(problem, "Ls", k), _int(problem, "Ss", k), _int(problem, "Us", k)
    cages = _int(problem, "Ks", k)
    spread = new_var(problem, var_name("ws", k), 0, 1, "Binary")
    problem += d * leaves >= ports, var_name("storage_leaves", k)
    problem += int(row["storage_cage_endpoints"]) * cages >= ports, var_name("storage_cages", k)
    problem += leaves <= 1 + big * spread, var_name("storage_spread", k)
    problem += p * spines >= up * leaves - up * big * (1 - spread), var_name("storage_spines", k)
    problem += uplinks >= up * leaves - up * big * (1 - spread), var_name("storage_uplinks", k)
    cv.q |= {"storage_ports": ports, "storage_cages": cages, "storage_switches": leaves + spines}
    cv.q["storage_uplinks"] = uplinks


def define_management(problem: pulp.LpProblem, k: int, row: dict, cv: CandidateVars) -> None:
    """In-band switches d_i Q_i >= i n_k; subnet managers: a fixed count per picked fabric."""
    if int(row["tier"]) == 0:
        return
    i = int(row["inband_ports_per_node"])
    if i:
        switches = _int(problem, "Qi", k)
        problem += int(row["inband_down"]) * switches >= i * cv.nodes, var_name("inband", k)
        cv.q |= {"inband_ports": i * cv.nodes, "inband_switches": switches}
    cv.q["ufm"] = int(row["ufm_count"]) * cv.z


def define_storage_system(problem: pulp.LpProblem, k: int, row: dict, cv: CandidateVars) -> None:
    """File-system blocks B (sizing.storage_blocks): R B >= r g n, W B >= w n, C B >= T z_k; management
    servers M = base z_k + more X, step X >= g n - step z_k (X integer >= 0)."""
    if int(row["tier"]) == 0:
        return
    gpus = int(row["gpus_per_node"]) * cv.nodes
    if row["storage_block_skus"]:
        blocks = _int(problem, "B", k)
        problem += (
            float(row["storage_block_read"]) * blocks >= float(row["storage_read_per_gpu"]) * gpus,
            var_name("storage_read", k),
        )
        problem += (
            float(row["storage_block_write"]) * blocks >= float(row["storage_write_per_node"]) * cv.nodes,
            (var_name("storage_write", k)),
        )
        problem += (
            float(row["storage_block_tb"]) * blocks >= float(row["storage_tb"]) * cv.z,
            var_name("storage_room", k),
        )
        cv.q["storage_blocks"] = blocks
    base = int(row["mgmt_servers_base"])
    if base:
        step, more = int(H.MANAGEMENT_GPUS_PER_STEP.value), int(H.MANAGEMENT_SERVERS_PER_STEP.value)
        steps = _int(problem, "Xm", k)
        problem += step * steps >= gpus - step * cv.z, var_name("mgmt_steps", k)
        cv.q["mgmt_servers"] = base * cv.z + more * steps


def define_network_racks(problem: pulp.LpProblem, k: int, row: dict, cv: CandidateVars) -> None:
    """Rows of compute racks, each with a network rack, and enough network racks for the network gear:
    rpr rows >= R_c;  R_n >= rows;  usable_U R_n >= sum units;  rack_W R_n >= sum watts."""
    if int(row["tier"]) == 0:
        cv.q["network_racks"] = 0
        return
    rows_ = _int(problem, "rows", k)
    if row["row_network_rack"]:
        problem += int(row["racks_per_row"]) * rows_ >= cv.q["compute_racks"], var_name("rows", k)
    racks = _int(problem, "Rn", k)
    q = cv.q
    in_rows = q.get("switches", 0) - (q.get("leaf", 0) if row["tor"] else 0)
    parts = [
        (in_rows, row["switch_units"], row["switch_w"]),
        (q.get("storage_switches", 0), row["storage_switch_units"], row["storage_switch_w"]),
        (q.get("inband_switches", 0), row["inband_switch_units"], row["inband_switch_w"]),
        (q.get("ufm", 0), row["ufm_units"], row["ufm_w"]),
        (q.get("storage_blocks", 0), row["storage_block_units"], row["storage_block_w"]),
        (q.get("mgmt_servers", 0), row["mgmt_server_units"], row["mgmt_server_w"]),
    ]
    problem += racks >= rows_, var_name("row_racks", k)
    problem += (
        int(row["usable_units"]) * racks >= pulp.lpSum(x * float(un) for x, un, _ in parts),
        var_name("net_space", k),
    )
    problem += float(row["rack_w"]) * racks >= pulp.lpSum(x * float(w) for x, _, w in parts), var_name("net_power", k)
    q["network_racks"] = racks


def define_oob(problem: pulp.LpProblem, k: int, row: dict, cv: CandidateVars) -> None:
    """One out-of-band port per node, switch, appliance and PDU: p_o Q_o >= ports."""
    per_switch = int(row["oob_ports_per_switch"])
    if int(row["tier"]) == 0 or not per_switch:
        return
    q = cv.q
    pdus = 0
    if row["count_pdus"]:
        pdus = int(row["pdus_compute"]) * q["compute_racks"] + int(row["pdus_network"]) * q["network_racks"]
    ports = cv.nodes + q.get("switches", 0) + q.get("storage_switches", 0) + q.get("inband_switches", 0)
    ports = ports + q.get("storage_blocks", 0) + q.get("mgmt_servers", 0)
    switches = _int(problem, "Qo", k)
    problem += per_switch * switches >= ports + q.get("ufm", 0) + pdus, var_name("oob", k)
    q["oob_switches"], q["oob_ports"] = switches, ports + q.get("ufm", 0) + pdus


def define_spares(problem: pulp.LpProblem, k: int, row: dict, cv: CandidateVars) -> None:
    """Spares (sizing.spares): m X >= share x the quantity spared, X integer (m links make whole parts), so
    m X is the closed form's at the optimum (every spare has a price); spare nodes also cover the repairs
    (_repair_cover); spare switches: so many per model in use, with the picked candidate z_k."""
    if int(row["tier"]) == 0:
        return
    q = cv.q | {"nodes": cv.nodes, "endpoints": int(row["endpoints_per_node"]) * cv.nodes}
    node_share, link_share = float(row["spare_node_share"]), float(row["spare_link_share"])
    for name, base, share in [("spare_nodes", "nodes", node_share)] + [
        (name, base, link_share) for name, base in sizing.SPARED_LINKS.items()
    ]:
        cover = _repair_cover(row, cv) if name == "spare_nodes" else None
        if (share > 0 or cover is not None) and base in q:
            unit = 1 if name == "spare_nodes" else max(int(row[f"{sizing.SPARES[name]}_spare_unit"]), 1)
            nearest = 0.5 if name == "spare_nodes" else 0.0  # nodes to the nearest, links rounded up
            spare = _int(problem, name, k)  # in units of whole parts
            problem += unit * spare >= share * q[base] - nearest * cv.z, var_name(name, k)
            if cover is not None:
                problem += spare >= cover, var_name("spare_cover", k)
            cv.q[name] = unit * spare
    per_model = int(row["spare_switches_per_model"])
    used = {
        "switches": True,
        "storage_switches": "storage_switches" in q,
        "inband_switches": "inband_switches" in q,
        "oob_switches": "oob_switches" in q,
    }
    for name, base in sizing.SPARED_MODELS.items():
        if per_model and used[base] and int(row[f"{sizing.SPARES[name]}_spare_model"]):
            cv.q[name] = per_model * cv.z


def _repair_cover(row: dict, cv: CandidateVars):
    """The spare nodes that cover the repairs (sizing.repair_cover, a step function of n) as a linear bound
    exact at the row's smallest count and above the step function up to its largest: c(lo) z + s (n - lo z),
    s the steepest rise of c over (lo, hi] (every candidate's optimum is its smallest count: cost grows with n).
    None when the rule buys nothing."""
    lo, hi = int(row["n_lo"]), max(int(row["n_hi"]), int(row["n_lo"]))
    counts = np.arange(lo, hi + 1)
    cover = sizing.repair_cover({c: row[c] for c in REPAIR_COLUMNS}, counts)
    if not cover.any():
        return None
    rise = (cover[1:] - cover[0]) / (counts[1:] - lo) if hi > lo else np.zeros(0)
    slope = float(rise.max()) if rise.size else 0.0
    return int(cover[0]) * cv.z + slope * (cv.nodes - lo * cv.z)


REPAIR_COLUMNS = ("node_failures_per_day", "repair_hours", "spare_repair_cover")


def define_installation(row: dict, cv: CandidateVars) -> None:
    """Technician-hours (sizing.install_hours), linear in the node count and the sized links and boxes."""
    per_node = float(row["install_per_node"])
    if per_node <= 0:
        return
    q = cv.q | {"endpoints": int(row["endpoints_per_node"]) * cv.nodes if int(row["tier"]) else 0}
    links = pulp.lpSum([q.get(name, 0) for name in sizing.CABLED])
    boxes = pulp.lpSum([q.get(name, 0) for name in sizing.MOUNTED])
    hours = per_node * cv.nodes + F.INSTALL_HOURS["cable"].value * links + F.INSTALL_HOURS["box"].value * boxes
    cv.q["install_hours"] = (1 + F.INSTALL_OVERHEAD.value) * hours


def define_one_configuration(problem: pulp.LpProblem, variables: dict[int, CandidateVars]) -> None:
    """sum_k z_k = 1."""
    problem += pulp.lpSum(v.z for v in variables.values()) == 1, "one_configuration"


def define_cost(rows: list[dict], variables: dict[int, CandidateVars]) -> costing.Cost:
    """capex and power summed over candidates, each by costing.configuration_cost on its variables."""
    parts = [
        costing.configuration_cost(row, cv.nodes, **cv.priced) for row, cv in zip(rows, variables.values(), strict=True)
    ]
    return costing.Cost(
        pulp.lpSum(p.capex_usd for p in parts),
        pulp.lpSum(p.power_w for p in parts),
        pulp.lpSum(p.node_w for p in parts),
        pulp.lpSum(p.pue_node_w for p in parts),
    )


def define_objective(problem: pulp.LpProblem, cost: costing.Cost, objective, rows, variables) -> None:
    """capex, or capex + energy over the horizon (TCO); for an output objective (cost per token, throughput,
    days) sum_k rank_k z_k, each candidate at its one node count ranked by its score, then its capex
    (planner.tables.buy.score; score_rank, or the score itself), the budget and power rows as for the others."""
    if objective.kind in costing.OUTPUT_KINDS:  # the candidates' rank by (score, capex): equal scores by price
        rank = [float(row.get("score_rank", row["score"])) for row in rows]
        problem += pulp.lpSum(r * cv.z for r, cv in zip(rank, variables.values(), strict=True))
    else:
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
    return Solution(k=picked[0], nodes=integer_value(model.vars[picked[0]].nodes), result=result)
