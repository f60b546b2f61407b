"""`planner plan`: candidates -> MILP -> Plan, with the best plan per fabric and per NIC speed, the next-best
alternatives, the bill of materials, and an explanation instead of a bare "infeasible"."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from planner import binding, costing, reliability
from planner import candidates as cand
from planner.analysis import plan_sweep
from planner.calibration import Calibration
from planner.catalog import Catalog
from planner.errors import InfeasibleError, SolverError
from planner.optimize import buy, ranking
from planner.resources import display_name
from planner.results import BomLine, Choice, CostBreakdown, Metrics, Plan, Schedule, Summary
from planner.scenario import Scenario
from planner.units import SECONDS_PER_DAY, format_count, format_usd
from planner.workload import Requirements, Training, scenario_training

Progress = Callable[[str], None]
FABRIC_NAMES = {"ib": "InfiniBand", "roce": "RoCE"}


@dataclass(frozen=True)
class Quantities:
    """How much of a candidate is bought: nodes, switch down-ports, switches per tier, uplinks."""

    nodes: int
    down_ports: int
    switches: dict[str, int]
    uplinks: int

    @classmethod
    def at_smallest(cls, row) -> Quantities:
        """A priced table row at its smallest feasible node count (candidates._price)."""
        tiers = {1: ("leaf",), 2: ("leaf", "spine"), 3: ("leaf", "spine", "core")}.get(int(row["tier"]), ())
        return cls(int(row["nodes"]), int(row["down_ports"]), {t: int(row[t]) for t in tiers}, int(row["uplinks"]))

    @classmethod
    def of(cls, sol: buy.Solution) -> Quantities:
        return cls(sol.nodes, sol.down_ports, dict(sol.switches), sol.uplinks)


def run(
    catalog: Catalog,
    scenario: Scenario,
    calibration: Calibration,
    solver: str = "auto",
    time_limit_s: float | None = None,
    gap: float | None = None,
    alternatives: int = 3,
    progress: Progress = lambda _: None,
) -> Plan:
    progress("building candidate configurations")
    sized, table = sized_candidates(catalog, scenario, calibration)
    feasible = table.feasible
    if feasible.empty:
        raise InfeasibleError("\n".join(explain_infeasible(scenario, calibration, table)))
    groups = ranking.best_per_group(feasible, cand.GROUP).head(alternatives + 1)
    pool = feasible.merge(groups[cand.GROUP], on=cand.GROUP).reset_index(drop=True)
    progress(f"solving the MILP over the {len(pool):,} of {len(table.frame):,} candidates that can win")
    sol = buy.optimize(pool, sized, solver, time_limit_s, gap)
    if sol is None:  # the pool holds only candidates within every limit, so this is a fault
        raise SolverError("the MILP found no plan although feasible candidates exist; report this as a bug")
    row = pool.iloc[sol.k]
    _check_against_table(sol, feasible.iloc[0])
    head = summarize(catalog, scenario, calibration, table.training, row, Quantities.of(sol), "chosen")
    describe = lambda r, label: summarize(  # noqa: E731
        catalog, scenario, calibration, table.training, r, Quantities.at_smallest(r), label, head
    )
    chosen_group = {c: row[c] for c in cand.GROUP}
    return Plan(
        scenario=scenario.name,
        status=sol.result.status,
        solver=sol.result.solver,
        gap=sol.result.gap,
        solve_seconds=sol.result.seconds,
        objective=scenario.objective.kind,
        choice=head.choice,
        metrics=head.metrics,
        cost=head.cost,
        bom=bill_of_materials(catalog, row, Quantities.of(sol)),
        why=why(scenario, row, head),
        per_fabric=[
            describe(r, FABRIC_NAMES.get(v, v)) for v, r in ranking.best_per_value(feasible, "fabric", ("none",))
        ],
        per_nic_speed=[
            describe(r, f"{v:g}G NICs") for v, r in ranking.best_per_value(feasible, "nic_speed_gbps", (0.0,))
        ],
        alternatives=[
            describe(r, f"#{i + 2}")
            for i, (_, r) in enumerate(ranking.next_best(feasible, cand.GROUP, alternatives, chosen_group).iterrows())
        ],
        candidates=len(table.frame),
        calibration=calibration.source,
        schedule=plan_schedule(scenario, table.training, head),
    )


def sized_candidates(
    catalog: Catalog, scenario: Scenario, calibration: Calibration
) -> tuple[Scenario, cand.Candidates]:
    """The candidate table of a deadline run sized for its goodput at the plan's own node count (goodput
    falls as nodes are added): plan at goodput g(N) until the cheapest plan's node count N' is no larger
    than N, so g(N') >= g(N) and it meets the deadline. Returns the scenario with its goodput resolved."""
    if not reliability.applies(scenario) or scenario.reliability.goodput is not None:
        return scenario, cand.build(catalog, scenario, calibration)
    params = scenario_training(catalog, scenario).params
    fraction, sized_for = 1.0, None
    while True:
        resolved = reliability.with_goodput(scenario, fraction)
        table = cand.build(catalog, resolved, calibration)
        if table.feasible.empty:
            return resolved, table
        nodes = int(table.feasible.iloc[0]["nodes"])
        if sized_for is not None and nodes <= sized_for:
            return resolved, table
        fraction, sized_for = reliability.goodput(scenario.reliability, params, nodes).fraction, nodes


def plan_schedule(scenario: Scenario, work: Training, head: Summary) -> Schedule | None:
    """The deadline in calendar days at the chosen plan's goodput (None without a deadline)."""
    if head.metrics.training_days is None or not reliability.applies(scenario):
        return None
    g = reliability.goodput(scenario.reliability, work.params, head.choice.nodes)
    return reliability.schedule(scenario, g, head.metrics.training_days)


def _deadline_note(scenario: Scenario, m: Metrics) -> str:
    r = scenario.requirement
    allowed = f"{r.days:g} days" + (
        f" less a {r.schedule_margin:.0%} margin ({r.days * (1 - r.schedule_margin):.1f} days)"
        if r.schedule_margin
        else ""
    )
    if m.effective_training_days is None:
        return f"the deadline of {allowed} sets the node count ({m.training_days:.1f} days predicted)."
    return (
        f"the deadline of {allowed} sets the node count: {m.training_days:.1f} days of training at goodput "
        f"{m.goodput:.1%} take {m.effective_training_days:.1f} calendar days."
    )


def _check_against_table(sol: buy.Solution, cheapest: pd.Series) -> None:
    """The MILP and the priced table must agree on the optimum (both are exact at gap 0)."""
    exact = sol.result.status == "optimal" and sol.result.gap == 0
    if exact and sol.result.objective > cheapest["objective_usd"] * (1 + 1e-9) + 1e-6:
        raise SolverError(
            f"the MILP's optimum ({sol.result.objective:,.2f}) is dearer than the priced table's "
            f"({cheapest['objective_usd']:,.2f}); report this as a bug"
        )


# ---------------------------------------------------------------- describing a plan


def _clean(row) -> dict:
    """A candidate row as a dict, with pandas' NaN for a missing NIC or switch turned back into None."""
    row = dict(row)
    return {c: (None if c in ("nic", "switch") and not isinstance(v, str) else v) for c, v in row.items()}


def summarize(catalog, scenario, calibration, work: Training, row, q: Quantities, label, head=None) -> Summary:
    row = _clean(row)
    lines = bill_of_materials(catalog, row, q)
    cost = _cost(row, q, scenario.objective, lines)
    choice, metrics = _choice_and_metrics(scenario, calibration, work, row, q)
    delta = cost.objective_usd - head.cost.objective_usd if head else 0.0
    return Summary(label=label, choice=choice, metrics=metrics, cost=cost, delta_usd=delta)


def _cost(row: dict, q: Quantities, objective, lines: list[BomLine]) -> CostBreakdown:
    cost = costing.configuration_cost(row, q.nodes, q.down_ports, sum(q.switches.values()), q.uplinks)
    tco = costing.tco_lines(cost, objective)
    by_category: dict[str, float] = {}
    for line in lines:
        by_category[line.category] = by_category.get(line.category, 0.0) + line.extended_usd
    return CostBreakdown(
        capex_usd=cost.capex_usd,
        by_category=by_category,
        power_kw=cost.power_w / 1e3,
        draw_kw=costing.draw_w(cost.node_w, cost.network_w, objective) / 1e3,
        energy_usd=tco["energy"],
        tco_usd=costing.tco_usd(cost, objective),
        objective_usd=costing.objective_usd(cost, objective),
        years=objective.years,
        colocation_usd=tco["colocation"],
        support_usd=tco["support"],
        staff_usd=tco["staff"],
    )


def performance(row: dict, nodes: int, work: Training, calibration: Calibration, confidence=None) -> dict:
    """The model's figures for a candidate at this node count (as scalars)."""
    keys = pd.DataFrame([row]).assign(
        node_gbps_eff=row["node_gbps"] / row["oversubscription"] if row["tier"] else 1.0,
        fabric=row["fabric"] if row["tier"] else "ib",
    )
    figures = cand.evaluate_at(keys, np.array([nodes]), work, calibration, confidence)
    return {k: np.asarray(v)[0] for k, v in figures.items()}


def _choice_and_metrics(scenario, calibration, work, row, q: Quantities) -> tuple[Choice, Metrics]:
    req = Requirements.of(scenario)
    r = performance(row, q.nodes, work, calibration, req.confidence)
    gpus = q.nodes * int(row["gpus_per_node"])
    accum = req.global_batch // (gpus * int(row["micro_batch"])) if req.global_batch else None
    choice = Choice(
        server=row["server"],
        gpu=row["gpu"],
        nodes=q.nodes,
        gpus=gpus,
        gpus_per_node=int(row["gpus_per_node"]),
        nic=row["nic"],
        nics_per_node=int(row["nics_per_node"]),
        nic_speed_gbps=row["nic_speed_gbps"],
        node_gbps=row["node_gbps"],
        fabric=row["fabric"],
        switch=row["switch"],
        tier=int(row["tier"]),
        oversubscription=row["oversubscription"],
        switches_by_tier=dict(q.switches),
        links=row["links"],
        micro_batch=int(row["micro_batch"]),
        grad_accum=accum,
        fabric_text=cand.fabric_text(row),
    )
    days = req.training_days(r["tokens_per_s"])
    g = reliability.goodput(scenario.reliability, work.params, q.nodes) if reliability.applies(scenario) else None
    metrics = Metrics(
        achieved_tflops_per_gpu=r["achieved_tflops_per_gpu"],
        mfu=r["mfu"],
        t_compute_s=r["t_compute_s"],
        t_comm_s=r["t_comm_s"],
        t_step_s=r["t_step_s"],
        t_optimizer_step_s=r["t_step_s"] * accum if accum else None,
        tokens_per_s=r["tokens_per_s"],
        tokens_per_s_point=r["tokens_per_s_point"],
        tokens_per_s_p10=r["tokens_per_s_p10"],
        tokens_per_s_p90=r["tokens_per_s_p90"],
        confidence=req.confidence,
        training_days=days,
        memory_per_gpu_gib=r["memory_per_gpu_gib"],
        usable_hbm_gib=r["usable_hbm_gib"],
        bytes_per_node_per_step=r["bytes_per_node_per_step"],
        binding=str(r["binding"]),
        t_comm_exposed_s=r["t_comm_exposed_s"],
        binding_label=binding.label(str(r["binding"]), r["t_comm_exposed_s"], r["t_step_s"]),
        goodput=g.fraction if g else None,
        effective_training_days=g.wall_days(days) if g and days is not None else None,
    )
    return choice, metrics


def bill_of_materials(catalog: Catalog, row, q: Quantities) -> list[BomLine]:
    """One line per SKU; unit prices and power straight from the catalog rows (their file:row in `source`)."""
    row = _clean(row)
    lines = [_line(catalog, "servers", row["server"], q.nodes)]
    if row["nic"]:
        server = catalog.server(row["server"])
        nic = catalog.nic(row["nic"])
        included = server.included_count(nic.sku)
        bought = q.nodes * max(0, int(row["nics_per_node"]) - included)
        if bought:
            lines.append(_line(catalog, "nics", nic.sku, bought))
        if included:
            used = q.nodes * min(included, int(row["nics_per_node"]))
            lines.append(_line(catalog, "nics", nic.sku, used, included_in=server.name))
    for tier, count in q.switches.items():
        if count:
            lines.append(_line(catalog, "switches", row["switch"], count, tier=tier))
    optics: dict[str, float] = {}
    endpoints = int(row["endpoints_per_node"]) * q.nodes
    for skus, units in (
        (row["endpoint_skus"], endpoints),
        (row["port_skus"], q.down_ports),
        (row["uplink_skus"], q.uplinks),
    ):
        for sku, per_unit in skus:
            optics[sku] = optics.get(sku, 0.0) + per_unit * units
    lines += [_line(catalog, "optics", sku, int(round(n))) for sku, n in optics.items() if n]
    return lines


def _line(catalog, kind, key, quantity, tier: str | None = None, included_in: str | None = None) -> BomLine:
    item = catalog.rows[kind][(key.lower(),)]
    unit = 0.0 if included_in else item.price_usd
    category = kind if kind != "optics" else ("transceivers" if item.kind == "transceiver" else "cables")
    description = (
        item.name + (f" ({tier})" if tier else "") + (f" (included in {included_in} price)" if included_in else "")
    )
    origin = catalog.origin(item)
    return BomLine(
        category=category,
        sku=key,
        description=description,
        vendor=getattr(item, "vendor", "") or "",
        quantity=quantity,
        unit_usd=unit,
        extended_usd=unit * quantity,
        unit_w=item.power_w,
        source=f"{display_name(origin.file)}:{origin.row}",
        confidence=item.confidence,
    )


def why(scenario: Scenario, row, head: Summary) -> list[str]:
    """What binds the chosen plan, in words."""
    notes = []
    m = head.metrics
    if scenario.requirement.gpus is not None:
        notes.append(f"GPU count fixed at {scenario.requirement.gpus}: the choice is about network and micro-batch.")
    if scenario.target_tflops and m.achieved_tflops_per_gpu < scenario.target_tflops * 1.05:
        notes.append(
            f"the target of {scenario.target_tflops:g} TFLOPs/GPU binds: this plan reaches "
            f"{m.achieved_tflops_per_gpu:.1f}; cheaper networks or scales fall short of it "
            f"(bound by {binding.label(m.binding, m.t_comm_exposed_s, m.t_step_s)})."
        )
    if scenario.requirement.tokens is not None:
        notes.append(_deadline_note(scenario, m))
    if scenario.workload.global_batch:
        notes.append(
            f"global batch {scenario.workload.global_batch}: micro-batch {int(row['micro_batch'])} x "
            f"{head.choice.gpus} GPUs x grad_accum {head.choice.grad_accum}."
        )
    if head.metrics.memory_per_gpu_gib > 0.9 * head.metrics.usable_hbm_gib:
        notes.append("memory is nearly full: a larger micro-batch or fewer GPUs would not fit.")
    budget, power = scenario.constraints.budget_usd, scenario.constraints.power_kw
    if budget:
        notes.append(f"budget {format_usd(budget)}: {format_usd(budget - head.cost.capex_usd)} left.")
    if power:
        notes.append(f"power cap {power:g} kW: {power - head.cost.power_kw:.1f} kW left.")
    return notes


# ---------------------------------------------------------------- infeasible: say why and what would work


def explain_infeasible(scenario: Scenario, calibration: Calibration, table: cand.Candidates) -> list[str]:
    lines = [f"no plan meets scenario '{scenario.name}':"] + _deadline_context(scenario, table.requirements)
    if table.frame.empty:
        return lines + _performance_reasons(scenario, calibration, table)
    return lines + _limit_reasons(scenario, table.frame)


def _deadline_context(scenario: Scenario, req: Requirements) -> list[str]:
    """What a deadline asks once its margin and goodput are counted (the need every reason refers to)."""
    r = scenario.requirement
    if r.tokens is None or req.tokens_per_s is None:
        return []
    allowed = r.days * (1 - r.schedule_margin)
    goodput = r.tokens / (allowed * SECONDS_PER_DAY * req.tokens_per_s)  # the goodput the need was sized at
    if goodput < 1 - 1e-9:
        counted = f" at goodput {goodput:.1%} (interruptions, restarts, checkpoints)"
    elif scenario.reliability.interruptions_per_1000_node_days > 0 and scenario.reliability.goodput is None:
        counted = " even before interruptions, restarts and checkpoints are counted"
    elif not r.schedule_margin:
        return []
    else:
        counted = ""
    margin = f" less its {r.schedule_margin:.0%} margin ({allowed:.1f} days)" if r.schedule_margin else ""
    return [f"the deadline of {r.days:g} days{margin} needs {format_count(req.tokens_per_s)} tokens/s{counted}"]


def _limit_reasons(scenario: Scenario, priced: pd.DataFrame) -> list[str]:
    """Candidates exist, but the budget or the power cap excludes them all (each at its cheapest size)."""
    lines = []
    cheapest, lowest_kw = priced["capex_usd"].min(), priced["power_w"].min() / 1e3
    budget, power = scenario.constraints.budget_usd, scenario.constraints.power_kw
    if budget is not None and cheapest > budget:
        lines.append(
            f"budget {format_usd(budget)} is too small: the cheapest plan meeting every other "
            f"requirement costs {format_usd(cheapest)}; a budget of {format_usd(cheapest)} would suffice"
        )
    if power is not None and lowest_kw > power:
        lines.append(f"power cap {power:g} kW is too low: the least power-hungry plan needs {lowest_kw:.1f} kW")
    if not lines:  # each cap alone can be met, both together cannot
        under_power = priced[priced["power_w"] <= power * 1e3 + 1e-6]["capex_usd"].min()
        under_budget = priced[priced["capex_usd"] <= budget + 1e-6]["power_w"].min() / 1e3
        lines.append(
            f"budget {format_usd(budget)} and power cap {power:g} kW cannot both hold: within the "
            f"power cap the cheapest plan costs {format_usd(under_power)}; within the budget the "
            f"least power-hungry plan needs {under_budget:.1f} kW"
        )
    return lines


def _performance_reasons(scenario: Scenario, calibration: Calibration, table: cand.Candidates) -> list[str]:
    """Why no candidate exists: the first requirement that fails for every configuration, with the nearest
    thing that works."""
    keys, work, req = table.bounds, table.training, table.requirements
    open_ = keys["range_lo"] <= keys["range_hi"]
    if req.gpus is not None and not open_.any():
        sizes = sorted({int(g) for g in keys["gpus_per_node"]})
        return [
            f"{req.gpus} GPUs is not a whole number of nodes of {sizes} GPUs within max_nodes "
            f"{scenario.constraints.max_nodes}"
        ]
    keys = keys[open_]
    fits_somewhere = keys["n_memory_min"] <= keys["range_hi"]
    if not fits_somewhere.any():
        return [_memory_reason(keys, work, calibration)]
    keys = keys[fits_somewhere]
    at = pd.DataFrame(cand.evaluate_at(keys, keys["n_memory_min"].to_numpy(), work, calibration, req.confidence))
    at["node_gbps_eff"] = keys["node_gbps_eff"].to_numpy()
    at["fabric"], at["gpu"] = keys["fabric"].to_numpy(), keys["gpu"].to_numpy()
    best = at.loc[at["achieved_tflops_per_gpu"].idxmax()]
    if req.target_tflops and best["achieved_tflops_per_gpu"] < req.target_tflops:
        where = (
            "1 node, NVLink only"
            if best["nodes"] == 1
            else f"{int(best['nodes'])} nodes at {best['node_gbps_eff']:,.0f} Gbps/node {best['fabric']}"
        )
        return [
            f"target {req.target_tflops:g} TFLOPs/GPU is unreachable with this catalog: the highest where the model "
            f"fits is {best['achieved_tflops_per_gpu']:.1f} ({best['gpu']}, {where}, micro-batch "
            f"{int(best['micro_batch'])}), limited by {best['binding']}; lower target_tflops, or allow larger "
            "micro_batches, ZeRO++ (qwz/hpz/qgz) or faster NICs"
        ]
    if req.tokens_per_s is not None and (keys["n_speed_min"] > keys["range_hi"]).all():
        top = cand.evaluate_at(keys, keys["range_hi"].to_numpy(), work, calibration, req.confidence)
        fastest = float(np.max(top["tokens_per_s"]))
        days = f" ({req.training_days(fastest):.1f} days)" if req.tokens else ""
        return [
            f"the throughput requirement ({format_count(req.tokens_per_s)} tokens/s) is out of reach: the fastest "
            f"configuration within max_nodes {scenario.constraints.max_nodes} reaches "
            f"{format_count(fastest)} tokens/s{days}; raise max_nodes or the deadline, or lower the target"
        ]
    if (keys["n_lo"] <= keys["n_hi"]).any():
        if req.global_batch:
            return [
                f"global batch {req.global_batch} leaves no node count with a whole grad_accum inside the feasible "
                "range; allow more micro_batches or change global_batch"
            ]
        return [
            f"no switch, optic or cable in the catalog connects these NICs at node_leaf_reach_m "
            f"{scenario.cabling.node_leaf_reach_m:g} m / switch_reach_m {scenario.cabling.switch_reach_m:g} m "
            "(or the fabric's capacity is too small); add optics with that reach or matching switches"
        ]
    return [
        "the node range that meets the target holds too few GPUs for memory or the deadline in every "
        "configuration; lower target_tflops or allow ZeRO++ or faster NICs"
    ]


def _memory_reason(keys: pd.DataFrame, work: Training, calibration: Calibration) -> str:
    for nodes in (2**i for i in range(0, 21)):
        ev = cand.evaluate_at(keys, np.full(len(keys), nodes), work, calibration)
        fits = np.asarray(ev["fits_memory"], dtype=bool)
        if fits.any():
            need = int(np.asarray(ev["gpus"])[fits].min())
            return (
                f"the model does not fit in GPU memory within the allowed node counts: it needs at least "
                f"{need} GPUs; raise max_nodes or the GPU count, or use GPUs with more HBM"
            )
    return (
        "the model does not fit at any GPU count: the activations of one micro-batch alone exceed usable HBM; "
        "use smaller micro_batches, activation checkpointing or a shorter seq_len"
    )


# ---------------------------------------------------------------- sensitivity (for reports)

COST_CURVE_FACTORS = (0.75, 0.9, 1.0, 1.1, 1.25)


def cheapest_capex(catalog: Catalog, scenario: Scenario, calibration: Calibration) -> float | None:
    """Capex of the cheapest plan (by the scenario's objective), or None when there is none. Exact: the
    priced table holds every candidate at its optimum."""
    feasible = sized_candidates(catalog, scenario, calibration)[1].feasible
    return None if feasible.empty else float(feasible.iloc[0]["capex_usd"])


@dataclass(frozen=True)
class Sensitivity:
    """How the plan's answer moves: achieved TFLOPs/GPU against node bandwidth at the chosen configuration
    (None for a single node) and the cheapest plan's capex as the target moves."""

    bandwidth_sweep: pd.DataFrame | None
    cost_curve: list[dict]


def sensitivity(catalog: Catalog, scenario: Scenario, plan: Plan, calibration: Calibration) -> Sensitivity:
    sweep = plan_sweep(catalog, scenario_training(catalog, scenario), plan.choice, calibration)
    return Sensitivity(sweep, cost_curve(catalog, scenario, calibration))


def cost_curve(
    catalog: Catalog, scenario: Scenario, calibration: Calibration, factors: tuple[float, ...] = COST_CURVE_FACTORS
) -> list[dict]:
    """Capex of the cheapest plan as the target TFLOPs/GPU moves around the scenario's."""
    points = []
    if not scenario.target_tflops:
        return points
    for factor in factors:
        target = scenario.target_tflops * factor
        capex = cheapest_capex(catalog, scenario.model_copy(update={"target_tflops": target}), calibration)
        points.append({"target_tflops": target, "capex_usd": capex, "note": "" if capex is not None else "no plan"})
    return points
