"""The candidate table of a purchase: one row per
    server x NIC x NICs per node x fabric x switch x tier x oversubscription x micro-batch
(plus one single-node row per server x micro-batch), each priced exactly at its smallest feasible node count.

Node-count bounds are exact, by bisection on functions proven monotone in the node count N (N >= 2):
  * achieved TFLOPs/GPU never rises with N (the ring share (n-1)/n and the latency both grow), so the
    target gives an upper bound;
  * memory per GPU never rises with N (states are sharded 16P/n), so memory gives a lower bound;
  * cluster tokens/s = N*G*T / t_step(N) never falls with N for N >= 2, because t_step(N) grows at most
    proportionally: every term of t_comm has the form a*(1 - 1/(cN)) or c + dN, whose elasticity is <= 1;
    so a deadline or throughput requirement gives a lower bound.
One node is a candidate of its own (no NICs, no switches), since 1 -> 2 nodes can lower cluster throughput.

Every cost and power term is non-decreasing in N (nodes, NIC ports and ceil-sized switch counts all grow), so
a candidate's cheapest use is its smallest feasible N, and a budget or power cap that excludes that size
excludes every larger one: the priced table is exact, and the MILP needs only the rows that can win.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from planner import costing, fabric, pcie, perf
from planner.calibration import Calibration
from planner.catalog import Catalog
from planner.errors import ScenarioError
from planner.rows import ServerRow
from planner.scenario import Scenario
from planner.workload import Requirements, Training, fast_enough, fits_memory, meets_target, scenario_training

# Columns that identify a performance key: the node's shape and bandwidth, and the micro-batch.
KEY = [
    "gpu",
    "peak_tflops",
    "hbm_gib",
    "gpus_per_node",
    "intra_node_gb_per_s",
    "micro_batch",
    "node_gbps_eff",
    "fabric",
]
# A distinct configuration (what alternatives and no-good cuts tell apart): tiers are variants of one.
GROUP = ["server", "nic", "nics_per_node", "fabric", "switch", "micro_batch"]


@dataclass(frozen=True)
class Candidates:
    """The priced table (every row with a non-empty node range; `within_limits` marks those within the
    budget and power caps) and the bounds table of every performance key (for explanations)."""

    frame: pd.DataFrame
    bounds: pd.DataFrame
    training: Training
    requirements: Requirements

    @property
    def feasible(self) -> pd.DataFrame:
        return self.frame[self.frame["within_limits"]] if not self.frame.empty else self.frame


def allowed_servers(catalog: Catalog, scenario: Scenario) -> list[ServerRow]:
    c = scenario.constraints
    servers = catalog.items("servers")
    if c.gpus is not None:
        names = {catalog.gpu(g).name for g in c.gpus}
        servers = [s for s in servers if s.gpu in names]
    if c.servers is not None:
        names = {catalog.server(s).name for s in c.servers}
        servers = [s for s in servers if s.name in names]
    if c.gpus_per_node is not None:
        servers = [s for s in servers if s.gpus_per_node in c.gpus_per_node]
    if c.vendors is not None:
        servers = [s for s in servers if any(v.lower() in s.vendor.lower() for v in c.vendors)]
    if not servers:
        raise ScenarioError(
            "no server in the catalog matches constraints.gpus/servers/gpus_per_node/vendors; "
            "see `planner catalog list servers`"
        )
    return servers


def max_nics(server: ServerRow, scenario: Scenario) -> int:
    cap = scenario.constraints.max_nics_per_node
    return min(server.max_nics_per_node, cap) if cap else server.max_nics_per_node


# ---------------------------------------------------------------- performance over node counts


def evaluate_at(keys: pd.DataFrame, nodes, work: Training, calibration: Calibration, confidence=None) -> dict:
    """The model for each key at `nodes` nodes (array or scalar): the arrays of perf.evaluate_arrays (at the
    pessimistic outcome of `confidence` when given)."""
    columns = {c: keys[c].to_numpy() for c in KEY}
    columns["node_gbps"] = columns.pop("node_gbps_eff")
    columns["gpus"] = np.asarray(nodes, dtype=np.int64) * keys["gpus_per_node"].to_numpy(dtype=np.int64)
    for name, value in work.perf_columns().items():
        columns.setdefault(name, value)
    out = perf.evaluate_arrays(columns, calibration, len(keys), confidence)
    out["gpus"], out["micro_batch"], out["node_gbps"] = columns["gpus"], columns["micro_batch"], columns["node_gbps"]
    return out


def _bisect(keys, lo, hi, test, work, calibration, want_max: bool, confidence=None) -> np.ndarray:
    """Per row, by bisection on [lo, hi]: with want_max, the largest N whose test is true (true for small N,
    false beyond), else lo - 1; otherwise the smallest N whose test is true (false, then true), else hi + 1."""
    lo, hi = lo.astype(np.int64).copy(), hi.astype(np.int64).copy()
    found = lo - 1 if want_max else hi + 1
    while (active := lo <= hi).any():
        rows = np.flatnonzero(active)
        mid = (lo[rows] + hi[rows]) // 2
        ok = test(evaluate_at(keys.iloc[rows], mid, work, calibration, confidence))
        found[rows] = np.where(ok, mid, found[rows])
        if want_max:
            lo[rows], hi[rows] = np.where(ok, mid + 1, lo[rows]), np.where(ok, hi[rows], mid - 1)
        else:
            lo[rows], hi[rows] = np.where(ok, lo[rows], mid + 1), np.where(ok, mid - 1, hi[rows])
    return found


def _memory_bound(keys, lo, hi, work, calibration) -> np.ndarray:
    """The smallest node count whose memory fits (hi + 1 when none): memory per GPU is A/n + B (sharded
    states, and terms the GPU count does not change), so two evaluations give A and B per key, the bound
    is ceil(A / ((usable - B) G)), and one more evaluation settles rounding."""
    one, two = (evaluate_at(keys, nodes, work, calibration) for nodes in (1, 2))
    per_node = keys["gpus_per_node"].to_numpy(dtype=float)
    m1, m2 = np.asarray(one["memory_per_gpu_gib"]), np.asarray(two["memory_per_gpu_gib"])
    a = (m1 - m2) / (1 / per_node - 1 / (2 * per_node))  # GiB x GPUs
    b = m1 - a / per_node
    room = np.asarray(one["usable_hbm_gib"]) - b
    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = np.where(room > 0, np.ceil(a / (room * per_node) - 1e-9), np.inf)
    nodes = np.clip(np.nan_to_num(estimate, posinf=hi.max() + 1), lo, hi + 1).astype(np.int64)
    inside = nodes <= hi
    if inside.any():  # rounding: the model itself decides at the estimate
        fits = fits_memory(evaluate_at(keys[inside], nodes[inside], work, calibration))
        nodes[np.flatnonzero(inside)[~fits]] += 1
    return np.where(nodes > hi, hi + 1, nodes)


def _scan_target(keys, lo, hi, req, work, calibration, chunk: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """With offload, achieved TFLOPs/GPU first rises with N (less optimizer work per node) then falls (more
    communication): per key, the first node count meeting the target and the end of that first run, by
    evaluating every count (exact; used only for offloaded training)."""
    first, last = hi + 1, lo - 1
    done = np.zeros(len(keys), dtype=bool)
    for start in range(int(lo.min()), int(hi.max()) + 1, chunk):
        counts = np.arange(start, start + chunk)
        rows = np.repeat(np.arange(len(keys)), len(counts))
        nodes = np.tile(counts, len(keys))
        ev = evaluate_at(keys.iloc[rows], nodes, work, calibration, req.confidence)
        ok = meets_target(ev, req).reshape(len(keys), -1)
        ok &= (counts >= lo[:, None]) & (counts <= hi[:, None])
        for i in np.flatnonzero(~done):
            run = np.flatnonzero(ok[i])
            if first[i] > hi[i] and run.size:
                first[i] = counts[run[0]]
            if first[i] <= hi[i]:
                beyond = np.flatnonzero(~ok[i] & (counts > first[i]) & (counts <= hi[i]))
                if beyond.size:
                    last[i], done[i] = counts[beyond[0]] - 1, True
                elif start + chunk > hi[i]:
                    last[i], done[i] = hi[i], True
    return first, last


def node_bounds(keys: pd.DataFrame, work: Training, req: Requirements, max_nodes: int, calibration) -> pd.DataFrame:
    """n_lo, n_hi per perf key (n_lo > n_hi: no feasible node count) and why the range is what it is."""
    single = keys["single"].to_numpy()
    per_node = keys["gpus_per_node"].to_numpy(dtype=np.int64)
    lo = np.where(single, 1, 2)
    hi = np.where(single, 1, max_nodes)
    if req.gpus is not None:  # a fixed GPU count pins N; single-node keys only when it is one node
        n_fixed = np.where(req.gpus % per_node == 0, req.gpus // per_node, 0)
        valid = np.where(single, n_fixed == 1, (n_fixed >= 2) & (n_fixed <= max_nodes))
        lo, hi = np.where(valid, n_fixed, 1), np.where(valid, n_fixed, 0)

    c = req.confidence
    n_memory = _memory_bound(keys, lo, hi, work, calibration)
    if work.offload == "none":
        n_target = _bisect(keys, lo, hi, lambda ev: meets_target(ev, req), work, calibration, True, c)
        n_lo, n_hi = np.maximum(lo, n_memory), np.minimum(hi, n_target)
    else:  # offload time falls with N while communication grows: scan for the interval meeting the target
        n_first, n_target = _scan_target(keys, lo, hi, req, work, calibration)
        n_lo, n_hi = np.maximum.reduce([lo, n_memory, n_first]), np.minimum(hi, n_target)
    n_speed = lo
    if req.tokens_per_s is not None:
        n_speed = _bisect(keys, lo, hi, lambda ev: fast_enough(ev, req), work, calibration, False, c)
        n_lo = np.maximum(n_lo, n_speed)
    out = keys.copy()
    out["n_lo"], out["n_hi"] = n_lo, n_hi
    out["range_lo"], out["range_hi"] = lo, hi  # the node counts allowed before target, memory and speed
    out["n_target_max"], out["n_memory_min"], out["n_speed_min"] = n_target, n_memory, n_speed
    return out


# ---------------------------------------------------------------- the parts: servers, NICs x switches, links


def _server_table(catalog: Catalog, servers: list[ServerRow], scenario: Scenario) -> pd.DataFrame:
    records = []
    for s in servers:
        gpu = catalog.gpu(s.gpu)
        records.append(
            {
                "server": s.name,
                "gpu": gpu.name,
                "peak_tflops": gpu.peak_bf16_tflops,
                "hbm_gib": gpu.hbm_gib,
                "hbm_gb_per_s": gpu.hbm_gb_per_s,
                "gpus_per_node": s.gpus_per_node,
                "intra_node_gb_per_s": s.intra_node_gb_per_s,
                "host_gbps": pcie.x16_gbps(s.pcie_gen),
                "pcie_gen": s.pcie_gen,
                "max_nics": max_nics(s, scenario),
                "server_usd": s.price_usd,
                "server_w": s.power_w,
                "included_nic": (s.included_nic or "").lower(),
                "included_nics": s.included_nics,
            }
        )
    return pd.DataFrame.from_records(records)


def _network_table(catalog: Catalog, scenario: Scenario) -> pd.DataFrame:
    """Every NIC x fabric x switch whose ports connect (a whole breakout within the switch's limit) and for
    which the catalog has a link at the scenario's reach; with the link's cost per endpoint, per switch
    down-port and per uplink. Link choice runs once per distinct (fabric, speeds, breakout)."""
    c, optics = scenario.constraints, catalog.items("optics")
    # with a TCO objective a link option's watts cost energy over the horizon; for capex only its price counts
    watt = costing.usd_per_watt_drawn(scenario.objective) if scenario.objective.kind == "tco" else 0.0
    reach_node, reach_switch = scenario.cabling.node_leaf_reach_m, scenario.cabling.switch_reach_m
    node_links, switch_links = {}, {}
    records = []
    for nic in catalog.items("nics"):
        for fab in (f for f in nic.fabrics if f in c.fabrics):
            for switch in (s for s in catalog.items("switches") if s.fabric == fab):
                b = fabric.breakout(switch.port_gbps, nic.port_gbps)
                if not b or b > switch.max_breakout:
                    continue
                key = (fab, nic.port_gbps, switch.port_gbps, b)
                if key not in node_links:
                    node_links[key] = fabric.node_links(
                        optics, fab, nic.port_gbps, switch.port_gbps, b, reach_node, watt
                    )
                if (fab, switch.port_gbps) not in switch_links:
                    switch_links[(fab, switch.port_gbps)] = fabric.switch_links(
                        optics, fab, switch.port_gbps, reach_switch, watt
                    )
                links, up = node_links[key], switch_links[(fab, switch.port_gbps)]
                if links is None:
                    continue
                records.append(_network_record(nic, fab, switch, b, links, up))
    return pd.DataFrame.from_records(records)


def _network_record(nic, fab, switch, b, links, up) -> dict:
    per_endpoint, per_port, text = links
    return {
        "nic": nic.sku,
        "nic_lower": nic.sku.lower(),
        "nic_speed_gbps": nic.speed_gbps,
        "nic_port_gbps": nic.port_gbps,
        "nic_ports": nic.ports,
        "nic_usd": nic.price_usd,
        "nic_w": nic.power_w,
        "fabric": fab,
        "switch": switch.sku,
        "switch_ports": switch.ports,
        "breakout": b,
        "switch_usd": switch.price_usd,
        "switch_w": switch.power_w,
        "endpoint_usd": per_endpoint.usd,
        "endpoint_w": per_endpoint.watts,
        "port_usd": per_port.usd,
        "port_w": per_port.watts,
        "uplink_usd": up[0].usd if up else 0.0,
        "uplink_w": up[0].watts if up else 0.0,
        "endpoint_skus": per_endpoint.skus,
        "port_skus": per_port.skus,
        "uplink_skus": up[0].skus if up else (),
        "has_uplinks": up is not None,
        "node_links": text,
        "uplink_links": up[1] if up else "",
    }


def _tiers(oversubscriptions: list[float]) -> pd.DataFrame:
    """(oversubscription, tier) pairs: o:1 only exists across leaves, so o > 1 means tiers 2 and 3."""
    pairs = [(o, t) for o in oversubscriptions for t in ((1, 2, 3) if o == 1 else (2, 3))]
    return pd.DataFrame(pairs, columns=["oversubscription", "tier"])


# ---------------------------------------------------------------- the table


def _multi_node_rows(servers: pd.DataFrame, network: pd.DataFrame, scenario: Scenario) -> pd.DataFrame:
    counts = servers.loc[servers.index.repeat(servers["max_nics"])].copy()
    counts["nics_per_node"] = counts.groupby("server").cumcount() + 1
    rows = counts.merge(network, how="cross")
    rows = rows.merge(_tiers(scenario.constraints.oversubscription), how="cross")
    rows = rows[(rows["tier"] == 1) | rows["has_uplinks"]]
    rows = rows.merge(pd.DataFrame({"micro_batch": scenario.workload.micro_batches}), how="cross")
    included = np.where(rows["nic_lower"] == rows["included_nic"], rows["included_nics"], 0)
    extra = np.maximum(0, rows["nics_per_node"] - included)
    rows["node_usd"] = rows["server_usd"] + extra * rows["nic_usd"]
    rows["node_w"] = rows["server_w"] + extra * rows["nic_w"]
    rows["node_gbps"] = pcie.nic_usable_gbps(rows["nic_speed_gbps"].to_numpy(), rows["pcie_gen"].to_numpy())
    rows["node_gbps"] *= rows["nics_per_node"]
    rows["node_gbps_eff"] = rows["node_gbps"] / rows["oversubscription"]
    rows["endpoints_per_node"] = rows["nics_per_node"] * rows["nic_ports"]
    rows["single"] = False
    over_tiers = rows["tier"] > 1
    rows["links"] = rows["node_links"].where(~over_tiers, rows["node_links"] + "; uplinks " + rows["uplink_links"])
    return rows.reset_index(drop=True)


def _single_node_rows(servers: pd.DataFrame, scenario: Scenario) -> pd.DataFrame:
    rows = servers.merge(pd.DataFrame({"micro_batch": scenario.workload.micro_batches}), how="cross")
    zeros = ["nic_speed_gbps", "nic_port_gbps", "node_gbps", "switch_ports", "breakout"]
    zeros += ["switch_usd", "switch_w", "endpoint_usd", "endpoint_w", "port_usd", "port_w", "uplink_usd", "uplink_w"]
    rows = rows.assign(**{c: 0.0 for c in zeros}, nics_per_node=0, endpoints_per_node=0, tier=0)
    rows = rows.assign(nic=None, switch=None, fabric="none", oversubscription=1.0, links="", single=True)
    rows = rows.assign(endpoint_skus=[()] * len(rows), port_skus=[()] * len(rows), uplink_skus=[()] * len(rows))
    rows["node_usd"], rows["node_w"] = rows["server_usd"], rows["server_w"]
    # a single node has no network: its key is evaluated at a nominal 1 Gbps (no traffic crosses it)
    rows["node_gbps_eff"] = 1.0
    return rows


def _performance_keys(servers: pd.DataFrame, catalog: Catalog, scenario: Scenario) -> pd.DataFrame:
    """Every distinct (node shape, usable node bandwidth / oversubscription, fabric, micro-batch) a NIC count
    of the catalog's NICs gives, whether or not a switch and link connect it (the explanations of an empty
    table need the bounds of every speed), plus the single-node key of each server."""
    c = scenario.constraints
    speeds = pd.DataFrame(
        [(n.speed_gbps, f) for n in catalog.items("nics") for f in n.fabrics if f in c.fabrics],
        columns=["nic_speed_gbps", "fabric"],
    ).drop_duplicates()
    counts = servers.loc[servers.index.repeat(servers["max_nics"])].copy()
    counts["nics_per_node"] = counts.groupby("server").cumcount() + 1
    multi = counts.merge(speeds, how="cross").merge(pd.DataFrame({"oversubscription": c.oversubscription}), how="cross")
    usable = pcie.nic_usable_gbps(multi["nic_speed_gbps"].to_numpy(), multi["pcie_gen"].to_numpy())
    multi["node_gbps_eff"] = usable * multi["nics_per_node"] / multi["oversubscription"]
    multi["single"] = False
    single = servers.assign(node_gbps_eff=1.0, fabric="ib", single=True)
    keys = pd.concat([single, multi], ignore_index=True)
    keys = keys.merge(pd.DataFrame({"micro_batch": scenario.workload.micro_batches}), how="cross")
    keys["node_gbps_eff"] = keys["node_gbps_eff"].round(9)
    return keys[[*KEY, "single"]].drop_duplicates(ignore_index=True)


def _attach_bounds(rows: pd.DataFrame, bounds: pd.DataFrame) -> pd.DataFrame:
    """The node bounds of each row's performance key (single nodes: the key at a nominal 1 Gbps IB)."""
    rows = rows.assign(node_gbps_eff=rows["node_gbps_eff"].round(9))
    rows["key_fabric"] = np.where(rows["single"], "ib", rows["fabric"])
    columns = [*KEY, "single", "n_lo", "n_hi"]
    renamed = bounds[columns].rename(columns={"fabric": "key_fabric", "n_lo": "key_lo", "n_hi": "key_hi"})
    on = [c if c != "fabric" else "key_fabric" for c in KEY] + ["single"]
    return rows.merge(renamed, on=on, how="left").drop(columns="key_fabric")


def _node_range(rows: pd.DataFrame, req: Requirements) -> pd.DataFrame:
    """[n_lo, n_hi] per row: the key's bounds within the tier's capacity; with a global batch, only node
    counts giving a whole grad_accum (divisors of global_batch / (G x micro_batch))."""
    cap = fabric.max_down_ports(
        rows["tier"].to_numpy(), rows["switch_ports"].to_numpy(np.int64), rows["oversubscription"].to_numpy()
    )
    cap = cap * rows["breakout"].to_numpy(np.int64) // np.maximum(rows["endpoints_per_node"].to_numpy(np.int64), 1)
    hi = np.where(rows["single"], rows["key_hi"], np.minimum(rows["key_hi"], cap))
    lo = rows["key_lo"].to_numpy(np.int64)
    if req.global_batch is not None:
        per_step = rows["gpus_per_node"].to_numpy(np.int64) * rows["micro_batch"].to_numpy(np.int64)
        quotient = np.where(req.global_batch % per_step == 0, req.global_batch // per_step, 0)
        lo, hi = _divisors_within(quotient, lo, np.minimum(hi, quotient))
    rows = rows.assign(n_lo=lo, n_hi=hi)
    return rows[rows["n_lo"] <= rows["n_hi"]].reset_index(drop=True)


def _divisors_within(quotient: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the smallest and the largest divisor of quotient in [lo, hi] (lo > hi when none)."""
    new_lo, new_hi = np.ones_like(lo), np.zeros_like(hi)
    for q in np.unique(quotient[quotient > 0]):
        divisors = np.array([d for d in range(1, int(q) + 1) if q % d == 0], dtype=np.int64)
        at = quotient == q
        first = np.searchsorted(divisors, lo[at], side="left")
        last = np.searchsorted(divisors, hi[at], side="right") - 1
        ok = (first < len(divisors)) & (last >= 0) & (first <= last)
        new_lo[at] = np.where(ok, divisors[np.minimum(first, len(divisors) - 1)], 1)
        new_hi[at] = np.where(ok, divisors[np.maximum(last, 0)], 0)
    return new_lo, new_hi


def allowed_nodes(row: dict, req: Requirements) -> list[int] | None:
    """The node counts a candidate may take when a global batch fixes grad_accum (None: every count in
    [n_lo, n_hi])."""
    if req.global_batch is None:
        return None
    quotient = req.global_batch // (row["gpus_per_node"] * row["micro_batch"])
    return [n for n in range(int(row["n_lo"]), int(row["n_hi"]) + 1) if quotient % n == 0]


def _price(rows: pd.DataFrame, scenario: Scenario) -> pd.DataFrame:
    """Each row at its smallest feasible node count: the fabric in closed form, capex, power, energy and
    the objective, and whether it is within the budget and power caps."""
    nodes = rows["n_lo"].to_numpy(np.int64)
    size = fabric.size_arrays(
        rows["endpoints_per_node"].to_numpy(np.int64) * nodes,
        rows["tier"].to_numpy(np.int64),
        rows["switch_ports"].to_numpy(np.int64),
        rows["breakout"].to_numpy(np.int64),
        rows["oversubscription"].to_numpy(),
    )
    coef = {c: rows[c].to_numpy(float) for c in COEFFICIENTS}
    cost = costing.configuration_cost(coef, nodes, size["down_ports"], size["switches"], size["uplinks"])
    objective = scenario.objective
    priced = rows.assign(
        nodes=nodes,
        down_ports=size["down_ports"],
        leaf=size["leaf"],
        spine=size["spine"],
        core=size["core"],
        switches=size["switches"],
        uplinks=size["uplinks"],
        capex_usd=cost.capex_usd,
        power_w=cost.power_w,
        node_power_w=cost.node_w,
        energy_usd=costing.energy_usd(cost, objective),
        objective_usd=costing.objective_usd(cost, objective),
    )
    budget, power = scenario.constraints.budget_usd, scenario.constraints.power_kw
    ok = np.ones(len(priced), dtype=bool)
    if budget is not None:
        ok &= priced["capex_usd"].to_numpy() <= budget + 1e-6
    if power is not None:
        ok &= priced["power_w"].to_numpy() <= power * 1e3 + 1e-6
    priced["within_limits"] = ok
    return priced


COEFFICIENTS = [
    "endpoints_per_node",
    "node_usd",
    "node_w",
    "switch_usd",
    "switch_w",
    "endpoint_usd",
    "endpoint_w",
    "port_usd",
    "port_w",
    "uplink_usd",
    "uplink_w",
]
COLUMNS = [
    *GROUP[:1],
    "gpu",
    "peak_tflops",
    "hbm_gib",
    "hbm_gb_per_s",
    "gpus_per_node",
    "intra_node_gb_per_s",
    "host_gbps",
    "micro_batch",
    "nic",
    "nic_speed_gbps",
    "nics_per_node",
    "nic_port_gbps",
    "node_gbps",
    "fabric",
    "switch",
    "tier",
    "oversubscription",
    "switch_ports",
    "breakout",
    "n_lo",
    "n_hi",
    *COEFFICIENTS,
    "endpoint_skus",
    "port_skus",
    "uplink_skus",
    "links",
]


def build(catalog: Catalog, scenario: Scenario, calibration: Calibration) -> Candidates:
    """The priced candidate table (cheapest first) and the bounds table of every performance key."""
    work = scenario_training(catalog, scenario)
    req = Requirements.of(scenario)
    servers = _server_table(catalog, allowed_servers(catalog, scenario), scenario)
    network = _network_table(catalog, scenario)
    parts = [_single_node_rows(servers, scenario)]
    if not network.empty:
        parts.append(_multi_node_rows(servers, network, scenario))
    keys = _performance_keys(servers, catalog, scenario)
    bounds = node_bounds(keys, work, req, scenario.constraints.max_nodes, calibration)
    rows = _attach_bounds(pd.concat(parts, ignore_index=True), bounds)
    rows = _node_range(rows, req)[COLUMNS]
    priced = _price(rows, scenario)
    priced = priced.sort_values(["objective_usd", "capex_usd", "power_w"], kind="stable", ignore_index=True)
    return Candidates(priced, bounds, work, req)


def leaf_split_columns(row: dict) -> tuple[int, int, int]:
    """(leaf down-ports, leaf up-ports, aggregation down-ports) of a candidate's switch: the MILP's d, u, a."""
    if not row["tier"]:
        return 0, 0, 0
    down, up = fabric.leaf_split(int(row["switch_ports"]), row["oversubscription"])
    return down, up, int(fabric.agg_down(int(row["switch_ports"])))


def fabric_text(row: dict) -> str:
    if row["tier"] == 0:
        return "single node (no fabric)"
    tiers = {1: "one switch", 2: "two-tier leaf-spine", 3: "three-tier"}[row["tier"]]
    over = "" if row["oversubscription"] == 1 else f", {row['oversubscription']:g}:1 oversubscribed"
    brk = f", 1:{row['breakout']:g} breakout" if row["breakout"] > 1 else ""
    return f"{tiers} of {row['switch']}{over}{brk}"
