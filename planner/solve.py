"""Run the MILP, check its status (never assume), and turn the solution into a Plan with its bill of materials."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import pulp

from planner.catalog import Catalog
from planner.errors import SolverError
from planner.formulation import Model, build_model, cost_terms, usd_per_watt_drawn
from planner.scenario import Scenario

SOLVERS = ("cbc", "highs")


@dataclass(frozen=True)
class Solution:
    """The picked candidate and its integer quantities, read from the solver's values."""

    k: int
    nodes: int
    down_ports: int
    switches: dict[str, int]
    uplinks: int
    objective_usd: float
    status: str
    gap: float | None


def make_solver(name: str, time_limit_s: float | None, gap: float | None):
    if name == "cbc":  # CBC as bundled with PuLP 3.x (pyproject pins pulp < 4, which unbundles it)
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return pulp.PULP_CBC_CMD(msg=False, timeLimit=time_limit_s, gapRel=gap)
    if name == "highs":
        solver = pulp.HiGHS(msg=False, timeLimit=time_limit_s, gapRel=gap)
        if not solver.available():
            raise SolverError("--solver highs needs highspy: pip install 'planner[highs]' (or use --solver cbc)")
        return solver
    raise SolverError(f"unknown solver {name!r}; choose one of {', '.join(SOLVERS)}")


def _value(expr) -> int:
    value = pulp.value(expr)
    return 0 if value is None else int(round(value))


def solve(
    candidates: pd.DataFrame,
    scenario: Scenario,
    solver: str = "cbc",
    time_limit_s: float | None = None,
    gap: float | None = None,
    restrict: dict | None = None,
    exclude: list[list[int]] | None = None,
) -> Solution | None:
    """Optimal (or time-limited best) solution, or None when the model is infeasible."""
    if candidates.empty:
        return None
    model: Model = build_model(candidates, scenario, restrict, exclude)
    status = model.problem.solve(make_solver(solver, time_limit_s, gap))
    name = pulp.LpStatus[status]
    if name == "Infeasible":
        return None
    if model.problem.sol_status not in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
        raise SolverError(
            f"solver {solver} ended with status {name!r} and no feasible solution; "
            "raise --time-limit or try --solver highs"
        )
    picked = [k for k, v in model.vars.items() if round(pulp.value(v.z) or 0) == 1]
    if len(picked) != 1:
        raise SolverError(f"solver {solver} returned {len(picked)} configurations instead of one")
    k = picked[0]
    cv = model.vars[k]
    status_text = "optimal" if model.problem.sol_status == pulp.LpSolutionOptimal else "feasible (time limit)"
    return Solution(
        k=k,
        nodes=_value(cv.nodes),
        down_ports=_value(cv.down_ports) if cv.down_ports is not None else 0,
        switches={t: _value(e) for t, e in cv.switches.items()},
        uplinks=_value(cv.uplinks),
        objective_usd=float(pulp.value(model.problem.objective)),
        status=status_text,
        gap=gap,
    )


# ---------------------------------------------------------------- costing a solution (shared with brute force)


def energy_usd(scenario: Scenario, node_w: float, network_w: float) -> float:
    o = scenario.objective
    return (o.server_draw_fraction * node_w + network_w) * usd_per_watt_drawn(o)


def costs(
    row: dict, nodes: int, down_ports: int, switches: dict[str, int], uplinks: int, scenario: Scenario
) -> dict[str, float]:
    """capex, power and energy of candidate `row` with these quantities: the MILP's objective, term by term."""
    capex, power_w, node_w = cost_terms(row, nodes, down_ports, sum(switches.values()), uplinks)
    network_w = power_w - node_w
    energy = energy_usd(scenario, node_w, network_w)
    objective = capex + (energy if scenario.objective.kind == "tco" else 0.0)
    return {
        "capex_usd": capex,
        "power_w": power_w,
        "node_w": node_w,
        "network_w": network_w,
        "energy_usd": energy,
        "objective_usd": objective,
    }


def node_counts(row: dict) -> list[int]:
    return list(row["allowed_nodes"]) if row["allowed_nodes"] is not None else list(range(row["n_lo"], row["n_hi"] + 1))


def catalog_origin(catalog: Catalog, kind: str, key: str) -> str:
    row = catalog.rows[kind][(key.lower(),)]
    origin = catalog.origin(row)
    return f"{origin.file}:{origin.row}"


# ---------------------------------------------------------------- presolve by bounds

GROUP = ["server", "nic", "nics_per_node", "fabric", "switch", "micro_batch"]


def fabric_size(row: dict, nodes: int):
    """The closed-form fabric of candidate `row` at this node count (fabric.size); None when the tier cannot
    hold it. Single-node candidates have no fabric."""
    from planner import fabric

    if row["tier"] == 0:
        return fabric.Switches(0, {}, 0)
    endpoints = row["endpoints_per_node"] * nodes
    return fabric.size(endpoints, row["tier"], row["switch_ports"], row["breakout"], row["oversubscription"])


def within_limits(c: dict[str, float], scenario: Scenario) -> bool:
    budget, power = scenario.constraints.budget_usd, scenario.constraints.power_kw
    return (budget is None or c["capex_usd"] <= budget + 1e-6) and (power is None or c["power_w"] <= power * 1e3 + 1e-6)


def smallest_cost(frame: pd.DataFrame, scenario: Scenario) -> pd.DataFrame:
    """Each candidate's cost at its smallest allowed node count. Every cost and power term is non-decreasing
    in the node count (nodes, endpoints and ceil-sized switch counts all grow), so this is the candidate's
    optimum, and if budget or power exclude it they exclude every larger count too."""
    records = []
    for row in frame.to_dict("records"):
        nodes = node_counts(row)[0]
        size = fabric_size(row, nodes)
        c = costs(row, nodes, size.down_ports, size.by_tier, size.uplinks, scenario)
        records.append(
            {
                "bound_usd": c["objective_usd"],
                "bound_capex_usd": c["capex_usd"],
                "bound_power_w": c["power_w"],
                "within_limits": within_limits(c, scenario),
            }
        )
    return pd.DataFrame(records, index=frame.index)


def prune(frame: pd.DataFrame, bounds: pd.DataFrame, groups: int) -> pd.DataFrame:
    """Keep only candidates that can appear among the `groups` best distinct configurations: those within
    budget and power whose cost bound is no worse than the best bound of the groups-th best group."""
    ok = frame[bounds["within_limits"]]
    if ok.empty:
        return ok
    best_per_group = bounds.loc[ok.index].groupby([ok[c] for c in GROUP], dropna=False)["bound_usd"].min()
    threshold = best_per_group.sort_values().iloc[: max(groups, 1)].max()
    return ok[bounds.loc[ok.index, "bound_usd"] <= threshold + 1e-6]
