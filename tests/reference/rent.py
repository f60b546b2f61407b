"""The rent question by enumeration: the reference the rental MILP is checked against."""

from __future__ import annotations

import math

from planner.inputs.scenario import Scenario
from planner.optimize.rent import cheapest_split
from planner.tables.rent import RentOption


def brute_force(options: list[RentOption], scenario: Scenario) -> tuple[float, int, int] | None:
    """(cost, option index, count) by enumeration: the reference for the MILP."""
    found = None
    for i, o in enumerate(options):
        for n in o.counts:
            for v in o.variants[n]:
                cost, _ = cheapest_split(o.row, n, v)
                if not math.isfinite(cost):
                    continue
                if scenario.constraints.budget_usd is not None and cost > scenario.constraints.budget_usd + 1e-6:
                    continue
                if found is None or cost < found[0] - 1e-6:
                    found = (cost, i, n)
    return found
