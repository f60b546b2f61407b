"""The tables the fleet MILP is built from (docs/fleet.md section 2), like candidates.py for `plan`:

  periods   discount factor and residual value of each quarter
  offers    catalog servers for sale, with their vendor's price, volume tiers, stock and lead time
  pools     identical nodes on one network: a server shape (GPU, GPUs per node, NVLink, PCIe) x a NIC
            configuration (NIC, count, fabric, switch), or standalone (no network); installed nodes join
            the pool of their shape and network
  supply    which offers can become nodes of which pool, and the per-node extra cost (NICs, links)
  options   per training job and pool (or cloud offering): the node counts worth running at, each the
            smallest that finishes the job in m whole periods (performance from perf.evaluate)
  columns   per option and start period: a complete contiguous run (periods held, lateness, cloud bill)
  serving   per inference service and pool (or cloud offering): GPUs per replica and tokens/s per replica
  demand, site, cloud, installed

Everything is computed once, vectorised where a table will do; the MILP (optimize/fleet.py) only reads it.
Every price and watt comes from a catalog row or the fleet file; the performance from perf.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from planner.base.errors import ScenarioError, in_field
from planner.catalog.load import Catalog
from planner.catalog.rows import CloudRow
from planner.hardware import fabric
from planner.hardware.designs import Designs, designs
from planner.inputs.fleet import PERIODS_PER_YEAR, Fleet, Periods, steps
from planner.inputs.scenario import Scenario
from planner.model.calibration import Calibration
from planner.tables import fleet_workloads as workloads
from planner.tables import rent as renting
from planner.tables.buy import NODE_SHAPE


@dataclass(frozen=True)
class FleetData:
    fleet: Fleet
    labels: list[str]
    periods: pd.DataFrame
    offers: pd.DataFrame
    stock: pd.DataFrame
    tiers: pd.DataFrame
    pools: pd.DataFrame
    supply: pd.DataFrame
    installed: pd.DataFrame
    jobs: pd.DataFrame
    options: pd.DataFrame
    columns: pd.DataFrame
    services: pd.DataFrame
    serving: pd.DataFrame
    demand: pd.DataFrame
    cloud: pd.DataFrame
    site: pd.DataFrame

    @property
    def horizon(self) -> int:
        return len(self.labels)

    @property
    def service_periods(self) -> int:
        """Quarters a bought server serves: while its age at a quarter's start is below buy.life_years (the
        rule installed nodes retire by, _installed_table); then it is retired and counts no more."""
        return math.ceil(self.fleet.buy.life_years * PERIODS_PER_YEAR - 1e-9)

    def in_service(self, t: int) -> range:
        """The periods a server delivered in t is in service."""
        return range(t, min(self.horizon, t + self.service_periods - 1) + 1)


def build(catalog: Catalog, fleet: Fleet, calibration: Calibration, source: str = "fleet file") -> FleetData:
    """All tables; errors name the fleet file's field and the fix."""
    periods = Periods(fleet.horizon.periods, fleet.horizon.start)
    names = _offer_names(catalog, fleet, source)
    installed_names = [in_field(source, f"installed[{i}].server", lambda e=e: catalog.server(e.server)).name
                       for i, e in enumerate(fleet.installed)]  # fmt: skip
    parts = _designs(catalog, fleet, names + installed_names)
    offers, stock, tiers = _offers(catalog, fleet, periods, parts.single, names, source)
    pools, installed = _pools(catalog, fleet, offers, parts, periods, source)
    supply = _undominated(_supply(offers, pools, parts, shape_keys(fleet)), offers, stock, tiers)
    cloud = _cloud(catalog, fleet)
    jobs, services = workloads.workloads(fleet)
    options = workloads.options(catalog, fleet, jobs, pools, cloud, calibration, source)
    table = _periods(fleet, periods)
    columns = workloads.columns(options, jobs, table)
    serving, demand = workloads.serving(catalog, fleet, services, pools, cloud, source)
    site = _site(fleet, periods)
    return FleetData(
        fleet, periods.labels, table, offers, stock, tiers, pools, supply, installed, jobs, options, columns,
        services, serving, demand, cloud, site,
    )  # fmt: skip


# ---------------------------------------------------------------- periods


def _periods(fleet: Fleet, periods: Periods) -> pd.DataFrame:
    """Discount factor at the start of each quarter, and the share of a purchase's value left at the end of
    the horizon (straight-line over its life; 0 when residual is "none")."""
    t = np.arange(1, periods.count + 1)
    rate = fleet.costs.discount_rate
    discount = (1 + rate) ** (-(t - 1) / PERIODS_PER_YEAR)
    life = fleet.buy.life_years * PERIODS_PER_YEAR
    residual = np.clip(1 - (periods.count - t + 1) / life, 0, 1) if fleet.buy.residual == "straight_line" else 0 * t
    end_discount = (1 + rate) ** (-periods.count / PERIODS_PER_YEAR)
    return pd.DataFrame(
        {
            "t": t,
            "label": periods.labels,
            "discount": discount,
            "residual": residual,
            # what one dollar of capex paid in t costs, net of the value credited back at the end
            "capex_weight": discount - end_discount * residual,
        }
    )


# ---------------------------------------------------------------- node designs (planner/hardware/designs.py)


def _designer(fleet: Fleet) -> Scenario:
    """The plan scenario the fleet's node and network designs are made under: its fabrics, the site's rack
    layout with leaves in the rows (leaf-spine filled in order, what optimize/fleet.py sizes), the compute
    fabric only (the storage and management networks, racks and PDUs are `planner plan`'s bill of
    materials, not the fleet's), links chosen by price."""
    layout = fleet.site.layout.model_copy(update={"leaf_placement": "middle-of-row"})
    off = {"storage_network": False, "inband_network": False, "oob_network": False, "subnet_manager": False}
    return Scenario.model_validate(
        {
            "workload": {"params": 1e9, "seq_len": 1024},
            "requirement": {"gpus": 8},
            "constraints": {"fabrics": list(fleet.buy.fabrics), "oversubscription": [1.0]},
            "layout": layout.model_dump(),
            "include": {**off, "racks": False},
        }
    )


def _designs(catalog: Catalog, fleet: Fleet, names: list[str]) -> Designs:
    """Every node design of these servers: one row per server (standalone) and one per server x NIC x count x
    ports x fabric x switch on a two-tier leaf-spine (networked)."""
    owned = [sku for e in fleet.installed for sku in (e.nic, e.switch) if sku]  # designed even with a cheaper twin
    parts = designs(catalog, _designer(fleet), [catalog.server(n) for n in dict.fromkeys(names)], owned)
    multi = parts.multi
    if not multi.empty:
        # two tiers, non-blocking; a rail-optimised design (DGX: one NIC per GPU) only where its NIC
        # configuration has no plain leaf-spine one: the fleet prices its links and sizes it in order
        multi = multi[(multi["tier"] == 2) & (multi["oversubscription"] == 1)]
        multi = multi.assign(_rail=multi["topology"] != "leaf-spine").sort_values("_rail", kind="stable")
        multi = multi.drop_duplicates(["server", *NETWORK_KEY]).drop(columns="_rail").reset_index(drop=True)
    return Designs(parts.configs, multi, parts.single)


# ---------------------------------------------------------------- offers: servers for sale


def _offer_names(catalog: Catalog, fleet: Fleet, source: str) -> list[str]:
    buy = fleet.buy
    if buy.servers is None:  # every orderable server (an announced one only when named)
        return [s.name for s in catalog.items("servers") if s.orderable]
    if not buy.servers:
        raise ScenarioError(
            f"{source}: buy.servers is empty: name at least one server the fleet may buy (a fleet that only "
            "reuses installed nodes or only rents is not planned yet)"
        )
    found = [
        in_field(source, f"buy.servers[{i}]", lambda n=n: catalog.server(n)).name for i, n in enumerate(buy.servers)
    ]
    return list(dict.fromkeys(found))


def _offers(catalog: Catalog, fleet: Fleet, periods: Periods, single: pd.DataFrame, names: list[str], source: str):
    terms = {}
    for i, t in enumerate(fleet.buy.terms):
        name = in_field(source, f"buy.terms[{i}].server", lambda t=t: catalog.server(t.server)).name
        if name not in names:
            raise ScenarioError(f"{source}: buy.terms[{i}].server = {t.server!r}: not in buy.servers; add it there")
        terms[name] = (i, t)
    shapes = single.set_index("server")
    records, stock, tiers = [], [], []
    for o, name in enumerate(names):
        server = catalog.server(name)
        i, t = terms.get(name, (None, None))
        price = t.price_usd if t and t.price_usd is not None else server.price_usd
        records.append(
            {
                "o": o,
                "server": server.name,
                "vendor": (t.vendor if t and t.vendor else server.vendor),
                **{c: shapes.at[name, c] for c in NODE_SHAPE},
                "price_usd": price,
                "server_w": server.power_w,
                "lead": t.lead_time_periods if t else 0,
                "tier_kind": t.tier_kind if t else "all_units",
                "source": catalog.cited(server),
                "confidence": server.confidence,
                "price_date": "fleet terms" if t and t.price_usd is not None else server.date,
            }
        )
        if t is not None and t.stock is not None:
            where = f"buy.terms[{i}].stock"
            units = steps(periods, t.stock, "units", where) if isinstance(t.stock, list) else [t.stock] * periods.count
            stock += [{"o": o, "t": p + 1, "units": u} for p, u in enumerate(units)]
        if t is not None and t.tiers:
            tiers += _tier_bands(o, price, t.tiers)
    return (
        pd.DataFrame.from_records(records),
        pd.DataFrame.from_records(stock, columns=["o", "t", "units"]),
        pd.DataFrame.from_records(tiers, columns=["o", "k", "lo", "hi", "unit_usd", "label"]),
    )


def _tier_bands(o: int, price: float, tiers) -> list[dict]:
    """Bands [lo, hi] of units per order with their unit price; below the first tier, the list price.
    hi of the last band is open (NaN): the MILP bounds it by the stock or the pool sizes."""
    bands = []
    if tiers[0].units > 1:
        bands.append((1, tiers[0].units - 1, price, "list"))
    for i, tier in enumerate(tiers):
        hi = tiers[i + 1].units - 1 if i + 1 < len(tiers) else np.nan
        unit = tier.unit_usd if tier.unit_usd is not None else price * (1 - tier.discount)
        label = f"{tier.units}+ units" + (f" ({tier.discount:.0%} off)" if tier.discount is not None else "")
        bands.append((tier.units, hi, unit, label))
    keys = ("lo", "hi", "unit_usd", "label")
    return [{"o": o, "k": k, **dict(zip(keys, band, strict=True))} for k, band in enumerate(bands)]


# ---------------------------------------------------------------- pools: shape x network

SHAPE = ["gpu", "gpus_per_node", "scale_up_gpus", "scale_up_gb_per_s", "gpus_per_host", "host_gbps"]
SHAPE += ["host_dram_gb_per_s"]
HOST = ["gpus_per_host", "host_gbps", "host_dram_gb_per_s"]


def shape_keys(fleet: Fleet) -> list[str]:
    """What makes two servers' nodes identical to the performance model: the host (its GPUs, PCIe and DRAM
    rates) only matters when a job offloads its optimizer (perf.offload_s), so without offload it does not
    split pools."""
    offload = any(job.workload.offload != "none" for job in fleet.training)
    return SHAPE if offload else [c for c in SHAPE if c not in HOST]


NETWORK_KEY = ["nic", "nics_per_node", "nic_ports", "fabric", "switch", "node_gbps"]
# what a pool's network costs and how it is sized, from its design row
NETWORK = [
    *NETWORK_KEY,
    "endpoints",
    "breakout",
    "switch_ports",
    "ports_per_cage",
    "cage_endpoints",
    "leaf_down",
    "leaf_up",
    "switch_usd",
    "switch_w",
    "endpoint_usd",
    "endpoint_w",
    "cage_usd",
    "cage_w",
    "uplink_usd",
    "uplink_w",
    "links",
    "endpoint_skus",
    "cage_skus",
    "uplink_skus",
]


def _network_columns(rows: pd.DataFrame) -> pd.DataFrame:
    return rows.rename(columns={"endpoints_per_node": "endpoints"})[NETWORK]


def _standalone() -> dict:
    zeros = {c: 0 for c in NETWORK}
    return {**zeros, "nic": None, "fabric": "none", "switch": None, "links": "", "node_gbps": 0.0,
            "endpoint_skus": (), "cage_skus": (), "uplink_skus": ()}  # fmt: skip


def _per_node_network_usd(rows: pd.DataFrame) -> np.ndarray:
    """Network cost per node at scale, per design row (for choosing which configurations to offer, not for
    pricing): the NICs the server does not include, its links and cages, its share of leaves, spines and
    leaf-spine links."""
    e, b, c = (rows[k].to_numpy(float) for k in ("endpoints_per_node", "breakout", "cage_endpoints"))
    p, d, u = (rows[k].to_numpy(float) for k in ("switch_ports", "leaf_down", "leaf_up"))
    per_port = rows["switch_usd"].to_numpy(float) / d * (1 + u / p) + rows["uplink_usd"].to_numpy(float) * u / d
    nics = (rows["node_usd"] - rows["server_usd"]).to_numpy(float)
    return nics + e * rows["endpoint_usd"].to_numpy(float) + e / c * rows["cage_usd"].to_numpy(float) + e / b * per_port


def _network_choices(multi: pd.DataFrame, options: int) -> pd.DataFrame:
    """The `buy.network_options` configurations offered for one shape: the Pareto front of (node Gbps, cost
    per node), taking the fastest, then each next at most half the previous bandwidth. A configuration's
    cost is its dearest server's (it must serve every server of the shape that has it)."""
    if multi.empty or options == 0:
        return multi.iloc[0:0]
    costed = multi.assign(usd_per_node=_per_node_network_usd(multi))
    per_key = costed.groupby(NETWORK_KEY, dropna=False, sort=False)["usd_per_node"].max().reset_index()
    frame = per_key.sort_values(["node_gbps", "usd_per_node"], ascending=[False, True])
    front = frame[frame["usd_per_node"] < frame["usd_per_node"].cummin().shift(fill_value=np.inf)]
    chosen = []
    for row in front.to_dict("records"):
        if len(chosen) == options:
            break
        if not chosen or row["node_gbps"] <= chosen[-1]["node_gbps"] / 2 + 1e-9:
            chosen.append(row)
    keys = pd.DataFrame.from_records(chosen)[NETWORK_KEY]
    return costed.merge(keys, on=NETWORK_KEY).drop_duplicates(NETWORK_KEY)


def _pools(catalog: Catalog, fleet: Fleet, offers: pd.DataFrame, parts: Designs, periods: Periods, source: str):
    records = []
    multi, keys = parts.multi, shape_keys(fleet)
    for _, group in offers.groupby(keys, sort=False, dropna=False):
        shape = group.iloc[0][NODE_SHAPE].to_dict()
        shape.update(group[HOST].min().to_dict())  # the slowest host of the pool (only offload reads it)
        if fleet.buy.standalone_pools:
            records.append({**shape, **_standalone()})
        mine = multi[multi["server"].isin(group["server"])] if not multi.empty else multi
        chosen = _network_choices(mine, fleet.buy.network_options)
        records += [{**shape, **net} for net in _network_columns(chosen).to_dict("records")]
    installed_at = []  # (entry, its record's position, node watts)
    for i, entry in enumerate(fleet.installed):
        shape, net, node_w = _installed_pool(catalog, fleet, entry, parts, f"installed[{i}]", source)
        installed_at.append((i, len(records), node_w))
        records.append({**shape, **net})
    if not records:
        raise ScenarioError(
            f"{source}: buy.network_options 0 with buy.standalone_pools false leaves no pool to buy into; allow one"
        )
    raw = pd.DataFrame.from_records(records)
    key = [*keys, *NETWORK_KEY]
    raw["key"] = ["|".join(map(str, values)) for values in raw[key].itertuples(index=False)]
    pools = raw.drop_duplicates("key").reset_index(drop=True)
    pools["p"] = np.arange(len(pools))
    pools["name"] = [_pool_name(r) for r in pools.to_dict("records")]
    pools["networked"] = pools["fabric"] != "none"
    # nodes per rack (layout.nodes_per_rack on the site's layout): the fewest of any server of the shape
    per_rack = parts.single.groupby(keys, dropna=False)["nodes_per_rack"].min().rename("nodes_per_rack")
    pools = pools.merge(per_rack.reset_index(), on=keys, how="left")
    pools["nodes_per_rack"] = pools["nodes_per_rack"].fillna(1).clip(lower=1).astype(int)
    pools = _capacities(pools, fleet)
    pool_of = dict(zip(pools["key"], pools["p"], strict=True))
    installed = _installed_table(fleet, [(i, pool_of[raw.at[at, "key"]], w) for i, at, w in installed_at], periods)
    return _initial_fabric(pools, installed, source), installed


def _installed_pool(catalog: Catalog, fleet: Fleet, entry, parts: Designs, where: str, source: str):
    """The pool of an installed entry: its server's shape and the design of its NICs and switch."""
    server = in_field(source, f"{where}.server", lambda: catalog.server(entry.server))
    single = parts.single.set_index("server")
    shape = {c: single.at[server.name, c] for c in NODE_SHAPE}
    nic_sku = entry.nic or server.included_nic
    count = entry.nics_per_node if entry.nics_per_node is not None else server.included_nics * server.hosts
    if nic_sku is None or count == 0:
        return shape, _standalone(), entry.power_w or server.power_w
    nic = in_field(source, f"{where}.nic", lambda: catalog.nic(nic_sku))
    rows = parts.multi
    rows = rows[(rows["server"] == server.name) & (rows["nic"] == nic.sku) & (rows["nics_per_node"] == count)]
    if entry.fabric is not None:
        rows = rows[rows["fabric"] == entry.fabric]
    if entry.switch is not None:
        rows = rows[rows["switch"].str.lower() == entry.switch.lower()]
    rows = rows[rows["nic_ports"] == rows["nic_ports"].max()] if not rows.empty else rows  # every port cabled
    if rows.empty:
        what = f"{count} x {nic.sku}" + (f" on {entry.switch}" if entry.switch else "")
        raise ScenarioError(
            f"{source}: {where}: no leaf-spine design in the catalog connects {what} in {server.name}; check "
            "nic, nics_per_node, switch and fabric (see `planner catalog list switches`)"
        )
    row = rows.assign(usd_per_node=_per_node_network_usd(rows)).sort_values("usd_per_node").iloc[[0]]
    net = _network_columns(row).to_dict("records")[0]
    node_w = float(row["node_w"].iloc[0] + row["endpoints_per_node"].iloc[0] * row["endpoint_w"].iloc[0])
    return shape, net, entry.power_w or node_w


def _pool_name(row: dict) -> str:
    head = f"{row['gpu']} x{row['gpus_per_node']}"
    if row["fabric"] == "none":
        return f"{head} standalone"
    return f"{head} {row['nics_per_node']}x{row['nic']} {row['fabric']} {row['switch']}"


def _capacities(pools: pd.DataFrame, fleet: Fleet) -> pd.DataFrame:
    """Most nodes on one switch, on a two-tier fabric, and in the pool (buy.max_nodes_per_pool)."""
    e = np.maximum(pools["endpoints"].to_numpy(np.int64), 1)
    p, b = pools["switch_ports"].to_numpy(np.int64), pools["breakout"].to_numpy(np.int64)
    ppc = np.maximum(pools["ports_per_cage"].to_numpy(np.int64), 1)
    single = p * b // e
    two = fabric.max_down_ports(2, p, 1.0, ppc) * b // e
    cap = fleet.buy.max_nodes_per_pool
    return pools.assign(
        single_cap=np.where(pools["networked"], single, 0),
        two_tier_cap=np.where(pools["networked"], two, 0),
        max_nodes=np.where(pools["networked"], np.minimum(two, cap), cap),
    )


def _installed_table(fleet: Fleet, entries: list[tuple[int, int, float]], periods: Periods) -> pd.DataFrame:
    """Installed nodes per entry, pool and period (0 once retired at life_years), with nameplate watts."""
    records = []
    for i, p, node_w in entries:
        entry = fleet.installed[i]
        life = entry.life_years or fleet.buy.life_years
        for t in range(1, periods.count + 1):
            age = entry.age_years + (t - 1) / PERIODS_PER_YEAR
            records.append({"entry": i, "p": p, "t": t, "nodes": entry.count if age < life else 0, "node_w": node_w})
    return pd.DataFrame.from_records(records, columns=["entry", "p", "t", "nodes", "node_w"])


def fabric_size(pools: pd.DataFrame, nodes, tier) -> dict[str, np.ndarray]:
    """fabric.size_arrays for pool rows at `nodes` on `tier` (1: one switch, 2: leaf-spine in order)."""
    nodes = np.asarray(nodes, dtype=np.int64)
    return fabric.size_arrays(
        pools["endpoints"].to_numpy(np.int64) * nodes,
        tier,
        pools["switch_ports"].to_numpy(np.int64),
        pools["breakout"].to_numpy(np.int64),
        1.0,
        nodes=nodes,
        cage_endpoints=np.maximum(pools["cage_endpoints"].to_numpy(np.int64), 1),
        ports_per_cage=np.maximum(pools["ports_per_cage"].to_numpy(np.int64), 1),
    )


def _initial_fabric(pools: pd.DataFrame, installed: pd.DataFrame, source: str) -> pd.DataFrame:
    """The switches, ports, cages and uplinks the installed nodes already have (closed form: one switch when
    they fit on one, else two tiers), owned at no cost."""
    at_start = installed[installed["t"] == 1].groupby("p")["nodes"].sum()
    nodes = pools["p"].map(at_start).fillna(0).to_numpy(np.int64)
    too_many = pools["networked"] & (nodes > pools["two_tier_cap"])
    if too_many.any():
        row = pools[too_many].iloc[0]
        raise ScenarioError(
            f"{source}: installed: {int(nodes[too_many.to_numpy()][0])} nodes on {row['name']} exceed a two-tier "
            f"fabric of {row['switch']} ({int(row['two_tier_cap'])} nodes); installed entries of one server and "
            "network share one fabric here: give fewer nodes or a switch with more ports (installed[].switch)"
        )
    tier = np.where(nodes <= pools["single_cap"], 1, 2)
    tier = np.where(pools["networked"] & (nodes > 0), tier, 0)
    size = fabric_size(pools, nodes, tier)
    uplinks = np.where(tier == 2, size["leaf"] * pools["leaf_up"].to_numpy(np.int64), 0)
    return pools.assign(
        installed_nodes=nodes,
        owned_ports=size["down_ports"],
        owned_cages=size["cages"],
        owned_leaves=size["leaf"],
        # the fleet gives every leaf all its uplinks (it fills in later periods) and as many spines as take
        # them (optimize/fleet.define_fabric: P S >= u L)
        owned_spines=np.where(tier == 2, -(-uplinks // np.maximum(pools["switch_ports"].to_numpy(np.int64), 1)), 0),
        owned_uplinks=uplinks,
        owned_multi_leaf=tier == 2,
    )


# ---------------------------------------------------------------- supply: offers feeding pools


def _supply(offers: pd.DataFrame, pools: pd.DataFrame, parts: Designs, keys: list[str]) -> pd.DataFrame:
    """(offer, pool) pairs: the offer's server has the pool's shape and a design with its network. With what a
    node costs beyond the server price (NICs it does not include, NIC-side links) and its nameplate watts."""
    on_net = offers.merge(pools[pools["networked"]][[*keys, *NETWORK_KEY, "p", "endpoints"]], on=keys)
    if not parts.multi.empty and not on_net.empty:
        designs_ = parts.multi[["server", *NETWORK_KEY, "node_usd", "server_usd", "node_w", "endpoint_w",
                                "endpoint_usd", "nics_bought"]]  # fmt: skip
        on_net = on_net.merge(designs_, on=["server", *NETWORK_KEY])
        on_net["extra_usd"] = on_net["node_usd"] - on_net["server_usd"] + on_net["endpoints"] * on_net["endpoint_usd"]
        on_net["node_w"] = on_net["node_w"] + on_net["endpoints"] * on_net["endpoint_w"]
        on_net["extra_nics"] = on_net["nics_bought"]
    else:
        on_net = on_net.iloc[0:0].assign(extra_usd=0.0, node_w=0.0, extra_nics=0)
    alone = offers.merge(pools[~pools["networked"]][[*keys, "p"]], on=keys)
    alone = alone.assign(extra_usd=0.0, node_w=alone["server_w"], extra_nics=0)
    pairs = pd.concat([on_net, alone], ignore_index=True)
    return pairs[["o", "p", "server", "extra_usd", "node_w", "extra_nics"]].sort_values(["o", "p"], ignore_index=True)


def _undominated(supply: pd.DataFrame, offers: pd.DataFrame, stock: pd.DataFrame, tiers: pd.DataFrame):
    """Drop offers no optimal plan buys: o' is dominated by o when they feed the same pools, o has no stock
    cap and no longer lead time, and in every pool a node from o costs no more at o's list price than a
    node from o' at its best tier, and draws no more watts. (Ties keep the first.) Exact: swapping every
    unit of o' for o keeps a plan feasible and costs no more."""
    capped = set(stock["o"])
    best = tiers.groupby("o")["unit_usd"].min()
    node = supply.merge(offers[["o", "price_usd", "lead"]], on="o")
    node["list_usd"] = node["price_usd"] + node["extra_usd"]
    node["best_usd"] = node["o"].map(best).fillna(node["price_usd"]) + node["extra_usd"]
    by_offer = {o: g.set_index("p") for o, g in node.groupby("o")}
    dropped = set()
    for o2, worse in by_offer.items():
        for o1, better in by_offer.items():
            if o1 == o2 or o1 in capped or o1 in dropped or set(worse.index) - set(better.index):
                continue
            b = better.loc[worse.index]
            cheaper = (b["list_usd"] <= worse["best_usd"]).all() and (b["node_w"] <= worse["node_w"]).all()
            tie = (b["list_usd"] == worse["best_usd"]).all() and (b["node_w"] == worse["node_w"]).all()
            if cheaper and b["lead"].max() <= worse["lead"].min() and not (tie and o1 > o2):
                dropped.add(o2)
                break
    return supply[~supply["o"].isin(dropped)].reset_index(drop=True)


# ---------------------------------------------------------------- cloud offerings


def _cloud(catalog: Catalog, fleet: Fleet) -> pd.DataFrame:
    c = fleet.cloud
    columns = ["c", "provider", "instance", "region", "gpu", "gpus", "fabric", "internode_gbps", "multi_node",
               "quota", "usd_per_h", "pricing", "row"]  # fmt: skip
    if not c.allowed:
        return pd.DataFrame(columns=columns)
    records = []
    for row in renting.allowed_offerings(catalog, c):
        rate, pricing = _serving_rate(row, c.pricing, c.spot_share_max)
        if rate is None:
            continue
        multi = renting.multi_node_fabric(row) is not None
        records.append(
            {
                "provider": row.provider,
                "instance": row.instance,
                "region": row.region,
                "gpu": catalog.gpu(row.gpu).name,
                "gpus": row.gpus,
                "fabric": row.fabric if multi else "ib",
                "internode_gbps": row.internode_gbps or 1.0,
                "multi_node": multi,
                "quota": renting.quota(c, row),
                "usd_per_h": rate,
                "pricing": pricing,
                "row": row,
            }
        )
    frame = pd.DataFrame.from_records(records, columns=columns[1:])
    frame.insert(0, "c", np.arange(len(frame)))
    return frame


def _serving_rate(row: CloudRow, pricings: list[str], spot_share: float) -> tuple[float | None, str]:
    """Per-instance hourly rate for capacity held all period: the cheapest allowed pricing, spot only when
    every instance may be on spot."""
    usable = [p for p in pricings if renting.hourly_rate(row, p) is not None and (p != "spot" or spot_share >= 1)]
    if not usable:
        return None, ""
    best = min(usable, key=lambda p: renting.hourly_rate(row, p))
    return renting.hourly_rate(row, best), best


# ---------------------------------------------------------------- workloads


# ---------------------------------------------------------------- training options (performance)


# ---------------------------------------------------------------- columns: contiguous runs


# ---------------------------------------------------------------- serving


# ---------------------------------------------------------------- site


def _site(fleet: Fleet, periods: Periods) -> pd.DataFrame:
    kw = steps(periods, fleet.site.power, "kw", "site.power")
    racks = steps(periods, fleet.site.racks, "racks", "site.racks")
    return pd.DataFrame(
        {
            "t": np.arange(1, periods.count + 1),
            "kw": kw if kw is not None else np.nan,
            "racks": racks if racks is not None else np.nan,
        }
    )


# ---------------------------------------------------------------- the size of the space enumeration would need


def enumeration_log10(data: FleetData) -> float:
    """log10 of the number of plans a brute force would list: each job's runs (option x start, or none)
    times every purchase quantity of every offer into every pool in every period (0 .. the pool's size),
    times every serving split (replicas per service, resource and period, 0 .. what the demand needs)."""
    runs = data.columns.groupby("j").size().to_numpy(float)
    total = float(np.sum(np.log10(runs))) if len(runs) else 0.0
    sizes = data.supply.merge(data.pools[["p", "max_nodes"]], on="p")["max_nodes"].to_numpy(float)
    lead = data.supply.merge(data.offers[["o", "lead"]], on="o")["lead"].to_numpy()
    total += float(np.sum((data.horizon - lead) * np.log10(sizes + 1)))
    if not data.serving.empty:
        need = data.serving.merge(data.demand.groupby("s")["tokens_per_s"].max().rename("peak"), on="s")
        replicas = np.ceil(need["peak"] / need["tokens_per_s"]).to_numpy(float)
        periods = data.demand.groupby("s").size()
        total += float(np.sum(np.log10(replicas + 1) * need["s"].map(periods).to_numpy(float)))
    return total
