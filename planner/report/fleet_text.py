"""Terminal report of a FleetPlan: what to buy when, where each run and service goes, the money, what binds."""

from __future__ import annotations

from planner.base.units import format_usd
from planner.report.terminal import format_table
from planner.results import FleetPlan

RUNNING, IDLE = "#", "."


def render(plan: FleetPlan) -> str:
    out = _header(plan)
    if plan.status == "infeasible":
        out += _infeasible(plan)
        if not plan.purchases and not plan.jobs:
            return "\n".join(out)
    out += _purchases(plan)
    out += _pools(plan)
    out += _timetable(plan)
    out += _serving(plan)
    out += _cash_flow(plan)
    out += _attribution(plan)
    out += _section("What binds", [f"  - {line}" for line in plan.binding] or ["  nothing is at a limit"])
    return "\n".join(out).rstrip() + "\n"


def _section(title: str, lines: list[str]) -> list[str]:
    return [title, *lines, ""]


def _gap(plan: FleetPlan) -> str:
    proven = "unknown" if plan.gap_proven is None else f"{plan.gap_proven:.2%}"
    return f"proven gap {proven}, asked {plan.gap_requested:.2%}"


def _solver(plan: FleetPlan) -> str:
    return f"{plan.solver.upper()}, {plan.solver_threads} thread{'s' if plan.solver_threads > 1 else ''}"


def _header(plan: FleetPlan) -> list[str]:
    size = plan.model_size
    out = [
        f"Fleet plan: {plan.name} ({plan.periods[0]}..{plan.periods[-1]}, {len(plan.periods)} quarters)",
        f"  status     {plan.status} ({_solver(plan)}, {_gap(plan)}); built in {plan.build_seconds:.1f} s, "
        f"solved in {plan.solve_seconds:.1f} s",
    ]
    if plan.repeat_note:
        out.append(f"  repeat     {plan.repeat_note}")
    if plan.objective_usd is not None:
        out.append(
            f"  cost       {format_usd(plan.objective_usd)} discounted over the horizon, net of "
            f"{format_usd(plan.residual_usd)} residual value; lateness penalties {format_usd(plan.penalties_usd)}"
        )
    out.append(
        f"  model      {size['variables']:,} variables ({size['integer_variables']:,} integer), "
        f"{size['constraints']:,} constraints: {size['training_columns']:,} possible training runs, "
        f"{size['pools']} pools, {size['offers']} offers; a brute force would list "
        f"~1e{plan.enumeration_log10:.0f} plans"
    )
    return [*out, ""]


def _infeasible(plan: FleetPlan) -> list[str]:
    out = ["The fleet file cannot be met as written:", *[f"  - {line}" for line in plan.infeasible], ""]
    if plan.relaxations:
        out.append("Relaxations that make it feasible, cheapest first:")
        for r in plan.relaxations:
            cost = format_usd(r.objective_usd) if r.objective_usd is not None else "?"
            out.append(f"  - relax {r.relaxed}: discounted cost {cost}")
            out += [f"      {change}" for change in r.changes]
        out += ["", f"({plan.shown}.)", ""]
    return out


def _purchases(plan: FleetPlan) -> list[str]:
    if not plan.purchases and not plan.network:
        return _section("Purchase schedule", ["  nothing to buy: the installed base and the cloud suffice"])
    rows = [
        {
            "period": p.period,
            "server": p.server,
            "vendor": p.vendor,
            "units": p.units,
            "tier": p.tier,
            "unit_usd": p.unit_usd,
            "nics_links_usd_per_node": p.extra_usd_per_node,
            "total_usd": p.extended_usd,
            "price_date": p.price_date + (" (old)" if p.stale else ""),
            "pool": p.pool,
        }
        for p in plan.purchases
    ]
    out = [format_table(rows, list(rows[0]), max_width=44)] if rows else []
    network = [
        {"period": n.period, "pool": n.pool, "item": n.item, "sku": n.sku, "qty": n.quantity,
         "unit_usd": n.unit_usd, "total_usd": n.extended_usd}
        for n in plan.network
    ]  # fmt: skip
    if network:
        out += ["", format_table(network, list(network[0]), max_width=44)]
    return _section("Purchase schedule (deliveries; servers from whom, at what tier; network parts)", out)


def _pools(plan: FleetPlan) -> list[str]:
    rows = []
    for pool in plan.pools:
        rows.append({"pool": pool.name, "what": "nodes", **dict(zip(plan.periods, pool.nodes, strict=True))})
        gpus = [n * pool.gpus_per_node for n in pool.nodes]
        busy = [f"{b / g:.0%}" if g else "" for b, g in zip(pool.gpus_busy, gpus, strict=True)]
        rows.append({"pool": "", "what": "GPUs busy", **dict(zip(plan.periods, busy, strict=True))})
        if pool.fabric != "none":
            switches = [f"{leaf}+{spine}" for leaf, spine in zip(pool.leaves, pool.spines, strict=True)]
            by_period = dict(zip(plan.periods, switches, strict=True))
            rows.append({"pool": f"  {pool.topology}", "what": "leaf+spine", **by_period})
    if not rows:
        return _section("Pools", ["  none: every workload runs in the cloud"])
    return _section("Pools (identical nodes on one network), per quarter", [format_table(rows, list(rows[0]), 44)])


def _timetable(plan: FleetPlan) -> list[str]:
    if not plan.jobs:
        return []
    rows = []
    for run in plan.jobs:
        bar = "".join(RUNNING if p in run.periods else IDLE for p in plan.periods)
        late = f"{run.late_periods} late" if run.late_periods else "on time"
        rows.append(
            {
                "job": run.job,
                "timeline": bar,
                "where": run.where,
                "nodes": run.nodes,
                "gpus": run.gpus,
                "mb": run.micro_batch,
                **(
                    {"layout": run.layout}
                    if any(not r.layout.startswith("data") for r in plan.jobs if r.layout)
                    else {}
                ),
                "tflops_per_gpu": round(run.achieved_tflops_per_gpu),
                "days": round(run.days),
                "done": run.finish_date,
                "deadline": f"{run.deadline} ({late})",
            }
        )
    head = f"Training timetable ({RUNNING} = holds its nodes that quarter; first column {plan.periods[0]})"
    return _section(head, [format_table(rows, list(rows[0]), max_width=44)])


def _serving(plan: FleetPlan) -> list[str]:
    if not plan.placements:
        return []
    rows = [
        {
            "service": p.service,
            "period": p.period,
            "demand_tok_s": round(p.demand_tokens_per_s),
            "where": p.where,
            "replicas": round(p.replicas, 1),
            "gpus_each": f"{p.gpus_per_replica} {p.layout}",
            "batch": p.batch,
            "ms_per_token": round(p.ms_per_token, 1),
            "tok_s": round(p.tokens_per_s),
        }
        for p in plan.placements
    ]
    title = "Inference capacity per quarter (a fraction of a replica is a share of its GPU time)"
    return _section(title, [format_table(rows, list(rows[0]), max_width=44)])


def _cash_flow(plan: FleetPlan) -> list[str]:
    rows = [
        {
            "period": c.period,
            "servers_usd": c.servers_usd,
            "network_usd": c.network_usd,
            "energy_usd": c.energy_usd,
            "colocation_usd": c.colocation_usd,
            "cloud_usd": c.cloud_usd,
            "total_usd": c.total_usd,
            "cumulative_usd": c.cumulative_usd,
            "kw": round(c.power_kw),
            "site_kw": round(c.site_kw) if c.site_kw is not None else None,
        }
        for c in plan.cash_flow
    ]
    if not rows:
        return []
    heading = "Cash flow (nominal USD per quarter; IT power in service vs the site)"
    return _section(heading, [format_table(rows, list(rows[0]))])


def _attribution(plan: FleetPlan) -> list[str]:
    rows = [
        {
            "workload": a.workload,
            "kind": a.kind,
            "gpu_quarters": round(a.gpu_periods, 1),
            "owned_usd": a.owned_usd,
            "cloud_usd": a.cloud_usd,
            "penalty_usd": a.penalty_usd,
            "total_usd": a.total_usd,
        }
        for a in plan.attribution
    ]
    if not rows:
        return []
    note = "Cost by workload (discounted; owned pools charged by GPU-quarters used, idle capacity on its own line)"
    return _section(note, [format_table(rows, list(rows[0]))])
