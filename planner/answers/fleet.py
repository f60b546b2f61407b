"""`planner fleet`: tables -> MILP -> FleetPlan. Builds the tables and the model, solves it (and polishes a
plan solved to a gap), and when the fleet file cannot be met finds which requirement fails and the cheapest
relaxation (docs/fleet.md section 5); the plan itself is read from the solved model by fleet_readout.py.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import pulp

from planner.answers.fleet_readout import empty, extract, is_on
from planner.base.errors import SolverError
from planner.catalog.load import Catalog
from planner.inputs.fleet import Fleet
from planner.model.calibration import Calibration
from planner.optimize import fleet as milp
from planner.optimize.fleet import Solved, solve_model
from planner.optimize.solver import fixed, solve
from planner.results import FleetPlan, FleetRelaxation
from planner.tables import fleet as ft

Progress = Callable[[str], None]
DEFAULT_GAP = 0.01  # 1%: the fleet's costs are estimates to a few percent; `--gap 0` asks for the optimum
DEFAULT_SOLVER = "cbc"  # with every core, CBC proves 1% on the benchmark fleets fastest (docs/fleet.md section 7)


@dataclass(frozen=True)
class Budget:
    """--time-limit bounds the whole command: the solve, the polish and every relaxation tried when the
    fleet cannot be met share it (up to 21 solves otherwise, each allowed the full limit)."""

    end_s: float | None  # time.perf_counter() at which to stop; None: no limit

    @classmethod
    def of(cls, time_limit_s: float | None) -> Budget:
        return cls(None if time_limit_s is None else time.perf_counter() + time_limit_s)

    def left_s(self) -> float | None:
        """What the next solve may take (at least a second, so a solver always starts)."""
        return None if self.end_s is None else max(self.end_s - time.perf_counter(), 1.0)

    def share(self, ways: int) -> Budget:
        """A budget for one of `ways` steps still to come: an equal part of what is left."""
        return self if self.end_s is None else Budget.of(max(self.end_s - time.perf_counter(), 0.0) / ways)

    def spent(self) -> bool:
        return self.end_s is not None and time.perf_counter() >= self.end_s


def run(
    catalog: Catalog,
    fleet: Fleet,
    calibration: Calibration,
    solver: str = DEFAULT_SOLVER,
    time_limit_s: float | None = None,
    gap: float | None = DEFAULT_GAP,
    progress: Progress = lambda _: None,
    source: str = "fleet file",
    threads: int | None = None,
) -> FleetPlan:
    """The plan; `threads` defaults to every core (CBC's parallel search matters here, docs/fleet.md)."""
    threads = threads or os.cpu_count() or 1
    start, budget = time.perf_counter(), Budget.of(time_limit_s)
    progress("tables: offers, pools, run options (performance model), serving capacity")
    data = ft.build(catalog, fleet, calibration, source)
    progress(f"MILP: {len(data.columns)} training runs, {len(data.pools)} pools, {data.horizon} periods")
    model = milp.create_model(data)
    build_s = time.perf_counter() - start
    solved = solve_model(model, solver, budget.left_s(), gap, threads, progress)
    if solved.result.solved:
        return extract(polish(solved, budget.left_s(), threads), build_s, calibration)
    progress("infeasible: looking for the cheapest relaxation")
    failures, relaxations, best = diagnose(data, solver, budget, gap, threads)
    if best is None:
        return empty(data, solved, build_s, calibration, failures, relaxations)
    plan = extract(best, build_s, calibration)
    shown = f"the plan below relaxes {', '.join(sorted(best.model.relax))}"
    return plan.model_copy(
        update={"status": "infeasible", "infeasible": failures, "relaxations": relaxations, "shown": shown}
    )


def polish(solved: Solved, time_limit_s=None, threads: int | None = None) -> Solved:
    """At a gap the solver may leave spare parts in a plan (a switch or cages nothing uses): fix what the plan
    buys, runs and keeps (deliveries, runs, installed nodes kept) and solve the rest (network parts, tier
    bands, replicas, cloud instances, racks) to the optimum. The cost can only fall; the proven gap stands."""
    m = solved.model
    values = {var: var.varValue for var in m.problem.variables()}
    decisions = [*m.buy.values(), *m.run.values(), *m.active.values()]
    try:
        with fixed({var: round(var.value() or 0) for var in decisions}):
            result = solve(m.problem, solved.result.solver, time_limit_s, 0.0, threads=threads)
    except SolverError:  # out of time: the plan as solved stands
        result = None
    if result is None or not result.solved or result.objective > solved.result.objective + 1e-6:
        for var, value in values.items():  # keep the plan as solved
            var.varValue = value
        return solved
    seconds = solved.result.seconds + result.seconds
    return Solved(m, replace(solved.result, seconds=seconds, objective=result.objective), solved.gap_proven)


# ---------------------------------------------------------------- when it cannot be met


def diagnose(data: ft.FleetData, solver: str, budget: Budget, gap, threads: int | None = None):
    """Relax one family of hard limits at a time (deadlines, site power, racks, stock, quotas, demand): first
    minimise how far past them the plan must go, then the cost at that violation. Returns what fails, each
    relaxation that works (cheapest first) and the solved model of the cheapest; all families at once when
    no single one suffices. Stops when the budget is spent, and says which were not tried."""
    families = [f for f in milp.RELAXATIONS if _applies(data, f)]
    found, untried = [], []
    for i, family in enumerate(families):
        if budget.spent():
            untried.append(family)
            continue
        share = budget.share(len(families) - i + 1)  # the rest of the families, and all of them at once
        solved = _relaxed(data, frozenset([family]), solver, share, gap, threads)
        if solved is not None:
            found.append(solved)
    if not found and families and not budget.spent():
        solved = _relaxed(data, frozenset(families), solver, budget, gap, threads)
        found = [solved] if solved is not None else []
    found.sort(key=lambda s: s.result.objective)
    relaxations = [FleetRelaxation(relaxed=", ".join(sorted(s.model.relax)), changes=_changes(s.model),
                                   objective_usd=s.result.objective) for s in found]  # fmt: skip
    failures = sorted({change for r in relaxations for change in r.changes}) or [
        "no relaxation of deadlines, site power, racks, stock, quotas or demand makes the fleet feasible"
        if not untried and not budget.spent()
        else "no solution within --time-limit; raise it, or plan fewer workloads or quarters"
    ]
    if untried:
        failures.append(f"--time-limit reached before relaxing {', '.join(untried)}; raise it to try them")
    return failures, relaxations, (found[0] if found else None)


def _applies(data: ft.FleetData, family: str) -> bool:
    return {
        "deadlines": bool(data.columns["hard_late"].any()),
        "power": bool(data.site["kw"].notna().any()),
        "racks": bool(data.site["racks"].notna().any()),
        "stock": not data.stock.empty,
        "quota": not data.cloud.empty,
        "demand": not data.demand.empty,
    }[family]


def _relaxed(data, relax: frozenset[str], solver, budget: Budget, gap, threads) -> Solved | None:
    model = milp.create_model(data, relax)
    cost = model.problem.objective
    model.problem.setObjective(milp.violation(model))
    try:
        # the least violation to the same gap as the cost: proving the exact least kW or days can take CBC
        # longer than any budget (the startup example's power: no proof in 600 s)
        first = solve(model.problem, solver, budget.left_s(), gap, threads=threads)
    except SolverError:  # no answer in the time left: this relaxation is not shown
        return None
    if not first.solved:
        return None
    least = pulp.value(milp.violation(model))
    model.problem += milp.violation(model) <= least * (1 + 1e-6) + 1e-6, "least_violation"
    model.problem.setObjective(cost)
    try:
        solved = solve_model(model, solver, budget.left_s(), gap, threads)
    except SolverError:
        return None
    return polish(solved, budget.left_s(), threads) if solved.result.solved else None


def _changes(m: milp.Model) -> list[str]:
    """What the relaxed plan had to give, one line each."""
    d, out = m.data, []
    for c, run in m.run.items():
        late = int(d.columns.at[c, "late"])
        if is_on(run) and late and "deadlines" in m.relax:
            j = int(d.columns.at[c, "j"])
            job = d.jobs.loc[j]
            out.append(
                f"deadline: {job['name']} finishes {d.labels[int(d.columns.at[c, 'finish']) - 1]}, {late} period(s) "
                f"after its deadline {d.labels[int(job['deadline']) - 1]}"
            )
    units = {
        "power": "kW of site power",
        "racks": "racks",
        "stock": "units over stock",
        "quota": "instances over quota",
        "demand": "thousand tokens/s unserved",
    }
    for family, slacks in m.slack.items():
        for key, var in slacks.items():
            value = var.value() or 0.0
            if value > 1e-6:
                out.append(f"{family}: {_slack_where(d, family, key)} needs {value:,.0f} more {units[family]}")
    return out


def _slack_where(d: ft.FleetData, family: str, key) -> str:
    if family in ("power", "racks"):
        return d.labels[key - 1]
    if family == "stock":
        o, t = key
        return f"{d.offers.at[o, 'server']} in {d.labels[t - 1]}"
    if family == "quota":
        r, t = key
        return f"{d.cloud.at[r, 'provider']} {d.cloud.at[r, 'instance']} in {d.labels[t - 1]}"
    s, t = key
    return f"{d.services.at[s, 'name']} in {d.labels[t - 1]}"


# ---------------------------------------------------------------- reading the solution


# ---------------------------------------------------------------- what binds
