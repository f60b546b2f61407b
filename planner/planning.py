"""`planner plan`: candidates -> MILP -> Plan, with bests per fabric and NIC speed, alternatives, and an
explanation instead of a bare "infeasible"."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from planner import candidates as cand
from planner.calibration import Calibration
from planner.candidates import SECONDS_PER_DAY
from planner.catalog import Catalog
from planner.errors import InfeasibleError
from planner.plan import BomLine, Choice, Cost, Metrics, Plan, Summary
from planner.scenario import Scenario
from planner.solve import GROUP, Solution, catalog_origin, costs, prune, smallest_cost, solve
from planner.units import format_count, format_usd

Progress = Callable[[str], None]


def run(
    catalog: Catalog,
    scenario: Scenario,
    calibration: Calibration,
    solver: str = "cbc",
    time_limit_s: float | None = None,
    gap: float | None = None,
    alternatives: int = 3,
    progress: Progress = lambda _: None,
) -> Plan:
    progress("building candidate configurations")
    frame, keys = cand.build(catalog, scenario, calibration)
    bounds = smallest_cost(frame, scenario) if not frame.empty else pd.DataFrame()
    pool = prune(frame, bounds, alternatives + 1) if not frame.empty else frame
    if pool.empty:
        raise InfeasibleError("\n".join(explain_infeasible(scenario, calibration, frame, bounds, keys)))
    progress(f"solving the MILP over {len(frame):,} candidates ({len(pool):,} after bounding)")
    sol = _solve(pool, scenario, solver, time_limit_s, gap)
    head = summarize(catalog, scenario, calibration, pool, sol, "chosen")
    row = _row(pool, sol.k)
    progress("best plan per fabric and per NIC speed, and alternatives")
    return Plan(
        scenario=scenario.name,
        status=sol.status,
        solver=solver,
        gap=gap,
        objective=scenario.objective.kind,
        choice=head.choice,
        metrics=head.metrics,
        cost=head.cost,
        bom=bill_of_materials(catalog, row, sol),
        why=why(scenario, row, head),
        per_fabric=_bests(catalog, scenario, calibration, frame, bounds, "fabric", solver, time_limit_s, gap, head),
        per_nic_speed=_bests(
            catalog, scenario, calibration, frame, bounds, "nic_speed_gbps", solver, time_limit_s, gap, head
        ),
        alternatives=_alternatives(
            catalog, scenario, calibration, pool, sol, alternatives, solver, time_limit_s, gap, head
        ),
        candidates=len(frame),
        calibration=calibration.source,
    )


def _solve(pool, scenario, solver, time_limit_s, gap, **kw) -> Solution:
    sol = solve(pool, scenario, solver, time_limit_s, gap, **kw)
    if sol is None:  # pruning kept only candidates within limits, so this would be a solver fault
        raise InfeasibleError("the MILP found no plan although feasible candidates exist; report this as a bug")
    return sol


def _bests(catalog, scenario, calibration, frame, bounds, column, solver, time_limit_s, gap, head) -> list[Summary]:
    out = []
    values = sorted(v for v in frame[column].unique() if v not in ("none", 0.0))
    for value in values:
        subset = frame[frame[column] == value]
        pool = prune(subset, bounds.loc[subset.index], 1)
        if pool.empty:
            continue
        sol = _solve(pool, scenario, solver, time_limit_s, gap)
        label = {"ib": "InfiniBand", "roce": "RoCE"}.get(value, f"{value:g}G NICs" if column != "fabric" else value)
        out.append(summarize(catalog, scenario, calibration, pool, sol, label, head))
    return out


def _alternatives(catalog, scenario, calibration, pool, sol, count, solver, time_limit_s, gap, head) -> list[Summary]:
    """Next-best distinct configurations by no-good cuts: each found configuration (all its tiers) is cut."""
    out, cuts = [], []
    groups = pool.groupby(GROUP, dropna=False, sort=False).indices
    chosen = sol
    for i in range(count):
        key = tuple(pool.iloc[chosen.k][c] for c in GROUP)
        cuts.append([int(j) for j in next(v for g, v in groups.items() if _same(g, key))])
        if sum(len(c) for c in cuts) >= len(pool):
            break
        chosen = solve(pool, scenario, solver, time_limit_s, gap, exclude=cuts)
        if chosen is None:
            break
        out.append(summarize(catalog, scenario, calibration, pool, chosen, f"#{i + 2}", head))
    return out


def _same(a: tuple, b: tuple) -> bool:
    return all((x == y) or (pd.isna(x) and pd.isna(y)) for x, y in zip(a, b, strict=True))


# ---------------------------------------------------------------- describing a solution


def _row(pool: pd.DataFrame, k: int) -> dict:
    """A candidate row as a dict, with pandas' NaN for a missing NIC or switch turned back into None."""
    row = pool.iloc[k].to_dict()
    return {c: (None if c in ("nic", "switch") and not isinstance(v, str) else v) for c, v in row.items()}


def summarize(catalog, scenario, calibration, pool, sol: Solution, label: str, head: Summary | None = None) -> Summary:
    row = _row(pool, sol.k)
    c = costs(row, sol.nodes, sol.down_ports, sol.switches, sol.uplinks, scenario)
    categories = _by_category(bill_of_materials(catalog, row, sol))
    cost = Cost(
        capex_usd=c["capex_usd"],
        by_category=categories,
        power_kw=c["power_w"] / 1e3,
        draw_kw=(scenario.objective.server_draw_fraction * c["node_w"] + c["network_w"]) / 1e3,
        energy_usd=c["energy_usd"],
        tco_usd=c["capex_usd"] + c["energy_usd"],
        objective_usd=c["objective_usd"],
    )
    choice, metrics = _choice_and_metrics(catalog, scenario, calibration, row, sol)
    delta = cost.objective_usd - head.cost.objective_usd if head else 0.0
    return Summary(label=label, choice=choice, metrics=metrics, cost=cost, delta_usd=delta)


def _choice_and_metrics(catalog, scenario, calibration, row, sol) -> tuple[Choice, Metrics]:
    work = cand.scenario_workload(catalog, scenario)
    keys = pd.DataFrame(
        [
            {
                "gpu": row["gpu"],
                "peak_tflops": catalog.gpu(row["gpu"]).peak_bf16_tflops,
                "hbm_gib": catalog.gpu(row["gpu"]).hbm_gib,
                "gpus_per_node": row["gpus_per_node"],
                "intra_node_gb_per_s": row["intra_node_gb_per_s"],
                "micro_batch": row["micro_batch"],
                "node_gbps": row["node_gbps"] / row["oversubscription"] if row["tier"] else 1.0,
                "fabric": row["fabric"] if row["tier"] else "ib",
                "single": row["tier"] == 0,
                **{k: v for k, v in work.__dict__.items() if k not in ("micro_batch", "model_name")},
            }
        ]
    )
    r = cand.evaluate_at(keys, np.array([sol.nodes]), calibration).iloc[0]
    gpus = sol.nodes * row["gpus_per_node"]
    gb = scenario.workload.global_batch
    accum = gb // (gpus * row["micro_batch"]) if gb else None
    tokens = scenario.requirement.tokens
    choice = Choice(
        server=row["server"],
        gpu=row["gpu"],
        nodes=sol.nodes,
        gpus=gpus,
        gpus_per_node=row["gpus_per_node"],
        nic=row["nic"],
        nics_per_node=row["nics_per_node"],
        nic_speed_gbps=row["nic_speed_gbps"],
        node_gbps=row["node_gbps"],
        fabric=row["fabric"],
        switch=row["switch"],
        tier=row["tier"],
        oversubscription=row["oversubscription"],
        switches_by_tier=dict(sol.switches),
        links=row["links"],
        micro_batch=row["micro_batch"],
        grad_accum=accum,
        fabric_text=cand.fabric_text(row),
    )
    metrics = Metrics(
        achieved_tflops_per_gpu=r["achieved_tflops_per_gpu"],
        mfu=r["mfu"],
        t_compute_s=r["t_compute_s"],
        t_comm_s=r["t_comm_s"],
        t_step_s=r["t_step_s"],
        t_optimizer_step_s=r["t_step_s"] * accum if accum else None,
        tokens_per_s=r["tokens_per_s"],
        training_days=tokens / r["tokens_per_s"] / SECONDS_PER_DAY if tokens else None,
        memory_per_gpu_gib=r["memory_per_gpu_gib"],
        usable_hbm_gib=r["usable_hbm_gib"],
        bytes_per_node_per_step=r["bytes_per_node_per_step"],
        binding=r["binding"],
    )
    return choice, metrics


def bill_of_materials(catalog: Catalog, row: dict, sol: Solution) -> list[BomLine]:
    """One line per SKU; unit prices and power straight from the catalog rows (their file:row in `source`)."""
    lines = [_line(catalog, "servers", row["server"], sol.nodes)]
    if row["nic"]:
        server = catalog.server(row["server"])
        nic = catalog.nic(row["nic"])
        included = server.included_count(nic.sku)
        bought = sol.nodes * max(0, row["nics_per_node"] - included)
        if bought:
            lines.append(_line(catalog, "nics", nic.sku, bought))
        if included:
            used = sol.nodes * min(included, row["nics_per_node"])
            lines.append(_line(catalog, "nics", nic.sku, used, included_in=server.name))
    for tier, count in sol.switches.items():
        if count:
            lines.append(_line(catalog, "switches", row["switch"], count, tier=tier))
    optics: dict[str, float] = {}
    endpoints = row["endpoints_per_node"] * sol.nodes
    for skus, units in (
        (row["endpoint_skus"], endpoints),
        (row["port_skus"], sol.down_ports),
        (row["uplink_skus"], sol.uplinks),
    ):
        for sku, per_unit in skus:
            optics[sku] = optics.get(sku, 0.0) + per_unit * units
    lines += [_line(catalog, "optics", sku, int(round(q))) for sku, q in optics.items() if q]
    return lines


def _line(catalog, kind, key, quantity, tier: str | None = None, included_in: str | None = None) -> BomLine:
    item = catalog.rows[kind][(key.lower(),)]
    unit = 0.0 if included_in else item.price_usd
    category = kind if kind != "optics" else ("transceivers" if item.kind == "transceiver" else "cables")
    description = (
        item.name + (f" ({tier})" if tier else "") + (f" (included in {included_in} price)" if included_in else "")
    )
    return BomLine(
        category=category,
        sku=key,
        description=description,
        vendor=getattr(item, "vendor", "") or "",
        quantity=quantity,
        unit_usd=unit,
        extended_usd=unit * quantity,
        unit_w=item.power_w,
        source=catalog_origin(catalog, kind, key),
        confidence=item.confidence,
    )


def _by_category(lines: list[BomLine]) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in lines:
        out[line.category] = out.get(line.category, 0.0) + line.extended_usd
    return out


def why(scenario: Scenario, row: dict, head: Summary) -> list[str]:
    """What binds the chosen plan, in words."""
    notes = []
    if scenario.requirement.gpus is not None:
        notes.append(f"GPU count fixed at {scenario.requirement.gpus}: the choice is about network and micro-batch.")
    if scenario.target_tflops and head.metrics.achieved_tflops_per_gpu < scenario.target_tflops * 1.05:
        notes.append(
            f"the target of {scenario.target_tflops:g} TFLOPs/GPU binds: this plan reaches "
            f"{head.metrics.achieved_tflops_per_gpu:.1f}; cheaper networks or scales fall short of it "
            f"(the step is {head.metrics.binding}-bound)."
        )
    if scenario.requirement.tokens is not None:
        notes.append(
            f"the deadline of {scenario.requirement.days:g} days sets the node count "
            f"({head.metrics.training_days:.1f} days predicted)."
        )
    if scenario.workload.global_batch:
        notes.append(
            f"global batch {scenario.workload.global_batch}: micro-batch {row['micro_batch']} x "
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


def explain_infeasible(
    scenario: Scenario, calibration: Calibration, frame: pd.DataFrame, bounds: pd.DataFrame, keys: pd.DataFrame
) -> list[str]:
    lines = [f"no plan meets scenario '{scenario.name}':"]
    if not frame.empty and not bounds.empty:  # candidates exist; budget or power excludes them all
        cheapest = bounds["bound_capex_usd"].min()
        lowest_kw = bounds["bound_power_w"].min() / 1e3
        budget, power = scenario.constraints.budget_usd, scenario.constraints.power_kw
        if budget is not None and cheapest > budget:
            lines.append(
                f"budget {format_usd(budget)} is too small: the cheapest plan meeting every other "
                f"requirement costs {format_usd(cheapest)}; a budget of {format_usd(cheapest)} would suffice"
            )
        if power is not None and lowest_kw > power:
            lines.append(f"power cap {power:g} kW is too low: the least power-hungry plan needs {lowest_kw:.1f} kW")
        if len(lines) == 1:  # each cap alone can be met, both together cannot
            under_power = bounds[bounds["bound_power_w"] <= power * 1e3 + 1e-6]["bound_capex_usd"].min()
            under_budget = bounds[bounds["bound_capex_usd"] <= budget + 1e-6]["bound_power_w"].min() / 1e3
            lines.append(
                f"budget {format_usd(budget)} and power cap {power:g} kW cannot both hold: within the "
                f"power cap the cheapest plan costs {format_usd(under_power)}; within the budget the "
                f"least power-hungry plan needs {under_budget:.1f} kW"
            )
        return lines
    return lines + _performance_reasons(scenario, calibration, keys)


def _performance_reasons(
    scenario: Scenario, calibration: Calibration, keys: pd.DataFrame, frame_empty: bool = True
) -> list[str]:
    """Why no candidate exists: the first requirement that fails for every configuration, with the nearest
    thing that works."""
    fixed, gb = scenario.requirement.gpus, scenario.workload.global_batch
    open_ = keys["range_lo"] <= keys["range_hi"]
    if fixed is not None and not open_.any():
        sizes = sorted({int(g) for g in keys["gpus_per_node"]})
        return [
            f"{fixed} GPUs is not a whole number of nodes of {sizes} GPUs within max_nodes "
            f"{scenario.constraints.max_nodes}"
        ]
    keys = keys[open_]
    lines = []
    fits_somewhere = keys["n_memory_min"] <= keys["range_hi"]
    if not fits_somewhere.any():
        lines.append(_memory_reason(keys, calibration))
        return lines
    keys = keys[fits_somewhere]
    at = cand.evaluate_at(keys, keys["n_memory_min"].to_numpy(), calibration)  # smallest N that fits
    best = at.loc[at["achieved_tflops_per_gpu"].idxmax()]
    target = scenario.target_tflops
    if target and best["achieved_tflops_per_gpu"] < target:
        where = (
            "1 node, NVLink only"
            if best["nodes"] == 1
            else f"{int(best['nodes'])} nodes at {best['node_gbps']:,.0f} Gbps/node {best['fabric']}"
        )
        lines.append(
            f"target {target:g} TFLOPs/GPU is unreachable with this catalog: the highest where the model fits is "
            f"{best['achieved_tflops_per_gpu']:.1f} ({best['gpu']}, {where}, micro-batch {int(best['micro_batch'])}), "
            f"limited by {best['binding']}; lower target_tflops, or allow larger micro_batches, ZeRO++ "
            "(qwz/hpz/qgz) or faster NICs"
        )
        return lines
    need = cand.required_tokens_per_s(scenario)
    if need is not None and (keys["n_speed_min"] > keys["range_hi"]).all():
        top = cand.evaluate_at(keys, keys["range_hi"].to_numpy(), calibration)
        fastest = top["tokens_per_s"].max()
        days = (
            f" ({scenario.requirement.tokens / fastest / SECONDS_PER_DAY:.1f} days)"
            if scenario.requirement.tokens
            else ""
        )
        lines.append(
            f"the throughput requirement ({format_count(need)} tokens/s) is out of reach: the fastest "
            f"configuration within max_nodes {scenario.constraints.max_nodes} reaches "
            f"{format_count(fastest)} tokens/s{days}; raise max_nodes or the deadline, or lower the target"
        )
        return lines
    feasible = keys["n_lo"] <= keys["n_hi"]
    if feasible.any() and gb:
        lines.append(
            f"global batch {gb} leaves no node count with a whole grad_accum inside the feasible range; "
            "allow more micro_batches or change global_batch"
        )
    elif feasible.any():
        lines.append(
            f"no switch, optic or cable in the catalog connects these NICs at node_leaf_reach_m "
            f"{scenario.cabling.node_leaf_reach_m:g} m / switch_reach_m {scenario.cabling.switch_reach_m:g} m "
            "(or the fabric's capacity is too small); add optics with that reach or matching switches"
        )
    else:
        lines.append(
            "the node range that meets the target holds too few GPUs for memory or the deadline in every "
            "configuration; lower target_tflops or allow ZeRO++ or faster NICs"
        )
    return lines


def _memory_reason(keys: pd.DataFrame, calibration: Calibration) -> str:
    for nodes in (2**i for i in range(0, 21)):
        ev = cand.evaluate_at(keys, np.full(len(keys), nodes), calibration)
        if ev["fits_memory"].any():
            need = int(ev.loc[ev["fits_memory"], "gpus"].min())
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


def cheapest_capex(catalog: Catalog, scenario: Scenario, calibration: Calibration, solver: str = "cbc") -> float | None:
    """Capex of the cheapest plan, or None when there is none (no alternatives, no bests)."""
    frame, _ = cand.build(catalog, scenario, calibration)
    if frame.empty:
        return None
    pool = prune(frame, smallest_cost(frame, scenario), 1)
    sol = solve(pool, scenario, solver) if not pool.empty else None
    if sol is None:
        return None
    return costs(_row(pool, sol.k), sol.nodes, sol.down_ports, sol.switches, sol.uplinks, scenario)["capex_usd"]


def cost_curve(
    catalog: Catalog,
    scenario: Scenario,
    calibration: Calibration,
    solver: str = "cbc",
    factors: tuple[float, ...] = COST_CURVE_FACTORS,
) -> list[dict]:
    """Capex of the cheapest plan as the target TFLOPs/GPU moves around the scenario's."""
    points = []
    if not scenario.target_tflops:
        return points
    for factor in factors:
        target = scenario.target_tflops * factor
        capex = cheapest_capex(catalog, scenario.model_copy(update={"target_tflops": target}), calibration, solver)
        points.append({"target_tflops": target, "capex_usd": capex, "note": "" if capex is not None else "no plan"})
    return points
