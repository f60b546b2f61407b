"""Brute-force enumeration of every candidate at every allowed node count: the reference the MILP and the
priced table are checked against (tests, bench).

On purpose it shares neither the MILP's constraints nor planner.costing: it sizes each fabric with the
closed form (fabric.size) and prices every part from the catalog rows themselves (server, NIC with the
server's included NICs, switch, each optic SKU), so a wrong coefficient anywhere shows up as a disagreement.
"""

from __future__ import annotations

import pandas as pd

from planner import fabric
from planner.candidates import allowed_nodes
from planner.catalog import Catalog
from planner.scenario import Scenario
from planner.units import HOURS_PER_YEAR
from planner.workload import Requirements


def _parts(catalog: Catalog, row: dict) -> dict:
    """Unit prices and watts of the row's parts, looked up in the catalog by SKU."""
    server = catalog.server(row["server"])
    nic = catalog.nic(row["nic"]) if isinstance(row["nic"], str) else None
    switch = catalog.rows["switches"][(row["switch"].lower(),)] if isinstance(row["switch"], str) else None
    optic = lambda sku: catalog.rows["optics"][(sku.lower(),)]  # noqa: E731
    links = {
        unit: (
            sum(optic(s).price_usd * q for s, q in row[f"{unit}_skus"]),
            sum(optic(s).power_w * q for s, q in row[f"{unit}_skus"]),
        )
        for unit in ("endpoint", "port", "uplink")
    }
    return {"server": server, "nic": nic, "switch": switch, "links": links}


def price(catalog: Catalog, row: dict, nodes: int, size: fabric.Switches, scenario: Scenario) -> dict:
    """capex, nameplate power and the objective of a candidate at this size, from catalog rows."""
    parts = _parts(catalog, row)
    server, nic, switch, links = parts["server"], parts["nic"], parts["switch"], parts["links"]
    nics_bought = 0
    if nic is not None:
        included = server.included_nics if (server.included_nic or "").lower() == nic.sku.lower() else 0
        nics_bought = max(0, row["nics_per_node"] - included) * nodes
    endpoints = row["endpoints_per_node"] * nodes
    switches = size.total
    capex = server.price_usd * nodes + (nic.price_usd * nics_bought if nic else 0.0)
    capex += (switch.price_usd * switches if switch else 0.0) + links["endpoint"][0] * endpoints
    capex += links["port"][0] * size.down_ports + links["uplink"][0] * size.uplinks
    servers_w = server.power_w * nodes + (nic.power_w * nics_bought if nic else 0.0)
    network_w = (switch.power_w * switches if switch else 0.0) + links["endpoint"][1] * endpoints
    network_w += links["port"][1] * size.down_ports + links["uplink"][1] * size.uplinks
    o = scenario.objective
    kwh = (o.server_draw_fraction * servers_w + network_w) / 1e3 * HOURS_PER_YEAR * o.years * o.pue
    months = 12 * o.years
    running = kwh * o.usd_per_kwh + (servers_w + network_w) / 1e3 * o.colocation_usd_per_kw_month * months
    running += capex * o.support_share_of_capex_per_year * o.years + o.staff_fte * o.staff_usd_per_fte_year * o.years
    objective = capex + (running if o.kind == "tco" else 0.0)
    return {"capex_usd": capex, "power_w": servers_w + network_w, "objective_usd": objective}


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
            size = fabric.size(
                int(row["endpoints_per_node"]) * nodes,
                int(row["tier"]),
                int(row["switch_ports"]),
                int(row["breakout"]),
                row["oversubscription"],
            )
            if size is None:
                continue
            c = price(catalog, row, nodes, size, scenario)
            if _within(c, scenario) and (found is None or c["objective_usd"] < found[0] - 1e-6):
                found = (c["objective_usd"], k, nodes)
    return found
