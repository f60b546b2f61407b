"""Brute-force enumeration of every candidate at every allowed node count: the reference the MILP and the
priced table are checked against (tests, bench).

On purpose it shares neither the MILP's constraints nor planner.hardware.costing: it sizes each configuration with the
closed form (planner/hardware/sizing.py) and prices every part from the catalog rows themselves (the server, its
compute and storage NICs less the ones its price includes, and each SKU of every quantity: switches, optics,
cables, racks, PDUs, appliances), so a wrong coefficient anywhere shows up as a disagreement.
"""

from __future__ import annotations

import pandas as pd

from planner.base.units import HOURS_PER_YEAR
from planner.catalog.load import Catalog
from planner.hardware.sizing import PRICED
from planner.inputs.scenario import Scenario
from planner.model.workload import Requirements
from planner.tables.buy import allowed_nodes, quantities_at


def _row_of(catalog: Catalog, kind: str, key: str):
    return catalog.rows[kind][(key.lower(),)]


def _node_parts(catalog: Catalog, row: dict) -> tuple[float, float]:
    """(USD, W) of one node: the server, the compute NICs it does not include, the storage NICs it buys."""
    server = catalog.server(row["server"])
    usd, watts = server.price_usd, server.power_w
    if isinstance(row["nic"], str):
        nic = catalog.nic(row["nic"])
        included = server.included_nics if (server.included_nic or "").lower() == nic.sku.lower() else 0
        extra = max(0, int(row["nics_per_node"]) - included)
        usd, watts = usd + extra * nic.price_usd, watts + extra * nic.power_w
    if row["storage_bought"]:
        nic = catalog.nic(server.storage_nic)
        usd, watts = usd + row["storage_bought"] * nic.price_usd, watts + row["storage_bought"] * nic.power_w
    return usd, watts


def _per_unit(catalog: Catalog, skus) -> tuple[float, float]:
    usd = watts = 0.0
    for kind, key, qty in skus:
        part = _row_of(catalog, kind, key)
        usd, watts = usd + part.price_usd * qty, watts + part.power_w * qty
    return usd, watts


def price(catalog: Catalog, row: dict, nodes: int, scenario: Scenario) -> dict:
    """capex, nameplate power and the objective of a candidate at this size, from catalog rows."""
    q = quantities_at(row, nodes)
    node_usd, node_w = _node_parts(catalog, row)
    capex, servers_w = node_usd * nodes, node_w * nodes
    units = {"endpoint": q["endpoints"]} | {prefix: q[name] for name, prefix in PRICED.items() if prefix != "port"}
    network_w = 0.0
    for prefix, count in units.items():
        usd, watts = _per_unit(catalog, row[f"{prefix}_skus"])
        capex, network_w = capex + usd * count, network_w + watts * count
    o = scenario.objective
    kwh = (o.server_draw_fraction * servers_w + network_w) / 1e3 * HOURS_PER_YEAR * o.years * o.pue
    months = 12 * o.years
    running = kwh * o.usd_per_kwh + (servers_w + network_w) / 1e3 * o.colocation_usd_per_kw_month * months
    running += capex * o.support_share_of_capex_per_year * o.years + o.staff_fte * o.staff_usd_per_fte_year * o.years
    objective = capex + (running if o.kind == "tco" else 0.0)
    return {"capex_usd": capex, "power_w": servers_w + network_w, "objective_usd": objective, "fits": q["fits"]}


def _within(c: dict, scenario: Scenario) -> bool:
    budget, power = scenario.constraints.budget_usd, scenario.constraints.power_kw
    return (budget is None or c["capex_usd"] <= budget + 1e-6) and (power is None or c["power_w"] <= power * 1e3 + 1e-6)


def best(catalog: Catalog, candidates: pd.DataFrame, scenario: Scenario) -> tuple[float, int, int] | None:
    """(objective USD, candidate index, nodes) of the cheapest feasible configuration, or None."""
    req = Requirements.of(scenario)
    found = None
    for k, row in enumerate(candidates.to_dict("records")):
        counts = allowed_nodes(row, req) or range(int(row["n_lo"]), int(row["n_hi"]) + 1)
        for nodes in counts:
            c = price(catalog, row, nodes, scenario)
            if c["fits"] and _within(c, scenario) and (found is None or c["objective_usd"] < found[0] - 1e-6):
                found = (c["objective_usd"], k, nodes)
    return found
