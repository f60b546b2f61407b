"""Candidate configurations for the MILP: one row per
    server x NIC x NICs per node x fabric x switch x tier x oversubscription x micro-batch
with the performance model's node-count range and every cost and power coefficient the formulation needs.

Node-count bounds are exact, by bisection on functions proven monotone in the node count N (N >= 2):
  * achieved TFLOPs/GPU never rises with N (the ring share (n-1)/n and the latency both grow), so the
    target gives an upper bound;
  * memory per GPU never rises with N (states are sharded 16P/n), so memory gives a lower bound;
  * cluster tokens/s = N*G*T / t_step(N) never falls with N for N >= 2, because t_step(N) grows at most
    proportionally: every term of t_comm has the form a*(1 - 1/(cN)) or c + dN, whose elasticity is <= 1;
    so a deadline or throughput requirement gives a lower bound.
One node is a candidate of its own (no NICs, no switches), since 1 -> 2 nodes can lower cluster throughput.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from planner import fabric, perf
from planner.api import Workload
from planner.api import workload as make_workload
from planner.assumptions import nic_effective_gbps
from planner.calibration import Calibration
from planner.catalog import Catalog
from planner.errors import ScenarioError
from planner.formulation import usd_per_watt_drawn
from planner.models import NicRow, ServerRow, SwitchRow
from planner.scenario import Scenario

SECONDS_PER_DAY = 86400.0


def scenario_workload(catalog: Catalog, scenario: Scenario) -> Workload:
    w = scenario.workload
    if w.model is None and w.seq_len is None:
        raise ScenarioError(
            "workload.seq_len is required with workload.params (with workload.model the model's "
            "own seq_len is the default)"
        )
    return make_workload(
        catalog,
        params=w.params,
        model=w.model,
        micro_batch=1,
        seq_len=w.seq_len,
        checkpointing=w.checkpointing,
        flash_attention=w.flash_attention,
        qwz=w.qwz,
        hpz=w.hpz,
        qgz=w.qgz,
        grad_bytes=w.grad_bytes,
        hierarchical=w.hierarchical,
    )


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


# ---------------------------------------------------------------- performance over node counts


def _perf_keys(catalog: Catalog, scenario: Scenario, work: Workload, servers: list[ServerRow]) -> pd.DataFrame:
    """Distinct (server shape, effective node Gbps, fabric, micro-batch) rows the bounds depend on."""
    c = scenario.constraints
    rows = []
    nics = catalog.items("nics")
    for server in servers:
        gpu = catalog.gpu(server.gpu)
        shape = dict(
            gpu=gpu.name,
            peak_tflops=gpu.peak_bf16_tflops,
            hbm_gib=gpu.hbm_gib,
            gpus_per_node=server.gpus_per_node,
            intra_node_gb_per_s=server.intra_node_gb_per_s,
        )
        speeds = {
            (_nic_gbps(nic, server) * k, f)
            for nic in nics
            for f in nic.fabrics
            if f in c.fabrics
            for k in range(1, _max_nics(server, scenario) + 1)
        }
        for mb in scenario.workload.micro_batches:
            rows.append({**shape, "micro_batch": mb, "node_gbps": 1.0, "fabric": "ib", "single": True})
            for gbps, fab in speeds:
                for o in c.oversubscription:
                    rows.append({**shape, "micro_batch": mb, "node_gbps": gbps / o, "fabric": fab, "single": False})
    keys = pd.DataFrame(rows).drop_duplicates(ignore_index=True)
    for name, value in dataclasses.asdict(work).items():
        if name not in ("micro_batch", "model_name"):
            keys[name] = value
    return keys


def _nic_gbps(nic: NicRow, server: ServerRow) -> float:
    return nic_effective_gbps(nic.speed_gbps, server.pcie_gen)


def _max_nics(server: ServerRow, scenario: Scenario) -> int:
    cap = scenario.constraints.max_nics_per_node
    return min(server.max_nics_per_node, cap) if cap else server.max_nics_per_node


def evaluate_at(keys: pd.DataFrame, nodes: np.ndarray, calibration: Calibration) -> pd.DataFrame:
    frame = keys.copy()
    frame["gpus"] = np.asarray(nodes, dtype=np.int64) * frame["gpus_per_node"].to_numpy()
    return perf.evaluate(frame, calibration)


def _bisect(keys, lo, hi, test, calibration, want_max: bool) -> np.ndarray:
    """Per row, by bisection on [lo, hi]: with want_max, the largest N whose test is true (true for small N,
    false beyond), else lo - 1; otherwise the smallest N whose test is true (false, then true), else hi + 1."""
    lo, hi = lo.astype(np.int64).copy(), hi.astype(np.int64).copy()
    found = lo - 1 if want_max else hi + 1
    while (active := lo <= hi).any():
        rows = np.flatnonzero(active)
        mid = (lo[rows] + hi[rows]) // 2
        ok = test(evaluate_at(keys.iloc[rows], mid, calibration))
        found[rows] = np.where(ok, mid, found[rows])
        if want_max:
            lo[rows], hi[rows] = np.where(ok, mid + 1, lo[rows]), np.where(ok, hi[rows], mid - 1)
        else:
            lo[rows], hi[rows] = np.where(ok, lo[rows], mid + 1), np.where(ok, mid - 1, hi[rows])
    return found


def required_tokens_per_s(scenario: Scenario) -> float | None:
    r = scenario.requirement
    if r.tokens is not None:
        return r.tokens / (r.days * SECONDS_PER_DAY)
    return r.min_tokens_per_s


def node_bounds(keys: pd.DataFrame, scenario: Scenario, calibration: Calibration) -> pd.DataFrame:
    """n_lo, n_hi per perf key (n_lo > n_hi: no feasible node count) and why the range is what it is."""
    target = scenario.target_tflops or 0.0
    need = required_tokens_per_s(scenario)
    single = keys["single"].to_numpy()
    per_node = keys["gpus_per_node"].to_numpy()
    cap = np.full(len(keys), scenario.constraints.max_nodes, dtype=np.int64)
    lo = np.where(single, 1, 2)
    hi = np.where(single, 1, cap)
    fixed = scenario.requirement.gpus
    if fixed is not None:  # a fixed GPU count pins N; single-node keys only when it is one node
        n_fixed = np.where(fixed % per_node == 0, fixed // per_node, 0)
        valid = np.where(single, n_fixed == 1, (n_fixed >= 2) & (n_fixed <= cap))
        lo, hi = np.where(valid, n_fixed, 1), np.where(valid, n_fixed, 0)

    def meets_target(ev):
        return (ev["achieved_tflops_per_gpu"] >= target - 1e-9).to_numpy()

    def fits(ev):
        return ev["fits_memory"].to_numpy()

    n_target = _bisect(keys, lo, hi, meets_target, calibration, want_max=True)
    n_memory = _bisect(keys, lo, hi, fits, calibration, want_max=False)
    n_lo, n_hi = np.maximum(lo, n_memory), np.minimum(hi, n_target)
    n_speed = lo
    if need is not None:
        n_speed = _bisect(
            keys, lo, hi, lambda ev: (ev["tokens_per_s"] >= need * (1 - 1e-12)).to_numpy(), calibration, want_max=False
        )
        n_lo = np.maximum(n_lo, n_speed)
    out = keys.copy()
    out["n_lo"], out["n_hi"] = n_lo, n_hi
    out["range_lo"], out["range_hi"] = lo, hi  # the node counts allowed before target, memory and speed
    out["n_target_max"], out["n_memory_min"], out["n_speed_min"] = n_target, n_memory, n_speed
    return out


# ---------------------------------------------------------------- expansion to priced candidates


def _node_cost(server: ServerRow, nic: NicRow | None, nics: int) -> tuple[float, float]:
    """Server plus the NICs not already in its price; nameplate power."""
    if nic is None:
        return server.price_usd, server.power_w
    extra = max(0, nics - server.included_count(nic.sku))
    return server.price_usd + extra * nic.price_usd, server.power_w + extra * nic.power_w


def _allowed_nodes(scenario: Scenario, per_node: int, mb: int, lo: int, hi: int) -> list[int] | None:
    """With a fixed global batch only node counts with a whole grad_accum are allowed."""
    gb = scenario.workload.global_batch
    if gb is None:
        return None
    if gb % (per_node * mb):
        return []
    quotient = gb // (per_node * mb)
    return [n for n in range(max(lo, 1), min(hi, quotient) + 1) if quotient % n == 0]


def build(catalog: Catalog, scenario: Scenario, calibration: Calibration) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(candidates, bounds): priced candidate rows with a non-empty node range, and the bounds table of
    every perf key (for explaining infeasibility)."""
    work = scenario_workload(catalog, scenario)
    servers = allowed_servers(catalog, scenario)
    bounds = node_bounds(_perf_keys(catalog, scenario, work, servers), scenario, calibration)
    index = {_key(r): r for r in bounds.to_dict("records")}
    rows: list[dict] = []
    for server in servers:
        for mb in scenario.workload.micro_batches:
            rows += _single_node_rows(index, scenario, server, mb)
            rows += _multi_node_rows(catalog, index, scenario, server, mb)
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame = _prune_dominated(frame)
    return frame, bounds


def _key(r: dict) -> tuple:
    return (
        r["gpu"],
        r["gpus_per_node"],
        r["intra_node_gb_per_s"],
        r["micro_batch"],
        round(r["node_gbps"], 9),
        r["fabric"],
        bool(r["single"]),
    )


def _range_ok(scenario, server, mb, lo, hi):
    if lo > hi:
        return None
    allowed = _allowed_nodes(scenario, server.gpus_per_node, mb, lo, hi)
    if allowed is not None:
        if not allowed:
            return None
        lo, hi = allowed[0], allowed[-1]
    return lo, hi, allowed


def _single_node_rows(index, scenario, server, mb) -> list[dict]:
    b = index[(server.gpu, server.gpus_per_node, server.intra_node_gb_per_s, mb, 1.0, "ib", True)]
    found = _range_ok(scenario, server, mb, int(b["n_lo"]), int(b["n_hi"]))
    if found is None:
        return []
    price, power = _node_cost(server, None, 0)
    return [_row(server, mb, None, 0, "none", None, 0, 1.0, 1.0, found, price, power, None, 0)]


def _multi_node_rows(catalog, index, scenario, server, mb) -> list[dict]:
    c, rows = scenario.constraints, []
    optics = catalog.items("optics")
    # with a TCO objective a link option's watts cost energy over the horizon; for capex only its price counts
    watt = usd_per_watt_drawn(scenario.objective) if scenario.objective.kind == "tco" else 0.0
    for nic in catalog.items("nics"):
        for fab in (f for f in nic.fabrics if f in c.fabrics):
            switches = [s for s in catalog.items("switches") if s.fabric == fab]
            for nics in range(1, _max_nics(server, scenario) + 1):
                node_gbps = _nic_gbps(nic, server) * nics
                price, power = _node_cost(server, nic, nics)
                for switch in switches:
                    b = fabric.breakout(switch.port_gbps, nic.port_gbps)
                    if not b or b > switch.max_breakout:
                        continue
                    links = fabric.node_links(
                        optics, fab, nic.port_gbps, switch.port_gbps, b, scenario.cabling.node_leaf_reach_m, watt
                    )
                    up = fabric.switch_links(optics, fab, switch.port_gbps, scenario.cabling.switch_reach_m, watt)
                    if links is None:
                        continue
                    for o in c.oversubscription:
                        key = (
                            server.gpu,
                            server.gpus_per_node,
                            server.intra_node_gb_per_s,
                            mb,
                            round(node_gbps / o, 9),
                            fab,
                            False,
                        )
                        bound = index[key]
                        endpoints_per_node = nics * nic.ports
                        for tier in (1, 2, 3) if o == 1 else (2, 3):
                            if tier > 1 and up is None:
                                continue
                            cap = fabric.max_down_ports(tier, switch.ports, o) * b // endpoints_per_node
                            found = _range_ok(scenario, server, mb, int(bound["n_lo"]), min(int(bound["n_hi"]), cap))
                            if found is None:
                                continue
                            rows.append(
                                _row(
                                    server,
                                    mb,
                                    nic,
                                    nics,
                                    fab,
                                    switch,
                                    tier,
                                    o,
                                    node_gbps,
                                    found,
                                    price,
                                    power,
                                    (links, up),
                                    b,
                                )
                            )
    return rows


def _row(server, mb, nic, nics, fab, switch: SwitchRow | None, tier, o, node_gbps, found, price, power, links, b):
    lo, hi, allowed = found
    (endpoint_items, port_items, link_text), up = links if links else ((None, None, ""), None)
    down, upp = fabric.leaf_split(switch.ports, o) if switch else (0, 0)
    return {
        "server": server.name,
        "gpu": server.gpu,
        "gpus_per_node": server.gpus_per_node,
        "intra_node_gb_per_s": server.intra_node_gb_per_s,
        "micro_batch": mb,
        "nic": nic.sku if nic else None,
        "nic_speed_gbps": nic.speed_gbps if nic else 0.0,
        "nics_per_node": nics,
        "nic_port_gbps": nic.port_gbps if nic else 0.0,
        "endpoints_per_node": nics * (nic.ports if nic else 0),
        "node_gbps": node_gbps if nic else 0.0,
        "fabric": fab,
        "switch": switch.sku if switch else None,
        "tier": tier,
        "oversubscription": o,
        "switch_ports": switch.ports if switch else 0,
        "breakout": b,
        "leaf_down": down,
        "leaf_up": upp,
        "agg_down": fabric.agg_down(switch.ports) if switch else 0,
        "n_lo": lo,
        "n_hi": hi,
        "allowed_nodes": allowed,
        "node_usd": price,
        "node_w": power,
        "switch_usd": switch.price_usd if switch else 0.0,
        "switch_w": switch.power_w if switch else 0.0,
        "endpoint_usd": endpoint_items.usd if endpoint_items else 0.0,
        "endpoint_w": endpoint_items.watts if endpoint_items else 0.0,
        "port_usd": port_items.usd if port_items else 0.0,
        "port_w": port_items.watts if port_items else 0.0,
        "uplink_usd": up[0].usd if up else 0.0,
        "uplink_w": up[0].watts if up else 0.0,
        "endpoint_skus": endpoint_items.skus if endpoint_items else (),
        "port_skus": port_items.skus if port_items else (),
        "uplink_skus": up[0].skus if up else (),
        "links": link_text + (f"; uplinks {up[1]}" if up and tier > 1 else ""),
    }


_SAME = [
    "gpu",
    "gpus_per_node",
    "intra_node_gb_per_s",
    "micro_batch",
    "node_gbps",
    "nic_port_gbps",
    "endpoints_per_node",
    "fabric",
    "switch_ports",
    "breakout",
    "tier",
    "oversubscription",
    "n_lo",
    "n_hi",
]


def _prune_dominated(frame: pd.DataFrame) -> pd.DataFrame:
    """Drop a candidate when another with identical performance and fabric shape costs no more and draws no
    more power in every coefficient (it can never be the unique optimum)."""
    coefficients = [
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
    frame = frame.assign(_allowed=frame["allowed_nodes"].map(lambda a: None if a is None else tuple(a)))
    keep = []
    for _, group in frame.groupby(_SAME + ["_allowed"], dropna=False, sort=False):
        values = group[coefficients].to_numpy()
        order = np.lexsort(values.T[::-1])
        kept: list[int] = []
        for i in order:
            if not any((values[j] <= values[i]).all() for j in kept):
                kept.append(i)
        keep += list(group.index[kept])
    return frame.loc[sorted(keep)].drop(columns="_allowed").reset_index(drop=True)


def fabric_text(row: dict) -> str:
    if row["tier"] == 0:
        return "single node (no fabric)"
    tiers = {1: "one switch", 2: "two-tier leaf-spine", 3: "three-tier"}[row["tier"]]
    over = "" if row["oversubscription"] == 1 else f", {row['oversubscription']:g}:1 oversubscribed"
    brk = f", 1:{row['breakout']} breakout" if row["breakout"] > 1 else ""
    return f"{tiers} of {row['switch']}{over}{brk}"
