"""Brute-force enumeration of every candidate at every allowed node count: the reference the MILP is checked
against (tests, bench). It sizes fabrics with fabric.size (closed form), independent of the MILP's
constraints, and costs them with the same catalog coefficients."""

from __future__ import annotations

import pandas as pd

from planner.scenario import Scenario
from planner.solve import costs, fabric_size, node_counts, within_limits


def best(candidates: pd.DataFrame, scenario: Scenario) -> tuple[float, int, int] | None:
    """(objective USD, candidate index, nodes) of the cheapest feasible configuration, or None."""
    found = None
    for k, row in enumerate(candidates.to_dict("records")):
        for nodes in node_counts(row):
            size = fabric_size(row, nodes)
            if size is None:
                continue
            c = costs(row, nodes, size.down_ports, size.by_tier, size.uplinks, scenario)
            if within_limits(c, scenario) and (found is None or c["objective_usd"] < found[0] - 1e-6):
                found = (c["objective_usd"], k, nodes)
    return found
