"""An independent reference for the fleet MILP: list every plan of a tiny fleet and price each one.

It reads the same tables (planner/tables/fleet.py: offers, pools, run columns, serving rates; they are the
data, checked by the hand-worked tests) but none of the model: fabric sizes come from the closed form
(fabric.size_arrays, the least of one switch and leaf-spine), tier prices from the bands, and costs are
summed period by period as a buyer would. Vectorised over every purchase vector at once, looped over run
choices, topologies and installed nodes kept. Only for fleets of a few offers, pools and periods.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from planner.hardware import fabric
from planner.inputs.fleet import HOURS_PER_PERIOD
from planner.tables.fleet import FleetData

MONTHS_PER_PERIOD = 3


class _Lookups:
    """The tables as plain dicts, read once (pandas lookups in the inner loops would dominate the time)."""

    def __init__(self, d: FleetData):
        periods = d.periods.set_index("t")
        self.weight = periods["capex_weight"].to_dict()
        self.discount = periods["discount"].to_dict()
        self.site_kw = d.site.set_index("t")["kw"].to_dict()
        self.node_w = {(o, p): w for o, p, w in d.supply[["o", "p", "node_w"]].itertuples(index=False)}
        self.extra_usd = {(o, p): u for o, p, u in d.supply[["o", "p", "extra_usd"]].itertuples(index=False)}
        self.price = d.offers.set_index("o")["price_usd"].to_dict()
        self.tier_kind = d.offers.set_index("o")["tier_kind"].to_dict()
        self.bands = {o: g.sort_values("lo") for o, g in d.tiers.groupby("o")}
        self.rates = d.cloud.set_index("c")["usd_per_h"].to_dict() if not d.cloud.empty else {}
        self.gpus = dict(zip(d.pools["p"], d.pools["gpus_per_node"], strict=True))
        self.networked = list(d.pools[d.pools["networked"]].itertuples(index=False))
        self.demand = list(d.demand[["s", "t", "tokens_per_s"]].itertuples(index=False, name=None))
        self.ways = {
            s: (_rows(g[g["kind"] == "pool"]), _rows(g[g["kind"] == "cloud"])) for s, g in d.serving.groupby("s")
        }
        self.options = d.options.set_index("k")[["kind", "resource", "n"]].to_dict("index")
        first = d.installed.drop_duplicates("entry")
        self.installed = {
            int(i): (int(p), float(w)) for i, p, w in first[["entry", "p", "node_w"]].itertuples(index=False)
        }
        self.quota = d.cloud.set_index("c")["quota"].to_dict() if not d.cloud.empty else {}
        self.stock = list(d.stock[["o", "t", "units"]].itertuples(index=False, name=None))
        self._memo: dict = {}
        self.service_periods = math.ceil(d.fleet.buy.life_years * 4 - 1e-9)  # quarters a bought server serves

    def memo(self, key, compute):
        """What does not depend on the run choices (stock, server spend, the network of a topology and
        the installed nodes kept) is computed once per brute force, not once per plan of runs."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]


def _rows(frame) -> list:
    return list(frame.itertuples(index=False))


def brute_force(d: FleetData) -> float | None:
    """The least discounted cost over every plan (None when no plan is feasible)."""
    keys, grid = _purchase_grid(d)
    look = _Lookups(d)
    best = math.inf
    eligible = d.columns[~d.columns["hard_late"]]
    if set(d.jobs["j"]) - set(eligible["j"]):
        return None  # a job with no run that meets its hard deadline: no plan
    columns = [g for _, g in eligible.groupby("j")]
    networked = [int(p) for p in d.pools.loc[d.pools["networked"], "p"]]
    forced = {int(p) for p in d.pools.loc[d.pools["owned_multi_leaf"], "p"]}
    topologies = [t for t in itertools.product((0, 1), repeat=len(networked)) if _allowed(t, networked, forced)]
    for runs in itertools.product(*[list(g.itertuples(index=False)) for g in columns]):
        held = _held(look, runs)
        for topology in topologies:
            for active in _installed_choices(d):
                topo = dict(zip(networked, topology, strict=True))
                cost = _cost(d, look, keys, grid, runs, held, topo, active)
                best = min(best, float(cost.min()))
    return None if math.isinf(best) else best


def _allowed(topology, networked, forced) -> bool:
    return all(topology[i] == 1 for i, p in enumerate(networked) if p in forced)


def _purchase_grid(d: FleetData):
    lead = dict(zip(d.offers["o"], d.offers["lead"], strict=True))
    size = dict(zip(d.pools["p"], d.pools["max_nodes"], strict=True))
    keys = [(int(o), int(p), t) for o, p in d.supply[["o", "p"]].itertuples(index=False)
            for t in range(1 + lead[o], d.horizon + 1)]  # fmt: skip
    ranges = [range(int(size[p]) + 1) for _, p, _ in keys]
    grid = np.array(list(itertools.product(*ranges)), dtype=float).reshape(-1, len(keys))
    return keys, grid


def _held(look, runs) -> dict:
    """(kind, resource, t) -> nodes or instances held by the chosen runs."""
    held: dict = {}
    for run in runs:
        opt = look.options[run.k]
        for t in range(int(run.start), int(run.finish) + 1):
            key = (opt["kind"], int(opt["resource"]), t)
            held[key] = held.get(key, 0) + int(opt["n"])
    return held


def _installed_choices(d: FleetData):
    """Every non-increasing count of installed nodes kept in service, per entry (0 once retired)."""
    if d.installed.empty:
        yield {}
        return
    entries = []
    for i, g in d.installed.groupby("entry"):
        owned = g.sort_values("t")["nodes"].tolist()
        seqs = [
            s
            for s in itertools.product(*[range(n + 1) for n in owned])
            if all(a >= b for a, b in itertools.pairwise(s))
        ]
        entries.append([(int(i), s) for s in seqs])
    for combo in itertools.product(*entries):
        yield dict(combo)


def _cost(d: FleetData, look: _Lookups, keys, grid, runs, held, topology, active) -> np.ndarray:
    """Discounted cost of every purchase vector (inf where infeasible)."""
    H, rows = d.horizon, grid.shape[0]
    costs = d.fleet.costs
    ok = np.ones(rows, dtype=bool)
    nodes, node_w = {}, {}
    for p in look.gpus:
        for t in range(1, H + 1):
            nodes[(p, t)] = np.zeros(rows)
            node_w[(p, t)] = np.zeros(rows)
    for col, (o, p, t) in enumerate(keys):
        for later in range(t, min(H, t + look.service_periods - 1) + 1):  # retired at its life
            nodes[(p, later)] = nodes[(p, later)] + grid[:, col]
            node_w[(p, later)] = node_w[(p, later)] + grid[:, col] * look.node_w[(o, p)]
    for i, seq in active.items():
        p, watts = look.installed[i]
        for t in range(1, H + 1):
            nodes[(p, t)] = nodes[(p, t)] + seq[t - 1]
            node_w[(p, t)] = node_w[(p, t)] + seq[t - 1] * watts
    ok &= look.memo("stock", lambda: _stock_ok(look, keys, grid))
    state = (tuple(sorted(topology.items())), tuple(sorted(active.items())))
    net = look.memo(("network", state), lambda: _network(d, look, nodes, topology, rows))
    if net is None:
        return np.full(rows, np.inf)
    ok &= net["fits"]
    free = {}
    for p, gpus in look.gpus.items():
        for t in range(1, H + 1):
            free[(p, t)] = gpus * (nodes[(p, t)] - held.get(("pool", int(p), t), 0))
            ok &= free[(p, t)] >= -1e-9
    serving_cloud, ok_serving, cloud_instances = _serving(d, look, free, rows)
    ok &= ok_serving
    ok &= _quota_ok(d, look, held, cloud_instances, rows)
    total = np.zeros(rows)
    for t in range(1, H + 1):
        servers = look.memo(("servers", t), lambda t=t: _server_spend(d, look, keys, grid, t))
        network_capex = net["capex"][t]
        node_watts = sum(node_w[(p, t)] for p in look.gpus)
        network_watts = net["watts"][t]
        power_kw = (node_watts + network_watts) / 1e3
        site_kw = look.site_kw[t]
        if not np.isnan(site_kw):
            ok &= power_kw <= site_kw + 1e-6
        draw_kw = (costs.server_draw_fraction * node_watts + network_watts) / 1e3
        energy = draw_kw * HOURS_PER_PERIOD * costs.pue * costs.usd_per_kwh
        colocation = power_kw * costs.colocation_usd_per_kw_month * MONTHS_PER_PERIOD
        weight, discount = look.weight[t], look.discount[t]
        total += weight * (servers + network_capex) + discount * (energy + colocation + serving_cloud[t])
    total += sum(run.cloud_pv + run.penalty for run in runs)
    return np.where(ok, total, np.inf)


def _stock_ok(look: _Lookups, keys, grid) -> np.ndarray:
    ok = np.ones(grid.shape[0], dtype=bool)
    for o, t, units in look.stock:
        bought = sum(grid[:, c] for c, (oo, _, tt) in enumerate(keys) if oo == o and tt == t)
        ok &= np.asarray(bought) <= units
    return ok


def _server_spend(d: FleetData, look: _Lookups, keys, grid, t) -> np.ndarray:
    """Tiered server prices per order, plus each node's NICs and links."""
    spend = np.zeros(grid.shape[0])
    for o in look.price:
        cols = [c for c, (oo, _, tt) in enumerate(keys) if oo == o and tt == t]
        if not cols:
            continue
        q = grid[:, cols].sum(axis=1)
        spend += _tier_price(look, int(o), q)
        for c in cols:
            spend += grid[:, c] * look.extra_usd[(keys[c][0], keys[c][1])]
    return spend


def _tier_price(look: _Lookups, o: int, q: np.ndarray) -> np.ndarray:
    price = float(look.price[o])
    if o not in look.bands:
        return price * q
    bands = look.bands[o]
    if look.tier_kind[o] == "all_units":
        unit = np.full(q.shape, price)
        for lo, u in bands[["lo", "unit_usd"]].itertuples(index=False):
            unit = np.where(q >= lo, u, unit)
        return unit * q
    out = np.zeros(q.shape)
    for lo, hi, u in bands[["lo", "hi", "unit_usd"]].itertuples(index=False):
        top = np.inf if np.isnan(hi) else hi
        out += u * np.clip(np.minimum(q, top) - lo + 1, 0, None)
    return out


def _network(d: FleetData, look, nodes, topology, rows):
    """Switches, down-ports and uplinks owned per period (closed form, never fewer than before), their
    capex when added and their watts."""
    H = d.horizon
    capex = {t: np.zeros(rows) for t in range(1, H + 1)}
    watts = {t: np.zeros(rows) for t in range(1, H + 1)}
    fits = np.ones(rows, dtype=bool)
    for pool in look.networked:
        s = topology[int(pool.p)]
        owned = {"D": pool.owned_ports, "K": pool.owned_cages, "L": pool.owned_leaves, "S": pool.owned_spines,
                 "U": pool.owned_uplinks}  # fmt: skip
        before = {k: np.full(rows, float(v)) for k, v in owned.items()}
        for t in range(1, H + 1):
            n = nodes[(pool.p, t)].astype(np.int64)
            tier = np.where(n > 0, 2 if s else 1, 0)
            size = fabric.size_arrays(
                n * pool.endpoints, tier, pool.switch_ports, pool.breakout, 1.0, nodes=n,
                cage_endpoints=max(pool.cage_endpoints, 1), ports_per_cage=max(pool.ports_per_cage, 1),
            )  # fmt: skip
            fits &= size["fits"] & (n <= pool.two_tier_cap)
            now = {"D": size["down_ports"], "K": size["cages"], "L": size["leaf"], "S": size["spine"],
                   "U": size["uplinks"]}  # fmt: skip
            now = {k: np.maximum(before[k], now[k]) for k in now}
            added = {k: now[k] - before[k] for k in now}
            capex[t] += pool.switch_usd * (added["L"] + added["S"]) + pool.cage_usd * added["K"]
            capex[t] += pool.uplink_usd * added["U"]
            watts[t] += pool.switch_w * (now["L"] + now["S"]) + pool.cage_w * now["K"] + pool.uplink_w * now["U"]
            before = now
    return {"capex": capex, "watts": watts, "fits": fits}


def _serving(d: FleetData, look: _Lookups, free, rows):
    """Owned GPUs left by training serve first (they are paid for either way); the rest goes to the
    cheapest cloud offering per token, in whole instances. (Exact with at most one cloud offering.)"""
    H = d.horizon
    cloud_cost = {t: np.zeros(rows) for t in range(1, H + 1)}
    instances: dict = {}
    ok = np.ones(rows, dtype=bool)
    rates = look.rates
    for s, t, need in look.demand:
        owned, rented = look.ways[s]
        supplied = np.zeros(rows)
        for row in owned:
            supplied += np.maximum(free[(row.resource, t)], 0) / row.replica_gpus * row.tokens_per_s
        short = np.maximum(need - supplied, 0)
        if not rented:
            ok &= short <= 1e-6
            continue
        best = None
        for row in rented:
            n = np.ceil(short / row.tokens_per_s * row.replica_gpus / row.gpus_per_node - 1e-9)
            usd = n * float(rates[row.resource]) * HOURS_PER_PERIOD
            if best is None or usd.sum() < best[0].sum():
                best = (usd, row.resource, n)
        cloud_cost[t] += best[0]
        key = (best[1], t)
        instances[key] = instances.get(key, 0) + best[2]
    return cloud_cost, ok, instances


def _quota_ok(d: FleetData, look: _Lookups, held, instances, rows) -> np.ndarray:
    ok = np.ones(rows, dtype=bool)
    quota = look.quota
    for c in quota:
        for t in range(1, d.horizon + 1):
            ok &= held.get(("cloud", int(c), t), 0) + instances.get((int(c), t), 0) <= quota[c]
    return ok
