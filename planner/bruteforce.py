"""Brute-force enumeration of every candidate at every allowed node count: the reference the MILP is checked
against (tests, bench). It sizes fabrics with fabric.size (closed form), independent of the MILP's
constraints, and costs them with the same catalog coefficients."""

from __future__ import annotations

import pandas as pd

from planner import fabric
from planner.scenario import Scenario
from planner.solve import costs, node_counts


def best(candidates: pd.DataFrame, scenario: Scenario) -> tuple[float, int, int] | None:
    """(objective USD, candidate index, nodes) of the cheapest feasible configuration, or None."""
    found = None
    budget, power = scenario.constraints.budget_usd, scenario.constraints.power_kw
    for k, row in enumerate(candidates.to_dict("records")):
        for nodes in node_counts(row):
            if row["tier"] == 0:
                size = fabric.Switches(0, {}, 0)
            else:
                size = fabric.size(
                    row["endpoints_per_node"] * nodes,
                    row["tier"],
                    row["switch_ports"],
                    row["breakout"],
                    row["oversubscription"],
                )
                if size is None:
                    continue
            c = costs(row, nodes, size.down_ports, size.by_tier, size.uplinks, scenario)
            if budget is not None and c["capex_usd"] > budget + 1e-6:
                continue
            if power is not None and c["power_w"] > power * 1e3 + 1e-6:
                continue
            if found is None or c["objective_usd"] < found[0] - 1e-6:
                found = (c["objective_usd"], k, nodes)
    return found
