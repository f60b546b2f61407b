"""The fleet MILP (docs/fleet.md section 3): what to buy, when and from whom, where each training run and
inference service runs, and what to rent, over a horizon of quarters, at least discounted cost.

Built from the tables of planner/tables/fleet.py, PyPSA-style: `create_model` reads as a table of
contents, one `define_*` per family of variables and constraints.

Sets: periods t; offers o (a catalog server from a vendor); pools p (identical nodes on one network);
installed entries i (nodes owned, in pool p_i); training columns c (one job's option: a resource, a node
count, a contiguous run of periods from a start); serving rows v (a service on a resource, with GPUs and
tokens/s per replica); cloud offerings r.

Variables: x[o,p,t] units of o delivered into p in t (integer); tier bands q[o,t,k] and their binaries;
a[i,t] installed nodes kept in service; per networked pool, down-ports D, leaves L, spines S, uplinks U
owned in t (integer, never decreasing) and the binary "more than one switch" m[p]; run[c] (binary, one
per job); replicas g[v,t] (continuous: replicas share GPU time); serving instances I[r,t] (integer);
racks R[p,t] (integer).
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
import pulp

from planner.base.errors import SolverError
from planner.hardware import costing
from planner.inputs.fleet import HOURS_PER_PERIOD
from planner.optimize.solver import SolveResult, bounded, new_var, proven_gap, resolve, solve, temp_log, var_name
from planner.tables.fleet import FleetData

RELAXATIONS = ("deadlines", "power", "racks", "stock", "quota", "demand")
# the LP-guided start's share of the time limit: a start, the full search keeps the most (docs/fleet.md section 9)
START_SHARE = 0.25
# the rounding search's share of what is left after it, when it found no plan (lp_guided_start)
ROUND_SHARE = 0.4
MIN_START_S = 0.1  # a solver given no time may take it as no limit
MONTHS_PER_PERIOD = 3


def _sum(terms) -> pulp.LpAffineExpression:
    """A linear expression from (variable, coefficient) pairs: faster than lpSum of products."""
    return pulp.LpAffineExpression([(v, c) for v, c in terms if c])


@dataclass
class Model:
    problem: pulp.LpProblem
    data: FleetData
    relax: frozenset[str]
    buy: dict = field(default_factory=dict)  # (o, p, t) -> units delivered
    bands: dict = field(default_factory=dict)  # (o, t, k) -> (units in band, band binary)
    spend: dict = field(default_factory=dict)  # (o, t) -> server spend expression
    active: dict = field(default_factory=dict)  # (i, t) -> installed nodes in service
    nodes: dict = field(default_factory=dict)  # (p, t) -> nodes in service
    fabric: dict = field(default_factory=dict)  # (p, t) -> {"D","K","L","S","U"} owned (expressions)
    added: dict = field(default_factory=dict)  # (p, t) -> {"D","K","L","S","U"} bought in t
    multi_leaf: dict = field(default_factory=dict)  # p -> binary
    run: dict = field(default_factory=dict)  # column -> binary
    held: dict = field(default_factory=dict)  # (kind, resource, t) -> nodes or instances held by training
    replicas: dict = field(default_factory=dict)  # (v, t) -> replicas
    instances: dict = field(default_factory=dict)  # (r, t) -> serving instances
    racks: dict = field(default_factory=dict)  # (p, t) -> racks
    power_w: dict = field(default_factory=dict)  # t -> nameplate W
    node_w: dict = field(default_factory=dict)  # t -> nameplate W of nodes
    network_w: dict = field(default_factory=dict)  # t -> nameplate W of the network
    cash: dict = field(default_factory=dict)  # category -> t -> nominal USD expression
    slack: dict = field(default_factory=lambda: defaultdict(dict))  # relaxation -> key -> variable
    constraints: dict = field(default_factory=lambda: defaultdict(dict))  # family -> key -> constraint


def create_model(data: FleetData, relax: frozenset[str] = frozenset()) -> Model:
    """min discounted capex (net of residual value) + energy + colocation + rent + lateness penalties."""
    m = Model(pulp.LpProblem("fleet_plan", pulp.LpMinimize), data, frozenset(relax))
    define_purchases(m)
    define_volume_tiers(m)
    define_installed(m)
    define_pool_nodes(m)
    define_fabric(m)
    define_training_runs(m)
    define_run_peaks(m)
    define_serving(m)
    define_pool_capacity(m)
    define_cloud_quota(m)
    define_power(m)
    define_racks(m)
    define_cash_flow(m)
    define_objective(m)
    return m


# ---------------------------------------------------------------- buying


def define_purchases(m: Model) -> None:
    """x[o,p,t] >= 0 integer for t >= 1 + lead_o, at most the pool's size; stock: sum_p x[o,p,t] <= stock[o,t]."""
    d = m.data
    pairs = d.supply.merge(d.offers[["o", "lead"]], on="o").merge(d.pools[["p", "max_nodes"]], on="p")
    for o, p, lead, cap in pairs[["o", "p", "lead", "max_nodes"]].itertuples(index=False):
        for t in range(1 + int(lead), d.horizon + 1):
            m.buy[(o, p, t)] = new_var(m.problem, var_name("x", o, p, t), 0, int(cap))
    by_offer = defaultdict(list)
    for (o, _, t), x in m.buy.items():
        by_offer[(o, t)].append((x, 1))
    for o, t, units in d.stock[["o", "t", "units"]].itertuples(index=False):
        bought = _sum(by_offer.get((o, t), []))
        extra = _slack(m, "stock", (o, t))
        m.constraints["stock"][(o, t)] = c = bought <= units + extra
        m.problem += c, var_name("stock", o, t)


def define_volume_tiers(m: Model) -> None:
    """The server spend of each offer and period. Without tiers: price x units. With all-units tiers (the
    order's size sets every unit's price): one band k is on, lo_k b_k <= q_k <= hi_k b_k, sum_k b_k <= 1,
    sum_k q_k = units, spend = sum_k price_k q_k. With incremental tiers each band is filled in order:
    q_k <= w_k b_k, q_k >= w_k b_(k+1), b_(k+1) <= b_k."""
    d = m.data
    units = defaultdict(list)
    for (o, _, t), x in m.buy.items():
        units[(o, t)].append((x, 1))
    price = dict(zip(d.offers["o"], d.offers["price_usd"], strict=True))
    kind = dict(zip(d.offers["o"], d.offers["tier_kind"], strict=True))
    bands = {o: list(g[["k", "lo", "hi", "unit_usd"]].itertuples(index=False)) for o, g in d.tiers.groupby("o")}
    most = _most_units(d)
    for (o, t), terms in units.items():
        bought = _sum(terms)
        if o not in bands:
            m.spend[(o, t)] = float(price[o]) * bought
            continue
        parts = _tier_bands(m, o, t, bands[o], kind[o], most[(o, t)])
        m.problem += _sum((q, 1) for q, _ in parts) == bought, var_name("tier_units", o, t)
        m.spend[(o, t)] = _sum(parts)


def _tier_bands(m: Model, o: int, t: int, bands: list, kind: str, most: int) -> list[tuple]:
    """The band variables of one order; returns (units in band, unit price) pairs."""
    parts, previous, switches = [], None, []
    for k, lo, hi, price in bands:
        hi = most if np.isnan(hi) else min(hi, most)
        on = new_var(m.problem, var_name("tier", o, t, k), 0, 1, "Binary")
        q = new_var(m.problem, var_name("q", o, t, k), 0, None, "Continuous")
        if kind == "all_units":
            m.problem += q >= lo * on, var_name("tier_lo", o, t, k)
            m.problem += q <= max(hi, 0) * on, var_name("tier_hi", o, t, k)
        else:
            width = max(hi - lo + 1, 0)
            m.problem += q <= width * on, var_name("band_hi", o, t, k)
            if previous is not None:
                prev_q, prev_on, prev_width = previous
                m.problem += prev_q >= prev_width * on, var_name("band_order", o, t, k)
                m.problem += on <= prev_on, var_name("band_next", o, t, k)
            previous = (q, on, width)
        m.bands[(o, t, int(k))] = (q, on)
        switches.append((on, 1))
        parts.append((q, float(price)))
    if kind == "all_units":
        m.problem += _sum(switches) <= 1, var_name("one_tier", o, t)
    return parts


def _most_units(d: FleetData) -> dict[tuple[int, int], int]:
    """An upper bound on each order: the stock when capped, else the pools the offer feeds, full."""
    pools = d.supply.merge(d.pools[["p", "max_nodes"]], on="p").groupby("o")["max_nodes"].sum()
    stock = dict(zip(zip(d.stock["o"], d.stock["t"], strict=True), d.stock["units"], strict=True))
    return {
        (int(o), t): int(min(stock.get((o, t), np.inf), pools.get(o, 0)))
        for o in d.offers["o"]
        for t in range(1, d.horizon + 1)
    }


def define_installed(m: Model) -> None:
    """0 <= a[i,t] <= owned[i,t] (0 once retired) and a[i,t] <= a[i,t-1]: a node switched off stays off."""
    for i, t, owned in m.data.installed[["entry", "t", "nodes"]].itertuples(index=False):
        a = new_var(m.problem, var_name("a", i, t), 0, int(owned))
        m.active[(i, t)] = a
        if t > 1:
            m.problem += a <= m.active[(i, t - 1)], var_name("keep_off", i, t)


def define_pool_nodes(m: Model) -> None:
    """N[p,t] = installed in service + every unit delivered into p and still in service in t."""
    d = m.data
    terms = defaultdict(list)
    for (_, p, t), x in m.buy.items():
        for later in d.in_service(t):
            terms[(p, later)].append((x, 1))
    entry_pool = d.installed.drop_duplicates("entry").set_index("entry")["p"] if not d.installed.empty else {}
    for (i, t), a in m.active.items():
        terms[(int(entry_pool[i]), t)].append((a, 1))
    for p in d.pools["p"]:
        for t in range(1, d.horizon + 1):
            m.nodes[(p, t)] = _sum(terms.get((p, t), []))


def define_fabric(m: Model) -> None:
    """Each networked pool's switches, sized as fabric.size_arrays does in closed form (one switch, or two
    tiers with leaves filled in order), as constraints. m[p] = 1 when the pool has more than one switch; its
    down-ports D split into those of a single switch D1 <= P (1 - m) and those of a leaf-spine D2 <= P d m,
    which keeps the LP relaxation tight (a big-M on D would let a fractional m erase the leaves):
        b D >= e N;  c K >= e N;  D = D1 + D2       down-ports and switch cages for every NIC port
        L >= D1 / P + D2 / d;  L <= 1 + (P-1) m      leaves (at most P under P-port spines)
        P S >= u L - u (1 - m);  U >= u L - u (1 - m)   spines and leaf-spine links (L <= 1 when m = 0)
    where each level owned in t is what the installed nodes own plus what was added up to t (integers >= 0):
    nothing is sold back, and the objective has no constant term."""
    d = m.data
    for pool in d.pools[d.pools["networked"]].itertuples(index=False):
        p, P, b, e = pool.p, int(pool.switch_ports), int(pool.breakout), int(pool.endpoints)
        c, down, up = max(int(pool.cage_endpoints), 1), int(pool.leaf_down), int(pool.leaf_up)
        multi = new_var(m.problem, var_name("multi_leaf", p), 0, 1, "Binary")
        if pool.owned_multi_leaf:
            m.problem += multi == 1, var_name("multi_owned", p)
        m.multi_leaf[p] = multi
        most_ports = P * down
        level = {k: int(v) for k, v in owned_fabric(pool._asdict()).items()}
        for t in range(1, d.horizon + 1):
            # what is added in t (never negative: switches and links are not sold back); levels owned in t
            added = {k: new_var(m.problem, var_name("add", k, p, t), 0, None) for k in level}
            level = {k: level[k] + added[k] for k in level}
            m.added[(p, t)] = added
            ports, cages, leaves, spines, uplinks = (level[k] for k in ("D", "K", "L", "S", "U"))
            single = new_var(m.problem, var_name("D1", p, t), 0, P, "Continuous")
            spread = new_var(m.problem, var_name("D2", p, t), 0, most_ports, "Continuous")
            m.problem += b * ports >= e * m.nodes[(p, t)], var_name("ports", p, t)
            m.problem += c * cages >= e * m.nodes[(p, t)], var_name("cages", p, t)
            m.problem += single + spread == ports, var_name("port_split", p, t)
            m.problem += single <= P - P * multi, var_name("single_switch", p, t)
            m.problem += spread <= most_ports * multi, var_name("leaf_spine", p, t)
            m.problem += P * down * leaves >= down * single + P * spread, var_name("leaves", p, t)
            m.problem += leaves <= 1 + (P - 1) * multi, var_name("leaf_max", p, t)
            m.problem += P * spines >= up * leaves - up + up * multi, var_name("spines", p, t)
            m.problem += uplinks >= up * leaves - up + up * multi, var_name("uplinks", p, t)
            now = level
            m.fabric[(p, t)] = now


# ---------------------------------------------------------------- training


def define_training_runs(m: Model) -> None:
    """One run per job: sum_c run[c] = 1 over the job's columns (an option at a start). A run holds its
    nodes (or instances) in every period from its start to its finish. Columns finishing after a hard
    deadline exist only when deadlines are being relaxed."""
    d = m.data
    columns = d.columns if "deadlines" in m.relax else d.columns[~d.columns["hard_late"]]
    for col in columns["col"]:
        m.run[col] = new_var(m.problem, var_name("run", col), 0, 1, "Binary")
    by_job = columns.groupby("j")["col"].apply(list).to_dict()
    for j in d.jobs["j"]:
        runs = [(m.run[c], 1) for c in by_job.get(j, [])]
        if not runs:  # no run meets its hard deadline: say so to the solver (infeasible), never drop the job
            runs = [(new_var(m.problem, var_name("no_run_in_time", j), 0, 0), 1)]
        m.problem += _sum(runs) == 1, var_name("one_run", j)
    held = defaultdict(list)
    for row in _held(d, columns).itertuples(index=False):
        held[(row.kind, row.resource, row.t)].append((m.run[row.col], row.n))
    m.held = {key: _sum(terms) for key, terms in held.items()}


def define_run_peaks(m: Model) -> None:
    """Valid inequalities that tighten the LP relaxation (they cut off no integer plan): bought nodes never
    leave, so once a job's run on pool p has started, p has at least its n nodes from then on:
        bought[p,t] + max_{t' <= t} installed[p,t'] >= sum_{c of job j on p, start_c <= t} n_c run[c].
    Without them the LP spreads a run thinly over several start periods and buys a fraction of its peak.
    Valid only while bought nodes stay to the horizon's end: with a shorter service life, none are added."""
    d = m.data
    if d.service_periods < d.horizon:
        return
    bought = defaultdict(list)
    for (_, p, t), x in m.buy.items():
        for later in d.in_service(t):
            bought[(p, later)].append((x, 1))
    installed = _installed_so_far(d)
    runs = d.columns[d.columns["col"].isin(list(m.run))].merge(d.options[["k", "kind", "resource", "n"]], on="k")
    runs = runs[runs["kind"] == "pool"].sort_values("start")
    for (j, p), group in runs.groupby(["j", "resource"]):
        need, starts = [], list(group[["col", "n", "start"]].itertuples(index=False))
        i = 0
        for t in range(int(starts[0].start), d.horizon + 1):
            while i < len(starts) and starts[i].start <= t:
                need.append((m.run[starts[i].col], -float(starts[i].n)))
                i += 1
            have = bought[(p, t)] + need
            m.problem += _sum(have) >= -installed.get((p, t), 0), var_name("peak", j, p, t)


def _installed_so_far(d: FleetData) -> dict[tuple[int, int], int]:
    """The most installed nodes pool p has had in any period up to t."""
    if d.installed.empty:
        return {}
    per_period = d.installed.groupby(["p", "t"])["nodes"].sum().unstack(fill_value=0).cummax(axis=1)
    return {(int(p), int(t)): int(v) for (p, t), v in per_period.stack().items()}


def _held(d: FleetData, columns: pd.DataFrame) -> pd.DataFrame:
    """(column, period) pairs of every run, with the resource and node count it holds: the long table."""
    runs = columns.merge(d.options[["k", "kind", "resource", "n"]], on="k")
    long = runs.loc[runs.index.repeat(runs["finish"] - runs["start"] + 1)].copy()
    long["t"] = long["start"] + long.groupby(level=0).cumcount()
    return long[["col", "kind", "resource", "n", "t"]]


# ---------------------------------------------------------------- serving


def define_serving(m: Model) -> None:
    """g[v,t] replicas of service s on a resource; sum_v tokens_v g[v,t] >= demand[s,t] (in thousands of
    tokens/s, for scaling). Replicas are counted in fractions (a fraction is a share of a replica's GPU time:
    the error is under one replica per service, resource and period, and it keeps the model easy); nodes
    and cloud instances are whole: I[r,t] >= sum_v (GPUs per replica / GPUs per instance) g[v,t]."""
    d = m.data
    per_cloud, per_service = defaultdict(list), defaultdict(list)
    demand = dict(zip(zip(d.demand["s"], d.demand["t"], strict=True), d.demand["tokens_per_s"], strict=True))
    for v, row in enumerate(d.serving.itertuples(index=False)):
        for t in range(1, d.horizon + 1):
            if (row.s, t) not in demand:
                continue
            most = int(np.ceil(demand[(row.s, t)] / row.tokens_per_s))
            g = new_var(m.problem, var_name("g", v, t), 0, most, "Continuous")
            m.replicas[(v, t)] = g
            per_service[(row.s, t)].append((g, float(row.tokens_per_s) / 1e3))
            if row.kind == "cloud":
                per_cloud[(int(row.resource), t)].append((g, row.replica_gpus / row.gpus_per_node))
    for (s, t), need in demand.items():
        supplied = _sum(per_service[(s, t)])
        short = _slack(m, "demand", (s, t))
        m.constraints["demand"][(s, t)] = c = supplied + short >= need / 1e3
        m.problem += c, var_name("demand", s, t)
    for (r, t), terms in per_cloud.items():
        instances = new_var(m.problem, var_name("I", r, t), 0, None)
        m.problem += instances >= _sum(terms), var_name("instances", r, t)
        m.instances[(r, t)] = instances


def define_pool_capacity(m: Model) -> None:
    """GPUs: G (training nodes held) + sum_v GPUs per replica x g[v,t] <= G N[p,t]."""
    d = m.data
    used = defaultdict(list)
    gpus = d.pools.set_index("p")["gpus_per_node"]
    for (kind, r, t), expr in m.held.items():
        if kind == "pool":
            used[(r, t)].append(int(gpus[r]) * expr)
    serving = list(d.serving[["kind", "resource", "replica_gpus"]].itertuples(index=False))
    for (v, t), g in m.replicas.items():
        kind, r, gpus_per_replica = serving[v]
        if kind == "pool":
            used[(int(r), t)].append(int(gpus_per_replica) * g)
    for (p, t), terms in used.items():
        c = pulp.lpSum(terms) <= int(gpus[p]) * m.nodes[(p, t)]
        m.constraints["capacity"][(p, t)] = c
        m.problem += c, var_name("capacity", p, t)


def define_cloud_quota(m: Model) -> None:
    """Instances held by training runs + serving instances <= the quota of each cloud offering."""
    d = m.data
    quota = d.cloud.set_index("c")["quota"] if not d.cloud.empty else {}
    keys = {(r, t) for (kind, r, t) in m.held if kind == "cloud"} | set(m.instances)
    for r, t in sorted(keys):
        held = m.held.get(("cloud", r, t), 0)
        c = held + m.instances.get((r, t), 0) <= int(quota[r]) + _slack(m, "quota", (r, t))
        m.constraints["quota"][(r, t)] = c
        m.problem += c, var_name("quota", r, t)


# ---------------------------------------------------------------- the site


def define_power(m: Model) -> None:
    """Nameplate IT watts in service: nodes (each offer's own, installed at their stated watts) and the
    network (switches, switch-side links, uplinks); <= the site's kW in each period."""
    d = m.data
    node_terms = defaultdict(list)
    watts = d.supply.set_index(["o", "p"])["node_w"]
    for (o, p, t), x in m.buy.items():
        for later in d.in_service(t):
            node_terms[later].append((x, float(watts[(o, p)])))
    installed_w = d.installed.drop_duplicates("entry").set_index("entry")["node_w"] if not d.installed.empty else {}
    for (i, t), a in m.active.items():
        node_terms[t].append((a, float(installed_w[i])))
    pools = d.pools.set_index("p")
    for t in range(1, d.horizon + 1):
        network = []
        for (p, tt), f in m.fabric.items():
            if tt == t:
                row = pools.loc[p]
                network += [row["switch_w"] * (f["L"] + f["S"]), row["cage_w"] * f["K"], row["uplink_w"] * f["U"]]
        m.node_w[t] = _sum(node_terms[t])
        m.network_w[t] = pulp.lpSum(network)
        m.power_w[t] = m.node_w[t] + m.network_w[t]
    for t, kw in d.site[["t", "kw"]].itertuples(index=False):
        if np.isnan(kw):
            continue
        c = m.power_w[t] / 1e3 <= kw + _slack(m, "power", t)
        m.constraints["power"][t] = c
        m.problem += c, var_name("site_power", t)


def define_racks(m: Model) -> None:
    """R[p,t] >= N[p,t] / nodes per rack (layout.nodes_per_rack on the site's layout, from the designs; pools
    do not share racks); sum_p R[p,t] <= racks[t]."""
    d = m.data
    if d.site["racks"].isna().all():
        return
    per_rack = dict(zip(d.pools["p"], d.pools["nodes_per_rack"], strict=True))
    for t, racks in d.site[["t", "racks"]].itertuples(index=False):
        used = []
        for p in d.pools["p"]:
            R = new_var(m.problem, var_name("R", p, t), 0, None)
            m.problem += per_rack[p] * R >= m.nodes[(p, t)], var_name("racks_of", p, t)
            m.racks[(p, t)] = R
            used.append((R, 1))
        c = _sum(used) <= racks + _slack(m, "racks", t)
        m.constraints["racks"][t] = c
        m.problem += c, var_name("site_racks", t)


# ---------------------------------------------------------------- money


def define_cash_flow(m: Model) -> None:
    """Nominal USD per period and category: servers (tiered price + NICs and NIC-side links per node),
    network (switches, switch-side links and uplinks added), energy (draw: servers at server_draw_fraction,
    network at nameplate, x PUE x $/kWh), colocation ($/kW-month of nameplate), cloud (training runs' bills
    spread evenly over their periods; serving instances held all period)."""
    d = m.data
    costs = d.fleet.costs
    extra = d.supply.set_index(["o", "p"])["extra_usd"]
    pools = d.pools.set_index("p")
    servers = defaultdict(list)
    for (o, p, t), x in m.buy.items():
        servers[t].append(float(extra[(o, p)]) * x)
    for (_, t), spend in m.spend.items():
        servers[t].append(spend)
    network = defaultdict(list)
    for (p, t), added in m.added.items():
        row = pools.loc[p]
        network[t].append(row["switch_usd"] * (added["L"] + added["S"]))
        network[t].append(row["cage_usd"] * added["K"] + row["uplink_usd"] * added["U"])
    cloud = _cloud_bills(m)
    m.cash = {"servers": {}, "network": {}, "energy": {}, "colocation": {}, "cloud": {}}
    for t in range(1, d.horizon + 1):
        m.cash["servers"][t] = pulp.lpSum(servers[t])
        m.cash["network"][t] = pulp.lpSum(network[t])
        draw_kw = costing.draw_w(m.node_w[t], m.network_w[t], costs) / 1e3
        m.cash["energy"][t] = costing.energy_usd_per_hour(draw_kw, costs) * HOURS_PER_PERIOD
        m.cash["colocation"][t] = m.power_w[t] / 1e3 * costs.colocation_usd_per_kw_month * MONTHS_PER_PERIOD
        m.cash["cloud"][t] = cloud[t]


def owned_fabric(row) -> dict[str, float]:
    """What a pool's installed nodes already own: down-ports, cages, leaves, spines, uplinks."""
    return {"D": row["owned_ports"], "K": row["owned_cages"], "L": row["owned_leaves"], "S": row["owned_spines"],
            "U": row["owned_uplinks"]}  # fmt: skip


def _cloud_bills(m: Model) -> dict[int, pulp.LpAffineExpression]:
    d = m.data
    terms = defaultdict(list)
    held = _held(d, d.columns[d.columns["col"].isin(list(m.run))]).merge(
        d.columns[["col", "k"]].merge(d.options[["k", "cloud_usd", "periods"]], on="k"), on="col"
    )
    for row in held[held["kind"] == "cloud"].itertuples(index=False):
        terms[row.t].append((m.run[row.col], row.cloud_usd / row.periods))
    for t, serving in serving_bills(m).items():
        terms[t] += serving
    return {t: _sum(terms[t]) for t in range(1, d.horizon + 1)}


def serving_bills(m: Model) -> dict[int, list[tuple]]:
    """Per period, the (instances, USD per instance-period) terms of the cloud instances held for serving."""
    rates = m.data.cloud.set_index("c")["usd_per_h"] if not m.data.cloud.empty else {}
    terms = defaultdict(list)
    for (r, t), instances in m.instances.items():
        terms[t].append((instances, float(rates[r]) * HOURS_PER_PERIOD))
    return terms


def define_objective(m: Model) -> None:
    """sum_t capex_weight_t (servers + network) + discount_t (energy + colocation + cloud) + penalties, where
    capex_weight = discount - end discount x residual share (the value left at the horizon's end)."""
    d = m.data
    periods = d.periods.set_index("t")
    total = []
    for t in range(1, d.horizon + 1):
        weight, discount = periods.at[t, "capex_weight"], periods.at[t, "discount"]
        total.append(weight * (m.cash["servers"][t] + m.cash["network"][t]))
        total.append(discount * (m.cash["energy"][t] + m.cash["colocation"][t] + m.cash["cloud"][t]))
    total.append(penalties(m))
    m.problem += pulp.lpSum(total)


def penalties(m: Model) -> pulp.LpAffineExpression:
    penalty = m.data.columns.set_index("col")["penalty"]
    return _sum((run, float(penalty[c])) for c, run in m.run.items())


# ---------------------------------------------------------------- relaxations


def _slack(m: Model, family: str, key) -> pulp.LpVariable | int:
    """A non-negative slack on one constraint of a family being relaxed (0 otherwise)."""
    if family not in m.relax:
        return 0
    parts = key if isinstance(key, tuple) else (key,)
    s = new_var(m.problem, var_name("slack", family, *parts), 0, None, "Continuous")
    m.slack[family][key] = s
    return s


def violation(m: Model) -> pulp.LpAffineExpression:
    """What a relaxation minimises first: late periods, kW over the site, racks over, units over stock,
    instances over quota, thousands of tokens/s short, each counted once per period."""
    late = m.data.columns.set_index("col")["late"]
    terms = [(run, float(late[c])) for c, run in m.run.items() if "deadlines" in m.relax]
    for slacks in m.slack.values():
        terms += [(s, 1.0) for s in slacks.values()]
    return _sum(terms)


# ---------------------------------------------------------------- solving


@dataclass(frozen=True)
class Solved:
    """A solved model and how the solve went."""

    model: Model
    result: SolveResult
    gap_proven: float | None


def solve_model(
    model: Model, solver: str, time_limit_s, gap, threads: int | None = None, progress=lambda _: None
) -> Solved:
    """Solve through optimize/solver.py, with a CBC log to read the proven gap from. At a gap, first the
    LP-guided start with CBC (lp_guided_start): its plan is the answer when it is within the gap of the LP bound;
    otherwise the full search starts from it, and the gap is proven against the best bound either found."""
    t0 = time.perf_counter()
    # CBC only: HiGHS's search of the restricted model found no plan in its share on bench_fleet's 50x20x30
    # fleets and on 100x40x30 (50-workload site), where the shorter full search lost the plan it finds alone
    guided = gap and resolve(solver) == "cbc"
    start = lp_guided_start(model, solver, time_limit_s, gap, threads) if guided else None
    plan = None if start is None else start.plan
    if start is not None:
        progress(_start_note(start, len(model.data.jobs)))
    if plan is not None and plan.gap_proven <= gap:
        return plan
    left = None if time_limit_s is None else max(time_limit_s - (time.perf_counter() - t0), 1.0)
    try:
        solved = _solve_logged(model, solver, left, gap, threads, warm_start=plan is not None)
    except SolverError as exc:  # no plan in the time left: the start's plan stands, when there is one
        if plan is None:
            raise _why_no_plan(exc, model, start) from None
        solved = None
    if start is None:
        return solved
    found = solved is not None and solved.result.solved
    if not found and plan is None:  # the LP has an optimum and the MILP no plan (infeasible): as solved
        return solved
    gaps = [solved.gap_proven] if found else []
    if plan is not None and (not found or solved.result.objective > plan.result.objective):
        for var, value in start.values.items():  # the full search did no better: back to the start's plan
            var.varValue = value
        gaps = [_relative_gap(plan.result.objective, _bound(solved))] if found else []
        solved = plan
    proven = min(g for g in [*gaps, _relative_gap(solved.result.objective, start.lp_bound)] if g is not None)
    status = "optimal" if proven <= gap else solved.result.status
    return Solved(model, replace(solved.result, status=status, seconds=time.perf_counter() - t0), proven)


@dataclass(frozen=True)
class Start:
    """The LP relaxation's objective (a bound on every plan) and the plan found with every run the LP takes
    whole fixed (None when none was found in time), with its variable values (a later solve overwrites them)."""

    lp_bound: float
    plan: Solved | None = None
    values: dict = field(default_factory=dict)
    jobs_fixed: int = 0  # jobs run as the LP runs them
    rounded: bool = False  # the LP's purchases were rounded too (the runs alone gave no plan in time)
    power_full: tuple[int, ...] = ()  # the periods whose site power the LP uses whole


def lp_guided_start(model: Model, solver: str, time_limit_s, gap, threads: int | None = None) -> Start | None:
    """RINS at the root (Danna, Rothberg and Le Pape 2005, "Exploring relaxation induced neighborhoods to
    improve MIP solutions"): solve the LP relaxation, fix every job whose LP run is whole (one column at 1),
    and solve what is left (the other jobs' runs, every purchase and part) to the gap asked, in START_SHARE
    of the time. A fleet's LP runs most jobs whole (26 of 35 on bench_fleet's 50x20x30 seed 1), so what is
    left is small, where the full search spends its time at the root (docs/fleet.md section 9). Where the
    site's power binds CBC may find no plan of that in its share; the start then rounds, in ROUND_SHARE of
    what is left: the same search with every purchase also kept between the floor and the ceiling of the
    LP's (most are 0 there, so the search is small). Where the LP itself uses the whole site in some period,
    it rounds at once, in both shares' time. No plan when the LP runs no job whole (what is left would be the
    full model); None when the LP has no optimum (the full search then says why)."""
    t0 = time.perf_counter()
    try:
        lp = solve(model.problem, solver, time_limit_s, threads=threads, lp=True)
    except SolverError:
        return None
    if lp.status != "optimal":
        return None
    whole, full = _whole_runs(model), _power_full(model)
    jobs_fixed = sum(1 for v in whole.values() if v == 1)
    if not jobs_fixed:  # the LP runs no job whole: the restricted model would be the full one
        return Start(lp.objective, power_full=full)
    runs = {var: (value, value) for var, value in whole.items()}
    rounded = {**_rounded_purchases(model), **runs}  # read now: every search overwrites the LP's values

    def share(fraction):  # of the time the LP left; None without a limit
        return None if time_limit_s is None else fraction * (time_limit_s - (time.perf_counter() - t0))

    searches = [(runs, START_SHARE), (rounded, ROUND_SHARE)]
    if full:  # the site is full somewhere: with the runs alone CBC rarely finds a plan in time (docs/fleet.md 9)
        searches = [(rounded, START_SHARE + ROUND_SHARE * (1 - START_SHARE))]  # the two shares together
    best, searched = None, []  # the bounds of each search made
    for bounds, fraction in searches:
        left = share(fraction)
        if left is not None and left < MIN_START_S:  # no time to search
            break
        searched.append(bounds)
        best = _restricted(model, solver, bounds, left, gap, threads)
        if best is not None:
            break
    tried_rounding = any(bounds is rounded for bounds in searched)
    if best is None:
        return Start(lp.objective, jobs_fixed=jobs_fixed, rounded=tried_rounding, power_full=full)
    values = {var: var.varValue for var in model.problem.variables()}
    proven = _relative_gap(best.result.objective, lp.objective)
    status = "optimal" if proven <= gap else "feasible"  # as the solvers say it: to the gap asked, or not
    result = replace(best.result, status=status, gap=gap, seconds=time.perf_counter() - t0)
    plan = Solved(model, result, proven)
    return Start(lp.objective, plan, values, jobs_fixed, rounded=tried_rounding, power_full=full)


def _power_full(model: Model) -> tuple[int, ...]:
    """The periods whose site power the current (LP) solution uses whole (to a millionth): where whole nodes
    are hard to fit."""
    site = model.constraints["power"]  # each: nameplate kW - site kW (+ slack) <= 0, so its value is minus the room
    return tuple(t for t, c in site.items() if (room := c.value()) is not None and room >= -1e-6 * abs(c.constant))


def _why_no_plan(exc: SolverError, model: Model, start: Start | None) -> SolverError:
    """The solver's no-plan error, saying where the LP relaxation uses the site's whole power (the reason such a
    fleet needs more time: docs/fleet.md section 9)."""
    if start is None or not start.power_full:
        return exc
    labels = model.data.labels
    spans = [labels[a - 1] if a == b else f"{labels[a - 1]}-{labels[b - 1]}" for a, b in _runs_of(start.power_full)]
    return SolverError(
        f"{exc}; the LP relaxation uses all of the site's power in {', '.join(spans)}, where whole nodes are hard "
        "to fit, so a plan takes longer to find (docs/fleet.md section 9)"
    )


def _runs_of(periods: tuple[int, ...]) -> list[tuple[int, int]]:
    """Consecutive periods as (first, last) runs: (3, 4, 5, 9) -> [(3, 5), (9, 9)]."""
    runs: list[list[int]] = []
    for t in sorted(periods):
        if runs and t == runs[-1][1] + 1:
            runs[-1][1] = t
        else:
            runs.append([t, t])
    return [(a, b) for a, b in runs]


def _rounded_purchases(model: Model) -> dict[pulp.LpVariable, tuple[int, int]]:
    """Each purchase between the floor and the ceiling of its current (LP) value."""
    bounds = {}
    for x in model.buy.values():
        value = x.varValue or 0.0
        bounds[x] = (int(np.floor(value + 1e-6)), int(np.ceil(value - 1e-6)))
    return bounds


def _restricted(model: Model, solver: str, bounds: dict, time_limit_s, gap, threads) -> Solved | None:
    """The model solved within the bounds given (its own come back after); None when no plan was found (in
    the time, or none exists there)."""
    try:
        with bounded(bounds):
            solved = _solve_logged(model, solver, time_limit_s, gap, threads)
    except SolverError:
        return None
    return solved if solved.result.solved else None


def _start_note(start: Start, jobs: int) -> str:
    """One progress line on the start: the LP bound, and the plan found from it or why none."""
    bound = f"LP bound ${start.lp_bound:,.0f}"
    if not start.jobs_fixed:
        return f"{bound}; the LP runs no job whole: the full search"
    rounded = " and its purchases rounded" if start.rounded else ""
    if start.plan is None:
        fixed_jobs = f"the {start.jobs_fixed} jobs it runs whole fixed{rounded}"
        return f"{bound}; no plan in its share of the time with {fixed_jobs}"
    cost, above = start.plan.result.objective, start.plan.gap_proven
    fixed_jobs = f"{start.jobs_fixed} of {jobs} jobs fixed{rounded}"
    return f"{bound}; a plan at ${cost:,.0f} ({above:.2%} above it) with {fixed_jobs}"


def _whole_runs(model: Model) -> dict[pulp.LpVariable, int]:
    """The run binaries of every job the current (LP) solution runs whole, each fixed to its value."""
    cols = model.data.columns
    by_job = defaultdict(list)
    for col, j in zip(cols["col"], cols["j"], strict=True):
        if col in model.run:
            by_job[j].append(model.run[col])
    fixes = {}
    for runs in by_job.values():
        values = [run.varValue or 0.0 for run in runs]
        if max(values) > 1 - 1e-6:
            fixes.update({run: round(v) for run, v in zip(runs, values, strict=True)})
    return fixes


def _relative_gap(objective: float, bound: float) -> float:
    return max(0.0, (objective - bound) / (abs(objective) or 1e-9))


def _bound(solved: Solved | None) -> float:
    """The lower bound a solve proved (its objective less the proven gap); -inf when it proved none."""
    if solved is None or not solved.result.solved or solved.gap_proven is None:
        return -np.inf
    return solved.result.objective - solved.gap_proven * abs(solved.result.objective)


def _solve_logged(model: Model, solver: str, time_limit_s, gap, threads, warm_start: bool = False) -> Solved:
    log = temp_log()
    try:
        result = solve(model.problem, solver, time_limit_s, gap, log_path=log, threads=threads, warm_start=warm_start)
        return Solved(model, result, proven_gap(model.problem, result, log))
    finally:
        os.unlink(log)
