"""What each candidate configuration is made of (docs/plan.md section 2), as tables the candidate table
crosses with tiers and micro-batches:

  * NIC configurations: server x NIC x count, the count one the server is built with (servers.csv), each NIC
    at its usable rate = min(line rate, its PCIe slot's effective rate) (planner/hardware/pcie.py);
  * the compute fabric: fabric x switch x tier x oversubscription x topology (rail-optimised or leaf-spine),
    where the leaves sit and so how long the runs are (planner/hardware/layout.py), the cheapest valid link per run
    (planner/catalog/connectors.py), and the switch-to-switch link per reach regime (rows the spine row reaches);
  * the other networks (planner/hardware/networks.py), racks and PDUs, subnet managers;
and for every priced quantity of sizing.PRICED its SKUs per unit and their price and watts from the catalog.
Link and design choices run once per distinct key, never per candidate.
"""

from __future__ import annotations

import bisect
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import TypeVar

import numpy as np
import pandas as pd

from planner.assumptions import facility as F
from planner.assumptions import hardware as H
from planner.base.frames import consolidated
from planner.catalog import connectors
from planner.catalog.load import Catalog
from planner.catalog.rows import ProductRow, ServerRow
from planner.hardware import costing, layout, networks, pcie, sizing
from planner.hardware.fabric import leaf_split, uplinks_for
from planner.hardware.sizing import PRICED, SPARED_LINKS, SPARED_MODELS, SPARES
from planner.hardware.topology import Topology
from planner.inputs.scenario import Scenario

FABRIC_TIERS = (1, 2, 3)
Row = TypeVar("Row", ProductRow, ServerRow)
SKU_COLUMNS = ["endpoint_skus", *(f"{prefix}_skus" for prefix in PRICED.values() if prefix != "port")]


@dataclass(frozen=True)
class Designs:
    configs: pd.DataFrame  # server x NIC x count, with usable Gbps
    multi: pd.DataFrame  # every multi-node design, with its parameters, coefficients and SKUs
    single: pd.DataFrame  # one single-node design per server

    def narrowed(
        self, servers: Iterable[str] | None, fabrics: Iterable[str], switches: Iterable[str] | None
    ) -> Designs:
        """The designs of `servers` (names; None: every one) on `fabrics` with `switches` (None: any) alone: those
        of a scenario constrained to them, but for NIC twins kept because another server builds one in (designs'
        `keep`), which are dominated and never cheaper. A trial of one configuration's hardware needs no more
        (the batch note's: answers/buy.batch_note), and selecting costs far less than designing again."""

        def among(frame: pd.DataFrame, column: str, allowed: Iterable[str] | None) -> pd.Series:
            return frame[column].isin(set(allowed)) if allowed is not None else pd.Series(True, index=frame.index)

        multi, configs = self.multi, self.configs
        if not multi.empty:
            multi = multi[
                among(multi, "server", servers) & among(multi, "fabric", fabrics) & among(multi, "switch", switches)
            ]
        if not configs.empty:
            configs = configs[among(configs, "server", servers)]
        single = self.single[among(self.single, "server", servers)]
        return Designs(*(frame.reset_index(drop=True) for frame in (configs, multi, single)))


def designs(catalog: Catalog, scenario: Scenario, servers: list[ServerRow], keep: Iterable[str] = ()) -> Designs:
    """keep: NIC and switch SKUs designed even when a cheaper twin dominates them (an installed cluster's)."""
    keep = {k.lower() for k in keep}
    ctx = _Context(catalog, scenario, keep)
    server_table = pd.DataFrame.from_records([ctx.server_record(s) for s in servers])
    configs = _configs(catalog, scenario, servers, keep)
    multi = ctx.multi(configs.merge(server_table, on="server")) if not configs.empty else pd.DataFrame()
    single = ctx.single(server_table)
    return Designs(configs, multi, single)


# ---------------------------------------------------------------- NIC configurations


def _configs(
    catalog: Catalog, scenario: Scenario, servers: list[ServerRow], keep: set[str] = frozenset()
) -> pd.DataFrame:
    """Server x NIC x count x ports cabled: fixed NICs (DGX) only as built; otherwise every catalog NIC at
    each of the server's NIC counts, with 1 .. all of its ports cabled (one port of a dual-port card is a real
    design). Usable Gbps per NIC = min(line rate of the cabled ports, the slot's effective PCIe rate)."""
    cap = scenario.constraints.max_nics_per_host
    built_in = {s.included_nic.lower() for s in servers if s.included_nic}  # free in its own server: kept
    buyable = undominated(catalog.items("nics"), keep | built_in, _as_slotted(servers))
    records, classes = [], {}
    for server in servers:
        nics = catalog.port_modes(server.included_nic) if server.nics_fixed else buyable
        counts = server.nic_configurations(cap)
        for nic in nics:
            if nic.sku not in classes:
                classes[nic.sku] = json.dumps(nic.model_dump(exclude=NOT_TECHNICAL | PCIE), sort_keys=True, default=str)
            gen, lanes = pcie.link_gen_lanes(nic.pcie_gen, nic.pcie_lanes, server.slot_gen, server.nic_slot_lanes)
            included = server.included_count(nic)
            cabled = [nic.ports] if server.nics_fixed else range(1, nic.ports + 1)
            for ports, count in ((p, c) for p in cabled for c in counts):
                usable = float(pcie.nic_usable_gbps(ports * nic.port_gbps, gen, lanes))
                extra = max(0, count - included)
                records.append(
                    {
                        "server": server.name,
                        "nic": nic.sku,
                        "nics_per_node": count,
                        "nic_speed_gbps": nic.speed_gbps,
                        "nic_port_gbps": nic.port_gbps,
                        "nic_ports": ports,
                        "nic_ports_total": nic.ports,
                        "nic_usable_gbps": usable,
                        "nic_pcie": f"PCIe Gen{gen} x{lanes}",
                        "node_gbps": usable * count,
                        "nic_fabrics": nic.fabrics,
                        "nics_bought": extra,
                        "nics_usd": extra * nic.price_usd,
                        "nics_w": extra * nic.power_w,
                        "nic_class": classes[nic.sku],
                    }
                )
    # per server an included NIC costs nothing there (nics_usd 0), so it needs no keeping
    return _slot_undominated(pd.DataFrame.from_records(records), keep)


PCIE = {"pcie_gen", "pcie_lanes"}  # a NIC's, read only through its usable rate in a slot (pcie.link_gen_lanes)


def _slot_undominated(configs: pd.DataFrame, keep: set[str]) -> pd.DataFrame:
    """Configurations worth designing: one whose NIC is otherwise identical to another's (every technical field
    but the PCIe generation and lanes, `nic_class`), at the same server, count and ports cabled, and no faster
    in this server's slots, no cheaper and no leaner, one of them strictly, is in no cheapest plan (the usable
    rate is all the PCIe fields decide, and no figure gets worse with it), so it is dropped, unless its NIC is
    in `keep`. A Gen4 re-seller's card dearer than the Gen5 one in a Gen5 server is never designed there."""
    if configs.empty:
        return configs
    dropped = np.zeros(len(configs), dtype=bool)
    group = ["server", "nics_per_node", "nic_ports", "nic_class"]
    for rows in configs.groupby(group, sort=False).indices.values():
        if len(rows) < 2:
            continue
        gbps, usd, watts = (configs[c].to_numpy(float)[rows] for c in ("nic_usable_gbps", "nics_usd", "nics_w"))
        better = (gbps[:, None] >= gbps) & (usd[:, None] <= usd) & (watts[:, None] <= watts)
        strictly = (gbps[:, None] > gbps) | (usd[:, None] < usd) | (watts[:, None] < watts)
        dropped[rows] = (better & strictly).any(axis=0)  # column j: some other row i beats row j
    kept = configs["nic"].str.lower().isin(keep).to_numpy()
    return configs[~dropped | kept].drop(columns="nic_class").reset_index(drop=True)


# a part's price, power and provenance: what two otherwise identical NICs or switches may differ in
NOT_TECHNICAL = {"sku", "name", "part_number", "vendor", "aliases", "price_usd", "power_w", "source", "date",
                 "confidence", "notes"}  # fmt: skip


def _as_slotted(servers: list[ServerRow]):
    """A NIC's PCIe generation and lanes as these servers' slots can use them: a NIC's link runs at the lower
    of its and the slot's (pcie.link_gen_lanes, the only use of them), so in Gen5 slots a Gen6 card and its
    Gen5 twin are the same part."""
    gen = max((s.slot_gen for s in servers), default=0)
    lanes = max((s.nic_slot_lanes for s in servers), default=0)
    # None: the slot decides (link_gen_lanes), as a card of the widest slot's generation and lanes would
    return lambda nic: {"pcie_gen": min(nic.pcie_gen or gen, gen), "pcie_lanes": min(nic.pcie_lanes or lanes, lanes)}


def undominated(parts: list[Row], keep: set[str] = frozenset(), as_used=lambda part: {}) -> list[Row]:
    """The NICs, switches (or servers) worth designing: one that is technically identical to another (every
    field but price, power and provenance) and no cheaper and no lower-power, one of them strictly, can never be
    in a cheapest plan (every cost and power term grows with both: a server's watts fill racks, PDUs and CDUs),
    so it is dropped, unless its lower-cased key (SKU, or a server's name) is in `keep` (a server's included NIC
    costs nothing there; an installed cluster's parts are what they are). A price list with hundreds of
    re-sellers' offers of one part designs it once instead of once per offer. `as_used`: technical fields as
    the design uses them (fields it reads only through a limit, such as a NIC's PCIe generation)."""
    groups: dict[str, list[Row]] = {}
    for part in parts:
        fields = part.model_dump(exclude=NOT_TECHNICAL) | as_used(part)
        key = json.dumps(fields, sort_keys=True, default=str)
        groups.setdefault(key, []).append(part)
    dropped = {
        id(part)
        for group in groups.values()
        for part in group
        if "/".join(part.key()) not in keep
        and any(
            o.price_usd <= part.price_usd and o.power_w <= part.power_w
            and (o.price_usd < part.price_usd or o.power_w < part.power_w)
            for o in group
        )
    }  # fmt: skip
    return [part for part in parts if id(part) not in dropped]


# ---------------------------------------------------------------- the designs


class _Context:
    """The catalog and scenario, with memoised link and design choices."""

    def __init__(self, catalog: Catalog, scenario: Scenario, keep: set[str] = frozenset()):
        self.catalog, self.scenario, self.keep = catalog, scenario, keep
        self.geometry = layout.Geometry.of(scenario.layout)
        self.include = scenario.include
        objective = scenario.objective
        # with a TCO objective a link option's watts cost energy over the horizon; for capex only its price
        self.usd_per_w = costing.usd_per_watt_drawn(objective) if costing.money_kind(objective.kind) == "tco" else 0.0
        self.optics = catalog.items("optics")
        self.book = connectors.LinkBook(self.optics)
        # every reach or orderable length in the catalog: a link valid at run L is valid at the smallest of
        # these >= L and invalid beyond, so link choices are made (and memoised) at those lengths only
        self.limits = sorted({o.reach_m for o in self.optics} | {m for o in self.optics for m, _ in o.lengths})
        self.memo: dict = {}
        infra = catalog.items("infra")
        self.cdus = sorted((r for r in infra if r.kind == "cdu"), key=lambda r: (r.price_usd, r.sku))
        self.rack = min((r for r in infra if r.kind == "rack"), key=lambda r: (r.price_usd, r.sku), default=None)
        self.pdu = min((r for r in infra if r.kind == "pdu"), key=lambda r: (r.price_usd, r.sku), default=None)
        self.ufm = networks.subnet_manager(catalog)
        self.oob = networks.oob_switch(catalog)
        self.block = min((r for r in infra if r.kind == "storage"), key=lambda r: (r.price_usd, r.sku), default=None)
        self.mgmt = min(
            (r for r in infra if r.kind == "management-server"), key=lambda r: (r.price_usd, r.sku), default=None
        )

    # -- per server

    def server_record(self, server: ServerRow) -> dict:
        g, inc = self.geometry, self.include
        storage = networks.storage_nic(self.catalog, server)
        buy_storage = (
            storage is not None and not server.storage_nics_included and (inc.storage_network or inc.inband_network)
        )
        gpu = self.catalog.gpu(server.gpu)
        return {
            "server": server.name,
            "gpu": gpu.name,
            **gpu.perf_columns(),
            **Topology.of(server).columns(),
            "hosts": server.hosts,
            "cooling": server.cooling,
            "status": server.status,
            "liquid_w": server.power_w * server.liquid_share,  # heat the CDUs take, nameplate
            "pue": pue_of(self.scenario.objective, server.liquid_share),
            "host_gbps": pcie.host_link_gb_per_s(server) * 8,  # GPU <-> host for offload (PCIe or NVLink-C2C), raw
            "host_dram_gb_per_s": server.dram_gb_per_s or np.nan,
            "server_usd": server.price_usd,
            "server_w": server.power_w,
            **_rack_columns(server, g),
            "storage_nic": storage.sku if storage else None,
            "storage_bought": server.storage_nics_per_node if buy_storage else 0,
            "storage_usd": server.storage_nics_per_node * storage.price_usd if buy_storage else 0.0,
            "storage_w": server.storage_nics_per_node * storage.power_w if buy_storage else 0.0,
        }

    def _server(self, name: str) -> ServerRow:
        if ("server", name) not in self.memo:
            self.memo[("server", name)] = self.catalog.server(name)
        return self.memo[("server", name)]

    def _row_run(self, npr: int, units: int) -> float:
        """The longest run from a node to its row's network rack (storage and in-band leaves sit there)."""
        key = ("row run", npr, units)
        if key not in self.memo:
            g = self.geometry
            self.memo[key] = layout.longest_node_run_m("middle-of-row", npr, units or None, g.racks_per_row, g)
        return self.memo[key]

    # -- single nodes

    def single(self, servers: pd.DataFrame) -> pd.DataFrame:
        no_nics = dict(
            nic=None, nics_per_node=0, nic_speed_gbps=0.0, nic_port_gbps=0.0, nic_ports=0, nic_ports_total=0,
            nic_usable_gbps=0.0, nic_pcie="", node_gbps=0.0, nics_bought=0, fabric="none", switch=None, tier=0,
            oversubscription=1.0, topology="single node", placement="", links="", cap_lo=1, cap_hi=1, su_local=False,
            planes=1,
        )  # fmt: skip
        # a single node joins no network of ours: no storage NICs bought for it
        no_storage = dict(storage_bought=0, storage_usd=0.0, storage_w=0.0)
        rows = _assign(servers, no_nics | no_storage | _zero_params())
        rows["node_usd"] = rows["server_usd"]
        rows["node_w"] = rows["server_w"]
        return self._cooling(self._racks(rows), one_node=True)

    # -- multi-node designs

    def multi(self, configs: pd.DataFrame) -> pd.DataFrame:
        rows = self._fabric_pairs(configs)
        if rows.empty:
            return rows
        rows = self._tiers_and_topologies(rows)
        rows = self._node_links(rows)
        rows = self._uplink_regimes(rows)
        if rows.empty:
            return rows
        rows = self._su_split(rows)
        rows = self._storage(rows)
        rows = self._inband_oob_ufm(rows)
        rows = self._storage_system(rows)
        # storage NICs are bought only where the storage or in-band network that uses them is sized
        used = (rows["storage_ports_per_node"] > 0) | (rows["inband_ports_per_node"] > 0)
        for column in ("storage_bought", "storage_usd", "storage_w"):
            rows[column] = rows[column].where(used, 0)
        rows["node_usd"] = rows["server_usd"] + rows["nics_usd"] + rows["storage_usd"]
        rows["node_w"] = rows["server_w"] + rows["nics_w"] + rows["storage_w"]
        rows = self._cooling(self._racks(rows))
        return consolidated(rows.reset_index(drop=True))

    def _fabric_pairs(self, configs: pd.DataFrame) -> pd.DataFrame:
        """Each configuration with every (fabric, switch) both its NIC and the switch run."""
        c = self.scenario.constraints
        allowed = {s.lower() for s in c.switches} if c.switches else None
        usable = [
            s
            for s in self.catalog.items("switches")
            if "compute" in s.uses and (allowed is None or s.sku.lower() in allowed)
        ]  # the allowed ones first, then the dominated dropped (a twin the scenario excludes dominates nothing)
        pairs = [
            {"fabric": f, "switch": s.sku, "switch_ports": s.ports, "ports_per_cage": s.ports_per_cage}
            | {"switch_usd": s.price_usd, "switch_w": s.power_w, "switch_units": s.rack_units}
            for s in undominated(usable, self.keep)
            for f in s.fabrics
            if f in c.fabrics
        ]
        if not pairs:
            return pd.DataFrame()
        rows = configs.merge(pd.DataFrame(pairs), how="cross")
        keep = [f in fabrics for f, fabrics in zip(rows["fabric"].tolist(), rows["nic_fabrics"].tolist(), strict=True)]
        return rows[keep].reset_index(drop=True)

    def _tiers_and_topologies(self, rows: pd.DataFrame) -> pd.DataFrame:
        """Tier 1 is one switch; tiers 2 and 3 are rail-optimised and/or leaf-spine, each at every allowed
        oversubscription (o > 1 only exists across leaves). Where the leaves sit follows the layout.
        The rows are multiplied and filtered on the few columns this reads; the rest are taken once at the end
        (the whole table through every concat held several copies of the largest table designs build)."""
        c = self.scenario.constraints
        levels = [(o, t) for o in c.oversubscription for t in FABRIC_TIERS if o == 1 or t > 1]
        wide = rows
        read = ["nics_per_node", "gpus_per_node", "hosts", "nic_ports", "rack_scale", "switch_ports", "ports_per_cage"]
        rows = rows[read].assign(source_row=np.arange(len(rows)))
        rows = rows.merge(pd.DataFrame(levels, columns=["oversubscription", "tier"]), how="cross")
        one_per_gpu = (rows["nics_per_node"] == rows["gpus_per_node"]) & (rows["nics_per_node"] >= 2)
        parts = [rows[rows["tier"] == 1].assign(topology="one switch")]
        multi = rows[rows["tier"] > 1]
        for topology in ("rail", "leaf-spine"):
            if c.topologies is not None:
                want = np.full(len(multi), topology in c.topologies)
            else:  # SuperPOD's default for one NIC per GPU; plain leaf-spine otherwise
                want = (one_per_gpu[multi.index] if topology == "rail" else ~one_per_gpu[multi.index]).to_numpy()
            if topology == "rail":
                want = want & (multi["nics_per_node"] >= 2).to_numpy()
            parts.append(multi[want].assign(topology=topology))
        if c.topologies is not None and "rail-only" in c.topologies:
            parts.append(self._rail_only(rows[(rows["oversubscription"] == 1) & (rows["tier"] <= 2)]))
        rows = self._planes(pd.concat(parts, ignore_index=True))
        names = ("rail", "leaf-spine", "one switch", "rail-only")
        rows["placement"] = rows["topology"].map({t: self._placement(t) for t in names})
        # a rack-scale system's rack has no free units for a leaf: its leaves stand in the row's network rack
        tor = rows["rack_scale"].to_numpy(dtype=bool) & (rows["placement"] == "top-of-rack").to_numpy()
        rows.loc[tor, "placement"] = "middle-of-row"
        down, up = leaf_split(
            rows["switch_ports"].to_numpy(), rows["oversubscription"].to_numpy(), rows["ports_per_cage"].to_numpy()
        )
        rows["leaf_down"], rows["leaf_up"] = down, up
        added = rows.drop(columns=[*read, "source_row"])
        taken = wide.drop(columns=[c for c in added.columns if c in wide]).take(rows["source_row"].to_numpy())
        return pd.concat([taken.reset_index(drop=True), added.reset_index(drop=True)], axis=1)

    @staticmethod
    def _rail_only(rows: pd.DataFrame) -> pd.DataFrame:
        """Rail-only fabrics (fabric.py's docstring): a rail per NIC of a host, each its own plane, of one switch
        (tier 1) or a leaf-spine of its own (tier 2), non-blocking; a node needs two rails or more."""
        rails = rows["nics_per_node"] // rows["hosts"]
        rows = rows[(rails >= 2).to_numpy()]
        return rows.assign(topology="rail-only", planes=(rows["nics_per_node"] // rows["hosts"]).to_numpy())

    def _planes(self, rows: pd.DataFrame) -> pd.DataFrame:
        """Rail-optimised rows at every allowed plane count that splits each NIC's ports evenly (a CX-8 at
        2 x 400GbE: 1 or 2 planes), one plane where none does (a single-port NIC with planes [2] asked); other
        rows one plane (rail-only: its rails)."""
        if "planes" not in rows:
            rows = rows.assign(planes=1)
        rows["planes"] = rows["planes"].fillna(1).astype(np.int64)
        rail = (rows["topology"] == "rail").to_numpy()
        out = [rows[~rail]]
        ports = rows["nic_ports"].to_numpy(np.int64)
        allowed = self.scenario.constraints.planes
        for planes in allowed:
            fits = rail & (ports % planes == 0) & (ports >= planes)
            out.append(rows[fits].assign(planes=planes))
        splits = np.zeros(len(rows), dtype=bool)
        for planes in allowed:
            splits |= (ports % planes == 0) & (ports >= planes)
        if 1 not in allowed:
            out.append(rows[rail & ~splits].assign(planes=1))
        return pd.concat(out, ignore_index=True)

    def _placement(self, topology: str) -> str:
        wanted = self.scenario.layout.leaf_placement
        if topology in ("rail", "rail-only"):  # rail leaves serve many racks: never on top of one
            return "end-of-row" if wanted == "end-of-row" else "middle-of-row"
        if topology == "leaf-spine":
            return "top-of-rack" if wanted == "auto" else wanted
        return "middle-of-row" if wanted in ("auto", "top-of-rack") else wanted

    @staticmethod
    def _one_rack(rows: pd.DataFrame) -> tuple[np.ndarray, dict]:
        """One switch for the whole cluster sits on top of the rack while the nodes fit one rack (node caps
        1..nodes per rack), and in the row's network rack beyond: the rows to take (tier-1 rows twice) and
        their placement and node caps."""
        single = (rows["tier"] == 1).to_numpy()
        npr, placement = rows["nodes_per_rack"].to_numpy(np.int64), rows["placement"].to_numpy(object)
        ones, rest = np.flatnonzero(single), np.flatnonzero(~single)
        take = np.concatenate([ones, ones, rest])
        columns = {
            "placement": pd.array(
                np.concatenate([np.full(len(ones), "top-of-rack", object), placement[ones], placement[rest]]),
                dtype=rows["placement"].dtype,
            ),
            "cap_lo": np.concatenate([np.ones(len(ones), np.int64), npr[ones] + 1, np.ones(len(rest), np.int64)]),
            "cap_hi": np.concatenate([npr[ones], np.full(len(ones) + len(rest), 10**9, np.int64)]),
        }
        return take, columns

    def _node_links(self, rows: pd.DataFrame) -> pd.DataFrame:
        """The cheapest valid NIC-to-leaf link for each row's run; rows no link joins are dropped. The run and
        link are found on the few columns they read; the whole rows are taken once, those joined only."""
        g, override = self.geometry, self.scenario.cabling.node_leaf_reach_m
        take, placed = self._one_rack(rows)
        keys = ["server", "nic", "switch", "fabric", "nodes_per_rack", "server_units"]
        narrow = rows[keys].take(take).reset_index(drop=True).assign(placement=placed["placement"])
        codes, unique = _distinct(narrow, ["placement", "nodes_per_rack", "server_units"])
        runs = [override or layout.longest_node_run_m(p, npr, u or None, g.racks_per_row, g) for p, npr, u in unique]
        narrow["node_run_m"] = np.asarray(runs, dtype=float)[codes]
        codes, unique = _distinct(narrow, ["server", "nic", "switch", "fabric", "node_run_m"])  # a few dozen links
        distinct = [self._link(*k) for k in unique]
        joined = np.array([lk is not None for lk in distinct], dtype=bool)[codes]
        codes = codes[joined]
        rows = rows.drop(columns=["placement"]).take(take[joined]).reset_index(drop=True)
        rows = rows.assign(
            **{k: v[joined] for k, v in placed.items()}, node_run_m=narrow["node_run_m"].to_numpy()[joined]
        )
        rows["link"] = [distinct[c] for c in codes]
        rows["breakout"] = np.array([lk.breakout if lk else 0 for lk in distinct], dtype=np.int64)[codes]
        rows["cage_endpoints"] = np.array([lk.endpoints_per_cage if lk else 0 for lk in distinct], np.int64)[codes]
        rows["endpoints_per_node"] = rows["nics_per_node"] * rows["nic_ports"]
        rows["rail"] = rows["topology"] == "rail"
        # rail i is NIC i of every host (a DGX: 8 rails; an NVL72 tray's 4 NICs: 4 rails of 18 hosts per node);
        # a rail of a plane takes 1/planes of each NIC's ports (the twin-plane B300: one 400G port per node)
        rows["rails"] = np.where(rows["rail"], rows["nics_per_node"] // rows["hosts"], 1)
        rows["rail_endpoints"] = rows["nic_ports"] * rows["hosts"] // np.where(rows["rail"], rows["planes"], 1)
        rows["su_nodes"] = np.maximum(rows["leaf_down"] * rows["breakout"] // rows["rail_endpoints"], 1)
        # a rail leaf's uplinks follow the down-ports a full SU uses (an NVL72 rack's 18 trays use 18 of a
        # QM9700 leaf's 32: 18 uplinks, as the DGX SuperPOD GB200 RA builds it)
        su_down = -(-(rows["su_nodes"] * rows["rail_endpoints"]) // np.maximum(rows["breakout"], 1))
        rows["rail_leaf_up"] = np.minimum(
            uplinks_for(su_down, rows["leaf_down"], rows["leaf_up"], rows["ports_per_cage"]), rows["leaf_up"]
        )
        rows["tor"] = rows["placement"] == "top-of-rack"
        per_rack = rows["nodes_per_rack"] * rows["endpoints_per_node"]
        rows["rack_leaves"] = -(-per_rack // np.maximum(rows["leaf_down"] * rows["breakout"], 1))
        # an InfiniBand fabric of leaves holds a node's slot for its subnet manager (fabric.py's docstring)
        held = (rows["fabric"] == "ib") & (rows["tier"] >= 2) & self.include.subnet_manager_slot
        rows["reserved_nodes"] = held.astype(np.int64)
        # a top-of-rack leaf's uplinks follow the down-ports it uses in a full rack (fabric.uplinks_for)
        rack_down = -(-per_rack // np.maximum(rows["breakout"], 1))
        used = -(-rack_down // np.maximum(rows["rack_leaves"], 1))
        rows["rack_leaf_up"] = np.minimum(
            uplinks_for(used, rows["leaf_down"], rows["leaf_up"], rows["ports_per_cage"]), rows["leaf_up"]
        )
        for unit in ("endpoint", "cage"):  # per distinct link, then spread over its rows
            parts = [_link_parts(lk, unit) for lk in distinct]
            rows[f"{unit}_skus"] = [parts[c][0] for c in codes]
            rows[f"{unit}_usd"] = np.array([p[1] for p in parts], dtype=float)[codes]
            rows[f"{unit}_w"] = np.array([p[2] for p in parts], dtype=float)[codes]
        switches = rows["switch"].tolist()
        switch_skus = {sw: (("switches", sw, 1.0),) for sw in set(switches)}
        rows["switch_skus"] = [switch_skus[sw] for sw in switches]
        return rows

    def _decision_length(self, run_m: float) -> float:
        at = bisect.bisect_left(self.limits, run_m - 1e-9)
        return self.limits[at] if at < len(self.limits) else run_m

    def _link(self, server: str, nic: str, switch: str, fabric: str, run_m: float):
        key = ("node", self._nic_end(server, nic), self._switch_end(switch), fabric, self._decision_length(run_m))
        if key not in self.memo:
            self.memo[key] = connectors.cheapest(self.book.node_links(*key[1:]), self.usd_per_w)
        return self.memo[key]

    def _nic_end(self, server: str, nic: str) -> connectors.End:
        """The NIC port's end (the card's cage, or the server's own: DGX), once per server and NIC."""
        key = ("nic end", server, nic)
        if key not in self.memo:
            self.memo[key] = connectors.nic_end(self.catalog.nic(nic), self._server(server))
        return self.memo[key]

    def _switch_end(self, switch: str) -> connectors.End:
        key = ("switch end", switch)
        if key not in self.memo:
            self.memo[key] = connectors.switch_end(self.catalog.rows["switches"][(switch.lower(),)])
        return self.memo[key]

    def _uplink_regimes(self, rows: pd.DataFrame) -> pd.DataFrame:
        """Tier 2/3 rows, one per reach regime: the cheapest switch-to-switch link valid for every row the
        spine row serves at that size (longer reach, dearer link, for more rows); node caps follow."""
        one = rows[rows["tier"] == 1].assign(uplink=None, uplink_run_m=0.0)
        multi = rows[rows["tier"] > 1]
        codes, keys = _distinct(multi, ["switch", "fabric", "nodes_per_rack"])
        take, regime = [], []  # each group's rows once per regime, group by group (one take, not a frame each)
        for code, key in enumerate(keys):
            members = np.flatnonzero(codes == code)
            for values in self._regimes(*key):
                take.append(members)
                regime += [values] * len(members)
        if one.empty and not take:
            return rows.iloc[0:0]
        spread = multi.iloc[np.concatenate(take)] if take else multi.iloc[0:0]
        lo, hi, links, runs = zip(*regime, strict=True) if regime else ((), (), (), ())
        spread = spread.assign(cap_lo=np.array(lo, np.int64), cap_hi=np.array(hi, np.int64), uplink=list(links))
        spread = spread.assign(uplink_run_m=np.array(runs, dtype=float))
        rows = pd.concat([p for p in (one, spread) if not p.empty], ignore_index=True)
        uplinks = {id(up): up for up in rows["uplink"]}  # a few distinct links among thousands of rows
        values = {k: _link_parts(up, "uplink") for k, up in uplinks.items()}
        for i, column in enumerate(("uplink_skus", "uplink_usd", "uplink_w")):
            rows[column] = [values[id(up)][i] for up in rows["uplink"]]
        texts: dict[tuple[int, int], str] = {}
        for lk, up in zip(rows["link"], rows["uplink"], strict=True):
            if (id(lk), id(up)) not in texts:
                texts[id(lk), id(up)] = lk.text + (f"; uplinks {up.text}" if up is not None else "")
        rows["links"] = [texts[id(lk), id(up)] for lk, up in zip(rows["link"], rows["uplink"], strict=True)]
        return rows

    def _regimes(self, switch: str, fabric: str, npr: int) -> list[tuple[int, int, object, float]]:
        """(lowest nodes, highest nodes, link, longest run) per regime, up to max_nodes."""
        key = ("regimes", switch, fabric, npr)
        if key in self.memo:
            return self.memo[key]
        g, override = self.geometry, self.scenario.cabling.switch_reach_m
        sw = self._switch_end(switch)
        if override:
            link = self._switch_link(sw, fabric, override)
            self.memo[key] = [(1, 10**9, link, override)] if link is not None else []
            return self.memo[key]
        per_row, rpr = g.racks_per_row * npr, g.racks_per_row
        rows_needed = layout.rows_of(layout.rows_of(self.scenario.constraints.max_nodes, npr), rpr)
        regimes, first = [], 1  # rows of the floor: the longest run never falls as rows are added
        while first <= rows_needed:
            link = self._switch_link(sw, fabric, layout.longest_uplink_run_m(first, rpr, g))
            if link is None:
                break
            last = first  # the most rows this link still reaches
            while last < rows_needed:
                nxt = self._switch_link(sw, fabric, layout.longest_uplink_run_m(last + 1, rpr, g))
                if nxt is None or nxt.text != link.text:
                    break
                last += 1
            run_m = layout.longest_uplink_run_m(last, rpr, g)
            regimes.append(((first - 1) * per_row + 1, last * per_row, link, run_m))
            first = last + 1
        self.memo[key] = regimes
        return regimes

    def _switch_link(self, switch: connectors.End, fabric: str, run: float):
        run = self._decision_length(run)
        key = ("switch link", switch, fabric, run)
        if key not in self.memo:
            links = self.book.switch_links(switch, fabric, run)
            self.memo[key] = connectors.cheapest(links, self.usd_per_w, "uplink")
        return self.memo[key]

    def _su_split(self, rows: pd.DataFrame) -> pd.DataFrame:
        """A rail-optimised fabric keeps each rail's traffic on its leaf within one scalable unit, so up to
        SU nodes the leaves' oversubscription does not slow the job: such rows split into within-one-SU (full
        node bandwidth) and beyond (bandwidth / o)."""
        split = rows["rail"] & (rows["oversubscription"] > 1)
        within = rows[split].assign(
            cap_hi=np.minimum(rows.loc[split, "cap_hi"], rows.loc[split, "su_nodes"]), su_local=True
        )
        beyond = rows[split].assign(
            cap_lo=np.maximum(rows.loc[split, "cap_lo"], rows.loc[split, "su_nodes"] + 1), su_local=False
        )
        rows = pd.concat([rows[~split].assign(su_local=False), within, beyond], ignore_index=True)
        return rows[rows["cap_lo"] <= rows["cap_hi"]].reset_index(drop=True)

    # -- storage, in-band, out-of-band, subnet managers

    def _storage(self, rows: pd.DataFrame) -> pd.DataFrame:
        g = self.geometry
        columns = ["server", "fabric", "switch", "nodes_per_rack", "server_units", "uplink_run_m"]
        codes, unique = _distinct(rows, columns)  # designed once per distinct key
        out = []
        for server, fabric, switch, npr, units, uplink_run_m in unique:
            run = layout.longest_node_run_m("middle-of-row", npr, units or None, g.racks_per_row, g)
            uplink_run = uplink_run_m or layout.spine_room_run_m(g.racks_per_row, g)
            out.append(self._storage_design(server, fabric, switch, run, uplink_run))
        params = pd.DataFrame.from_records(out).iloc[codes].set_axis(rows.index)
        return pd.concat([rows, params], axis=1)

    def _storage_design(self, server: str, fabric: str, switch: str, run: float, uplink_run: float) -> dict:
        key = ("storage", server, fabric, switch, run, uplink_run)
        if key in self.memo:
            return self.memo[key]
        empty = _storage_zero()
        if not self.include.storage_network:
            result = empty | {
                "storage_note": "storage network excluded by the scenario (include.storage_network: false)"
            }
        else:
            compute = self.catalog.rows["switches"][(switch.lower(),)]
            design = networks.storage_design(
                self.book, self.catalog, self._server(server), fabric, compute, run, uplink_run, self.usd_per_w
            )
            result = empty | {"storage_note": design} if isinstance(design, str) else _storage_params(design)
        self.memo[key] = result
        return result

    def _inband_oob_ufm(self, rows: pd.DataFrame) -> pd.DataFrame:
        codes, unique = _distinct(rows, ["server", "nodes_per_rack", "server_units"])  # designed once per key
        inband = [self._inband(server, self._row_run(npr, units)) for server, npr, units in unique]
        inband = pd.DataFrame.from_records(inband).iloc[codes].set_axis(rows.index)
        rows = pd.concat([rows, inband], axis=1)
        oob = self.oob if self.include.oob_network else None
        rows["oob_ports_per_switch"] = oob.ports if oob else 0
        rows["oob_switch_usd"], rows["oob_switch_w"] = (oob.price_usd, oob.power_w) if oob else (0.0, 0.0)
        rows["oob_switch_skus"] = [(("switches", oob.sku, 1.0),) if oob else ()] * len(rows)
        rows["oob_note"] = (
            ""
            if oob
            else "out-of-band network excluded by the scenario (include.oob_network: false)"
            if not self.include.oob_network
            else "no out-of-band switch (uses oob) in the catalog"
        )
        codes, unique = _distinct(rows, ["fabric", "switch", "storage_switch"])
        counts, notes = zip(*(self._ufm_count(*k) for k in unique), strict=True)
        rows["ufm_count"], rows["ufm_note"] = np.array(counts, dtype=np.int64)[codes], np.array(notes, object)[codes]
        u = self.ufm
        rows["ufm_usd"], rows["ufm_w"] = (u.price_usd, u.power_w) if u else (0.0, 0.0)
        rows["ufm_units"] = (u.rack_units or 1) if u else 0
        rows["ufm_skus"] = [(("infra", u.sku, 1.0),) if u else ()] * len(rows)
        rows["row_network_rack"] = (
            ~rows["tor"] | (rows["storage_ports_per_node"] > 0) | (rows["inband_ports_per_node"] > 0)
        )
        return rows

    def _inband(self, server: str, run: float) -> dict:
        key = ("inband", server, run)
        if key in self.memo:
            return self.memo[key]
        zero = {"inband_ports_per_node": 0, "inband_down": 1, "inband_switch_units": 0, "inband_switch_w": 0.0}
        zero |= {"inband_port_usd": 0.0, "inband_port_w": 0.0, "inband_switch_usd": 0.0, "inband_port_skus": ()}
        zero |= {"inband_switch_skus": (), "inband_switch": None, "inband_link": None}
        if not self.include.inband_network:
            result = zero | {
                "inband_note": "in-band management network excluded by the scenario (include.inband_network: false)"
            }
        else:
            design = networks.inband_design(self.book, self.catalog, self._server(server), run, self.usd_per_w)
            if isinstance(design, str):
                result = zero | {"inband_note": design}
            else:
                link, sw = design.link, design.switch
                per = 1.0 / link.endpoints_per_cage
                skus = tuple(("optics", s, q) for s, q in link.skus("endpoint")) + tuple(
                    ("optics", s, q * per) for s, q in link.skus("cage")
                )
                result = {
                    "inband_ports_per_node": design.ports_per_node,
                    "inband_down": design.down,
                    "inband_switch_units": sw.rack_units,
                    "inband_switch_w": sw.power_w,
                    "inband_port_usd": link.per_endpoint_usd(),
                    "inband_port_w": link.watts("endpoint") + link.watts("cage") * per,
                    "inband_switch_usd": sw.price_usd,
                    "inband_port_skus": skus,
                    "inband_switch_skus": (("switches", sw.sku, 1.0),),
                    "inband_switch": sw.sku,
                    "inband_link": link,
                    "inband_note": "",
                }
        self.memo[key] = result
        return result

    def _ufm_count(self, fabric: str, switch: str, storage_switch: str | None) -> tuple[int, str]:
        """A UFM high-availability pair per InfiniBand fabric (compute; storage) of unmanaged switches."""
        compute = self.catalog.rows["switches"][(switch.lower(),)]
        fabrics = [networks.needs_subnet_manager(fabric, compute)]
        if isinstance(storage_switch, str):
            storage = self.catalog.rows["switches"][(storage_switch.lower(),)]
            fabrics.append(networks.needs_subnet_manager(storage.fabric, storage))
        needed = sum(fabrics) * int(H.UFM_PER_FABRIC.value)
        if not needed:
            return 0, ""
        if not self.include.subnet_manager:
            return (
                0,
                "subnet manager (UFM) for the unmanaged InfiniBand switches excluded by the scenario "
                "(include.subnet_manager: false)",
            )
        if self.ufm is None:
            return (
                0,
                "the InfiniBand switches are unmanaged but the catalog has no subnet-manager appliance (infra.csv)",
            )
        return needed, ""

    # -- the storage system and the management servers

    def _storage_system(self, rows: pd.DataFrame) -> pd.DataFrame:
        """The file system's building block and the management server (infra.csv), the rates and the capacity
        the storage is sized for (sizing.storage_blocks), as constant columns."""
        block, mgmt, inc, sc = self.block, self.mgmt, self.include, self.scenario
        columns: dict = {}
        if block is not None and inc.storage_system:
            columns |= {"storage_block_tb": block.usable_tb, "storage_block_read": block.read_gb_per_s}
            columns |= {"storage_block_write": block.write_gb_per_s, "storage_block_usd": block.price_usd}
            columns |= {"storage_block_w": block.power_w, "storage_block_units": block.rack_units or 1}
            columns |= {"storage_block_skus": (("infra", block.sku, 1.0),), "storage_system_note": ""}
        else:
            columns |= NO_STORAGE_BLOCK | {"storage_block_usd": 0.0, "storage_block_w": 0.0, "storage_block_skus": ()}
            columns["storage_system_note"] = _storage_system_note(inc, block)
        columns["storage_read_per_gpu"] = sc.storage.read_gb_per_s_per_gpu if columns["storage_block_skus"] else 0.0
        columns["storage_write_per_node"] = (  # every host writes its shard (an NVL72 rack: 18 trays)
            sc.reliability.checkpoint_write_gb_per_s_per_node * rows["hosts"].to_numpy(float)
            if columns["storage_block_skus"]
            else 0.0
        )
        columns["storage_tb"] = self._storage_tb() if columns["storage_block_skus"] else 0.0
        if mgmt is not None and inc.management_servers:
            columns |= {"mgmt_server_usd": mgmt.price_usd, "mgmt_server_w": mgmt.power_w}
            columns |= {"mgmt_server_units": mgmt.rack_units or 1, "mgmt_server_skus": (("infra", mgmt.sku, 1.0),)}
            columns |= {"mgmt_servers_base": int(H.MANAGEMENT_SERVERS.value), "mgmt_note": ""}
        else:
            columns |= dict(mgmt_server_usd=0.0, mgmt_server_w=0.0, mgmt_server_units=0, mgmt_server_skus=())
            columns |= {"mgmt_servers_base": 0, "mgmt_note": _mgmt_note(inc, mgmt)}
        return _assign(rows, columns)

    def _storage_tb(self) -> float:
        """Capacity the file system holds: the checkpoints kept and the tokenised training data (TB)."""
        w, sc = self.scenario.workload, self.scenario
        params = w.params if w.params is not None else self.catalog.model(w.model).params
        checkpoint = params * sc.reliability.checkpoint_bytes_per_param
        data = (sc.requirement.tokens or 0.0) * sc.storage.dataset_bytes_per_token
        return (sc.storage.checkpoints_kept * checkpoint + data) / 1e12

    # -- spares

    def _spare_columns(self, rows: pd.DataFrame) -> dict:
        """The scenario's spares rule and, per row, the links that make whole parts of each link kind (a
        twin-port module serves 2) and which switch models it spares (sizing.spares)."""
        spare, rel = self.scenario.spares, self.scenario.reliability
        nics = rows["nics_per_node"].fillna(0).to_numpy(float)
        failures = sizing.node_failures_per_day(rel.failure_rates, rows["gpus_per_node"], rows["hosts"], nics)
        columns = sizing.repair_params(spare, rel, failures, rows["rack_scale"].to_numpy(dtype=bool))
        columns["spare_link_share"] = spare.link_share
        columns["spare_switches_per_model"] = spare.switches_per_model
        for name in SPARED_LINKS:
            prefix = SPARES[name]
            skus = rows[f"{prefix}_skus"] if f"{prefix}_skus" in rows else [()] * len(rows)
            units = {parts: _whole_parts(parts) for parts in set(skus)}
            columns[f"{prefix}_spare_unit"] = np.array([units[parts] for parts in skus], dtype=np.int64)
        return columns | _spare_models(rows)

    def _installation_columns(self, rows: pd.DataFrame) -> dict:
        """Technician-hours per node (a server, or a rack-scale system's racks) and the sourced hourly rate
        (sizing.install_hours); zeros where the scenario leaves installation out."""
        per_node = np.where(
            rows["rack_scale"].to_numpy(dtype=bool),
            F.INSTALL_HOURS["rack_scale"].value * np.maximum(rows["rack_span"].to_numpy(np.int64), 1),
            F.INSTALL_HOURS["server"].value,
        )
        on = self.include.installation
        columns = {"install_per_node": per_node if on else np.zeros(len(rows)), "install_skus": ()}
        return columns | {"install_usd": F.INSTALL_USD_PER_HOUR.value if on else 0.0, "install_w": 0.0}

    # -- racks and PDUs

    def _racks(self, rows: pd.DataFrame) -> pd.DataFrame:
        """Racks and PDUs (their prices per compute and network rack), the spares rule and the installation
        hours: every column set in one frame."""
        g = self.geometry
        rack, pdu = self.rack, self.pdu
        on = self.include.racks and rack is not None and pdu is not None
        columns = self._spare_columns(rows) | self._installation_columns(rows)
        columns |= {"usable_units": g.usable_units, "rack_w": g.rack_kw * 1e3, "racks_per_row": g.racks_per_row}
        columns["count_pdus"] = on
        load = (rows["nodes_per_rack"] * rows["node_w"]).to_numpy()
        pdus = {w: layout.pdus_per_rack(w, pdu.capacity_kw) for w in set(load)} if on else {}  # few distinct
        # a rack-scale system is its own rack, with its power shelves: no enclosure or PDU is bought for it
        own = rows["rack_scale"].to_numpy(dtype=bool)
        columns["pdus_compute"] = np.where(own, 0, [pdus.get(w, 0) for w in load])
        columns["pdus_network"] = layout.pdus_per_rack(g.rack_kw * 1e3, pdu.capacity_kw) if on else 0
        for kind in ("compute_rack", "network_rack"):
            count = columns[f"pdus_{kind.removesuffix('_rack')}"]
            bought = np.ones(len(rows), dtype=bool) if kind == "network_rack" else ~own
            columns[f"{kind}_usd"] = np.where(bought, (rack.price_usd + count * pdu.price_usd) if on else 0.0, 0.0)
            columns[f"{kind}_w"] = 0.0
            counts = np.broadcast_to(count, len(rows)).tolist()
            skus = {c: (("infra", rack.sku, 1.0), ("infra", pdu.sku, float(c))) if on else () for c in set(counts)}
            columns[f"{kind}_skus"] = [skus[c] if b else () for c, b in zip(counts, bought, strict=True)]
        columns["racks_note"] = (
            ""
            if on
            else "racks and PDUs excluded by the scenario (include.racks: false)"
            if not self.include.racks
            else "no rack or PDU row in the catalog (infra.csv)"
        )
        return _assign(rows, columns)

    # -- cooling

    def _cooling(self, rows: pd.DataFrame, one_node: bool = False) -> pd.DataFrame:
        """Liquid and hybrid cooled nodes get N+1 coolant distribution units of one model, sized on their
        liquid heat; each CDU model in the catalog is a design of its own (the small one wins small plans). A
        single node (one row per server) takes the model that cools it for least."""
        rows = _assign(rows, {"cdu": None, "cdu_kw": 0.0, "cdu_usd": 0.0, "cdu_w": 0.0, "cdu_skus": ()})
        liquid = rows["liquid_w"].to_numpy(float) > 0
        if not self.include.cooling or not self.cdus:
            missing = (
                "excluded by the scenario (include.cooling: false)"
                if not self.include.cooling
                else ("not priced: the catalog has no CDU row (infra.csv, kind cdu)")
            )
            rows["cooling_note"] = np.where(liquid, f"coolant distribution units (CDUs) {missing}", "")
            return rows
        rows["cooling_note"] = ""
        if not liquid.any():
            return rows
        options = pd.DataFrame(
            [
                {"cdu": c.sku, "cdu_kw": c.capacity_kw, "cdu_usd": c.price_usd, "cdu_w": c.power_w,
                 "cdu_skus": (("infra", c.sku, 1.0),)}
                for c in self.cdus
            ]
        )  # fmt: skip
        wet = rows[liquid].drop(columns=list(options.columns)).merge(options, how="cross")
        if one_node:
            units = sizing.cdus({"liquid_w": wet["liquid_w"], "cdu_kw": wet["cdu_kw"]}, 1)
            wet = wet.assign(_usd=units * wet["cdu_usd"]).sort_values(["_usd", "cdu"], kind="stable")
            wet = wet.drop_duplicates("server").drop(columns="_usd")
        return pd.concat([rows[~liquid], wet], ignore_index=True)


def pue_of(objective, liquid_share: float) -> float:
    """The PUE of a node's power: its liquid-cooled share at objective.pue_liquid, the rest at objective.pue."""
    return objective.pue + liquid_share * (objective.pue_liquid - objective.pue)


def _rack_columns(server: ServerRow, g: layout.Geometry) -> dict:
    """Where a node stands: a server is mounted in the layout's racks (as many as their power and space
    allow: air-cooled or liquid-cooled racks by its cooling); a rack-scale system is its own rack(s)
    (rack_span of them per node), which must fit the layout's rack power, with its ports at the height of its
    lowest host tray (rack height / hosts)."""
    liquid = server.cooling != "air"
    if server.rack_scale:
        tray_units = max(1, (server.rack_units or g.rack_units) // server.hosts)
        fits = server.power_w / server.racks <= layout.rack_w(g, liquid) + 1e-6
        return {"server_units": tray_units, "nodes_per_rack": 1, "rack_span": server.racks, "rack_fits": fits,
                "rack_scale": True}  # fmt: skip
    npr = layout.nodes_per_rack(server.power_w, server.rack_units, g, liquid)
    return {"server_units": server.rack_units or 0, "nodes_per_rack": max(npr, 1), "rack_span": 1,
            "rack_fits": npr >= 1, "rack_scale": False}  # fmt: skip


# a design without a storage block: unit divisors (the sizing divides by them) and no rack units
NO_STORAGE_BLOCK = dict(storage_block_tb=1.0, storage_block_read=1.0, storage_block_write=1.0, storage_block_units=0)


def _storage_system_note(include, block) -> str:
    if not include.storage_system:
        return "the storage system excluded by the scenario (include.storage_system: false)"
    return "the storage system (no storage row in the catalog: infra.csv kind storage)" if block is None else ""


def _mgmt_note(include, mgmt) -> str:
    if not include.management_servers:
        return "management servers excluded by the scenario (include.management_servers: false)"
    return "management servers (no management-server row in the catalog: infra.csv)" if mgmt is None else ""


def _spare_models(rows: pd.DataFrame) -> dict[str, np.ndarray]:
    """`<prefix>_spare_model`: 1 where that network's switch model is not one an earlier network (compute,
    storage, in-band, out-of-band) already spares (a storage fabric of the compute switch: one spare model)."""
    prefixes = [SPARES[name] for name in SPARED_MODELS]
    present = [f"{prefix}_skus" for prefix in prefixes if f"{prefix}_skus" in rows]
    # once per distinct combination of the networks' parts (a few hundred), not per design (up to millions)
    codes, combos = _distinct(rows, present) if present else (np.zeros(len(rows), np.int64), [()])
    flags = np.zeros((len(combos), len(prefixes)), dtype=np.int64)
    for c, combo in enumerate(combos):
        by_column, models = dict(zip(present, combo, strict=True)), set()
        for j, prefix in enumerate(prefixes):
            skus = by_column.get(f"{prefix}_skus", ())
            sku = next((key for kind, key, _ in skus if kind == "switches"), None)
            flags[c, j] = sku is not None and sku not in models
            models.add(sku)
    return {f"{prefix}_spare_model": flags[codes, j] for j, prefix in enumerate(prefixes)}


def _whole_parts(skus: tuple) -> int:
    """The fewest links whose parts are all whole (0.5 of a twin-port module per link: 2)."""
    unit = 1
    for _, _, per_unit in skus:
        unit = math.lcm(unit, Fraction(per_unit).limit_denominator(64).denominator)
    return unit


def _link_parts(link: connectors.Link | None, unit: str) -> tuple[tuple, float, float]:
    """A link's parts of one unit (endpoint, cage or uplink) as SKU lines, USD and watts; nothing without one."""
    if link is None:
        return (), 0.0, 0.0
    return tuple(("optics", s, q) for s, q in link.skus(unit)), link.usd(unit), link.watts(unit)


def _distinct(rows: pd.DataFrame, columns: list[str]) -> tuple[np.ndarray, list[tuple]]:
    """Each row's code and the distinct value tuples of `columns`, in order of first appearance (what
    pd.factorize of a MultiIndex gives, without building one), column by column: each column's codes folded
    into the running ones and renumbered, so the key never outgrows the row count. A missing value (None or
    NaN) is one value."""
    values = [rows[column].to_numpy() for column in columns]
    codes = np.zeros(len(rows), dtype=np.int64)
    for column in values:
        own, uniques = pd.factorize(column, sort=False)
        codes, _ = pd.factorize(codes * (len(uniques) + 1) + (own + 1), sort=False)
    codes = codes.astype(np.int64, copy=False)
    first = np.unique(codes, return_index=True)[1]  # codes number first appearances 0, 1, ...
    picked = [column[first].tolist() for column in values]
    return codes, list(zip(*picked, strict=True)) if columns else [()] * len(first)


def _zero_params() -> dict:
    """A single node's network parameters: no fabric, no other networks."""
    zeros = dict(
        switch_ports=0, ports_per_cage=1, breakout=1, cage_endpoints=1, endpoints_per_node=0, rail=False, rails=1,
        rail_endpoints=1, su_nodes=1, tor=False, rack_leaves=1, rack_leaf_up=0, rail_leaf_up=0, reserved_nodes=0,
        switch_units=0, switch_w=0.0, switch_usd=0.0,
        leaf_down=0, leaf_up=0, node_run_m=0.0, uplink_run_m=0.0, inband_ports_per_node=0, inband_down=1,
        inband_switch_units=0, inband_switch_w=0.0, ufm_count=0, ufm_units=0, ufm_w=0.0, row_network_rack=False,
        oob_ports_per_switch=0,
    )  # fmt: skip
    zeros |= _storage_zero() | {column: () for column in SKU_COLUMNS}
    for prefix in ("endpoint", *PRICED.values()):
        if prefix not in ("compute_rack", "network_rack", "cdu"):
            zeros |= {f"{prefix}_usd": 0.0, f"{prefix}_w": 0.0}
    zeros |= NO_STORAGE_BLOCK | dict(
        storage_read_per_gpu=0.0, storage_write_per_node=0.0, storage_tb=0.0, mgmt_server_units=0
    )
    zeros |= dict(mgmt_servers_base=0)
    notes = dict(storage_note="", inband_note="", oob_note="", ufm_note="", storage_system_note="", mgmt_note="")
    return zeros | notes | dict(inband_switch=None, uplink=None, link=None, inband_link=None)


def _assign(rows: pd.DataFrame, values: dict) -> pd.DataFrame:
    """Set columns, all in one frame (one insert each would copy the frame's blocks each time): an array or a
    list is a column as it is, any other value a constant (tuple values, SKU lists, repeated per row)."""
    columns = {name: v if isinstance(v, np.ndarray | list) else [v] * len(rows) for name, v in values.items()}
    block = pd.DataFrame(columns, index=rows.index)
    return pd.concat([rows.drop(columns=[c for c in values if c in rows.columns]), block], axis=1)


def _storage_zero() -> dict:
    zero = dict(
        storage_ports_per_node=0, storage_down=1, storage_up=0, storage_switch_ports=1, storage_cage_endpoints=1,
        storage_switch_units=0, storage_switch_w=0.0, storage_switch_usd=0.0, storage_port_usd=0.0,
        storage_port_w=0.0, storage_cage_usd=0.0, storage_cage_w=0.0, storage_uplink_usd=0.0, storage_uplink_w=0.0,
        storage_port_skus=(), storage_cage_skus=(), storage_switch_skus=(), storage_uplink_skus=(),
        storage_switch=None, storage_link=None, storage_uplink=None, storage_note="",
    )  # fmt: skip
    return zero


def _storage_params(design: networks.StorageDesign) -> dict:
    down, up = design.split
    link, uplink, sw = design.link, design.uplink, design.switch
    return {
        "storage_ports_per_node": design.ports_per_node,
        "storage_down": down,
        "storage_up": up if uplink is not None else 0,
        "storage_switch_ports": sw.ports,
        "storage_cage_endpoints": link.endpoints_per_cage,
        "storage_switch_units": sw.rack_units,
        "storage_switch_w": sw.power_w,
        "storage_switch_usd": sw.price_usd,
        "storage_port_usd": link.usd("endpoint"),
        "storage_port_w": link.watts("endpoint"),
        "storage_cage_usd": link.usd("cage"),
        "storage_cage_w": link.watts("cage"),
        "storage_uplink_usd": uplink.usd("uplink") if uplink else 0.0,
        "storage_uplink_w": uplink.watts("uplink") if uplink else 0.0,
        "storage_port_skus": tuple(("optics", s, q) for s, q in link.skus("endpoint")),
        "storage_cage_skus": tuple(("optics", s, q) for s, q in link.skus("cage")),
        "storage_switch_skus": (("switches", sw.sku, 1.0),),
        "storage_uplink_skus": tuple(("optics", s, q) for s, q in uplink.skus("uplink")) if uplink else (),
        "storage_switch": sw.sku,
        "storage_link": link,
        "storage_uplink": uplink,
        "storage_note": ""
        if uplink
        else f"no switch-to-switch link for the storage {sw.sku}s: one storage leaf at most",
    }


def note_columns() -> list[str]:
    return ["storage_note", "inband_note", "oob_note", "ufm_note", "racks_note", "cooling_note",
            "storage_system_note", "mgmt_note"]  # fmt: skip
