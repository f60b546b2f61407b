"""The fleet plan read from a solved fleet MILP (planner/optimize/fleet.py): the purchase schedule, the
network bought, the pools, the job timetable, serving placements, the cash flow, what each workload costs,
what binds, how the solve went, and the plan's assumptions in words."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

import numpy as np
import pandas as pd
import pulp

from planner.assumptions import hardware as H
from planner.base.units import format_usd
from planner.catalog import dates
from planner.inputs.fleet import HOURS_PER_PERIOD, QUARTER_LABEL
from planner.model.calibration import Calibration
from planner.optimize import fleet as milp
from planner.optimize.fleet import Solved
from planner.optimize.solver import SolveResult
from planner.results import (
    FleetAttribution,
    FleetCashFlow,
    FleetJobRun,
    FleetNetworkPurchase,
    FleetPlacement,
    FleetPlan,
    FleetPool,
    FleetPurchase,
)
from planner.tables import fleet as ft

BINDING_SHARE = 0.98  # racks: a limit counts as binding when the plan uses 98% of it
REPEAT_THREADS = (
    "CBC's parallel search is opportunistic: a rerun may return another plan within the proven gap; "
    "--threads 1 repeats exactly (slower on large fleets)"
)
REPEAT_TIME = "stopped at the time limit: a rerun on a faster or busier machine may return another plan"


def repeat_note(result: SolveResult) -> str:
    """Why a rerun may not return this plan ('' when it does). CBC's parallel tree search is opportunistic
    (its repeatable mode, -threads 100+n, crashes CBC 2.10.3 on fleet models); one CBC thread and HiGHS's MIP
    search are deterministic, unless the time limit stopped them."""
    if result.solver == "cbc" and (result.threads or 1) > 1:
        return REPEAT_THREADS
    return REPEAT_TIME if result.status == "feasible" else ""


def solver_fields(solved: Solved) -> dict:
    """The FleetPlan fields that describe the solve: solver, threads, repeatability, gap asked, seconds."""
    result = solved.result
    return dict(
        solver=result.solver, solver_threads=result.threads or 1, repeat_note=repeat_note(result),
        gap_requested=result.gap, solve_seconds=result.seconds,
    )  # fmt: skip


def is_on(var) -> bool:
    """A binary variable of the solved model set (1)."""
    return round(var.value() or 0) == 1


def _int(expr) -> int:
    return int(round(pulp.value(expr) or 0))


def extract(solved: Solved, build_s: float, calibration: Calibration) -> FleetPlan:
    m, d = solved.model, solved.model.data
    cash = _cash_flow(m)
    jobs = _jobs(m)
    placements = _placements(m)
    pools = _pools(m, jobs, placements)
    attribution = _attribution(m, pools, jobs)
    residual = _residual(m)
    penalties = float(pulp.value(milp.penalties(m)) or 0.0)
    return FleetPlan(
        name=d.fleet.name,
        status=solved.result.status,
        **solver_fields(solved),
        gap_proven=solved.gap_proven,
        build_seconds=build_s,
        objective_usd=float(pulp.value(m.problem.objective)),
        residual_usd=residual,
        penalties_usd=penalties,
        model_size=model_size(m),
        enumeration_log10=ft.enumeration_log10(d),
        periods=d.labels,
        purchases=_purchases(m),
        network=_network(m),
        pools=pools,
        jobs=jobs,
        placements=placements,
        cash_flow=cash,
        attribution=attribution,
        binding=_binding(m, jobs, cash),
        assumptions=assumptions(d),
        calibration=calibration.source,
    )


def model_size(m: milp.Model) -> dict[str, int]:
    variables = m.problem.variables()
    return {
        "variables": len(variables),
        "integer_variables": sum(1 for v in variables if v.cat == pulp.LpInteger),
        "constraints": m.problem.numConstraints(),
        "training_columns": len(m.run),
        "pools": len(m.data.pools),
        "offers": len(m.data.offers),
        "periods": m.data.horizon,
    }


def _purchases(m: milp.Model) -> list[FleetPurchase]:
    d = m.data
    offers, pools = d.offers.set_index("o"), d.pools.set_index("p")
    supply = d.supply.set_index(["o", "p"])
    out = []
    for (o, p, t), x in sorted(m.buy.items(), key=lambda kv: (kv[0][2], kv[0][0], kv[0][1])):
        units = _int(x)
        if not units:
            continue
        tier, unit = _tier(m, o, t)
        extra = float(supply.at[(o, p), "extra_usd"])
        out.append(
            FleetPurchase(
                period=d.labels[t - 1],
                server=offers.at[o, "server"],
                vendor=offers.at[o, "vendor"],
                pool=pools.at[p, "name"],
                units=units,
                tier=tier,
                unit_usd=unit,
                extra_usd_per_node=extra,
                extra_nics_per_node=int(supply.at[(o, p), "extra_nics"]),
                extended_usd=units * (unit + extra),
                source=offers.at[o, "source"],
                price_date=offers.at[o, "price_date"],
                stale=_stale(offers.at[o, "price_date"]),
            )
        )
    return out


def _stale(price_date: str) -> bool:
    """A catalog price older than stale_price_months today (a price the fleet file gives is the user's own)."""
    if not price_date or price_date == "fleet terms":
        return False
    return dates.is_stale(price_date, dt.date.today(), int(H.STALE_PRICE_MONTHS.value))


def _tier(m: milp.Model, o: int, t: int) -> tuple[str, float]:
    """The band the period's order sits in, and its average unit price (one band for all-units tiers)."""
    d = m.data
    bands = d.tiers[d.tiers["o"] == o]
    if bands.empty:
        return "list", float(d.offers.at[o, "price_usd"])
    used = [(int(k), m.bands[(o, t, int(k))][0].value() or 0.0) for k in bands["k"] if (o, t, int(k)) in m.bands]
    used = [(k, q) for k, q in used if q > 1e-6]
    total = sum(q for _, q in used)
    spend = sum(q * float(bands.loc[bands["k"] == k, "unit_usd"].iloc[0]) for k, q in used)
    label = " + ".join(bands.loc[bands["k"] == k, "label"].iloc[0] for k, _ in used) or "list"
    return label, spend / total if total else float(d.offers.at[o, "price_usd"])


def _network(m: milp.Model) -> list[FleetNetworkPurchase]:
    d = m.data
    pools = d.pools.set_index("p")
    out = []
    for (p, t), now in sorted(m.fabric.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        row = pools.loc[p]
        before = m.fabric.get((p, t - 1))
        owned = milp.owned_fabric(row)
        added = {k: _int(now[k]) - (_int(before[k]) if before else int(owned[k])) for k in now}
        items = [
            ("leaf switches", row["switch"], added["L"], row["switch_usd"]),
            ("spine switches", row["switch"], added["S"], row["switch_usd"]),
            ("switch cages (modules)", _skus(row["cage_skus"]), added["K"], row["cage_usd"]),
            ("leaf-spine links", _skus(row["uplink_skus"]), added["U"], row["uplink_usd"]),
        ]
        for item, sku, quantity, unit in items:
            if quantity > 0 and (unit > 0 or "switches" in item):
                out.append(
                    FleetNetworkPurchase(
                        period=d.labels[t - 1], pool=row["name"], item=item, sku=sku or "-", quantity=quantity,
                        unit_usd=float(unit), extended_usd=float(unit) * quantity,
                    )
                )  # fmt: skip
    return out


def _skus(items) -> str:
    """A design's SKUs per unit, (kind, sku, quantity) each (planner/hardware/designs.py), as text."""
    return " + ".join(f"{q:g}x {sku}" if q != 1 else sku for *_, sku, q in items)


def _where(d: ft.FleetData, kind: str, resource: int) -> str:
    if kind == "pool":
        return str(d.pools.at[int(resource), "name"])
    row = d.cloud.loc[int(resource)]
    return f"cloud {row['provider']} {row['instance']} ({row['pricing']})"


def _jobs(m: milp.Model) -> list[FleetJobRun]:
    d = m.data
    out = []
    for c, run in m.run.items():
        if not is_on(run):
            continue
        col = d.columns.loc[c]
        opt = d.options.loc[int(col["k"])]
        job = d.jobs.loc[int(col["j"])]
        start, finish = int(col["start"]), int(col["finish"])
        out.append(
            FleetJobRun(
                job=job["name"],
                where=_where(d, opt["kind"], opt["resource"]),
                kind=opt["kind"],
                nodes=int(opt["n"]),
                gpus=int(opt["n"] * opt["gpus_per_node"]),
                micro_batch=int(opt["micro_batch"]),
                start=d.labels[start - 1],
                finish=d.labels[finish - 1],
                periods=d.labels[start - 1 : finish],
                deadline=d.labels[int(job["deadline"]) - 1],
                late_periods=int(col["late"]),
                layout=str(opt.get("layout", "")),
                checkpointing=str(opt.get("checkpointing", "")),
                achieved_tflops_per_gpu=float(opt["tflops"]),
                tokens_per_s=float(opt["tokens_per_s"]),
                days=float(opt["days"]),
                finish_date=_finish_date(d, start, float(opt["days"])),
                cloud_usd=float(opt["cloud_usd"]),
                penalty_usd=float(col["penalty"]),
            )
        )
    return sorted(out, key=lambda r: (r.start, r.job))


def _finish_date(d: ft.FleetData, start: int, days: float) -> str:
    label = d.fleet.horizon.start
    if label is None:
        whole = int(days // (HOURS_PER_PERIOD / 24))
        rest = days - whole * HOURS_PER_PERIOD / 24
        return f"P{start + whole} + {rest:.0f} d"
    year, quarter = (int(x) for x in QUARTER_LABEL.match(label).groups())
    month = 3 * (quarter - 1) + 1 + 3 * (start - 1)
    first = dt.date(year + (month - 1) // 12, (month - 1) % 12 + 1, 1)
    return (first + dt.timedelta(days=float(np.ceil(days)))).isoformat()


def _placements(m: milp.Model) -> list[FleetPlacement]:
    d = m.data
    demand = d.demand.set_index(["s", "t"])["tokens_per_s"]
    out = []
    for (v, t), g in sorted(m.replicas.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        replicas = g.value() or 0.0
        if replicas < 1e-6:
            continue
        row = d.serving.loc[v]
        s = int(row["s"])
        out.append(
            FleetPlacement(
                service=d.services.at[s, "name"],
                period=d.labels[t - 1],
                where=_where(d, row["kind"], row["resource"]),
                kind=row["kind"],
                replicas=replicas,
                layout=str(row["layout"]),
                gpus_per_replica=int(row["replica_gpus"]),
                batch=int(row["batch"]),
                ms_per_token=float(row["ms_per_token"]),
                tokens_per_s=replicas * float(row["tokens_per_s"]),
                demand_tokens_per_s=float(demand[(s, t)]),
            )
        )
    return out


def _pools(m: milp.Model, jobs: list[FleetJobRun], placements: list[FleetPlacement]) -> list[FleetPool]:
    d = m.data
    out = []
    busy = _gpus_busy(m)
    installed = d.installed.groupby(["p", "t"])["nodes"].sum() if not d.installed.empty else pd.Series(dtype=float)
    for row in d.pools.itertuples(index=False):
        nodes = [_int(m.nodes[(row.p, t)]) for t in range(1, d.horizon + 1)]
        if not any(nodes):
            continue
        fabric = [m.fabric.get((row.p, t), {}) for t in range(1, d.horizon + 1)]
        multi = row.networked and is_on(m.multi_leaf[row.p])
        topology = "none (standalone nodes)" if not row.networked else ("leaf-spine" if multi else "one switch")
        out.append(
            FleetPool(
                name=row.name,
                gpu=row.gpu,
                gpus_per_node=int(row.gpus_per_node),
                nic=_text(row.nic),
                nics_per_node=int(row.nics_per_node),
                fabric=row.fabric,
                switch=_text(row.switch),
                node_gbps=float(row.node_gbps),
                topology=topology,
                nodes=nodes,
                installed=[int(installed.get((row.p, t), 0)) for t in range(1, d.horizon + 1)],
                gpus_busy=[float(busy.get((row.p, t), 0.0)) for t in range(1, d.horizon + 1)],
                leaves=[_int(f["L"]) if f else 0 for f in fabric],
                spines=[_int(f["S"]) if f else 0 for f in fabric],
            )
        )
    return out


def _text(value) -> str | None:
    """A table cell that may be missing (NaN or None in pandas) as text or None."""
    return value if isinstance(value, str) else None


def _gpus_busy(m: milp.Model) -> dict[tuple[int, int], float]:
    """GPUs held per (pool, period): training runs' nodes and serving replicas."""
    d = m.data
    busy: dict[tuple[int, int], float] = {}
    gpus = d.pools.set_index("p")["gpus_per_node"]
    for (kind, r, t), expr in m.held.items():
        if kind == "pool":
            busy[(r, t)] = busy.get((r, t), 0.0) + gpus[r] * (pulp.value(expr) or 0.0)
    for (v, t), g in m.replicas.items():
        row = d.serving.loc[v]
        if row["kind"] == "pool":
            key = (int(row["resource"]), t)
            busy[key] = busy.get(key, 0.0) + row["replica_gpus"] * (g.value() or 0.0)
    return busy


def _cash_flow(m: milp.Model) -> list[FleetCashFlow]:
    d = m.data
    out, cumulative = [], 0.0
    periods = d.periods.set_index("t")
    site = d.site.set_index("t")["kw"]
    for t in range(1, d.horizon + 1):
        parts = {k: float(pulp.value(m.cash[k][t]) or 0.0) for k in m.cash}
        total = sum(parts.values())
        cumulative += total
        discount = float(periods.at[t, "discount"])
        kw = site.get(t, np.nan)
        out.append(
            FleetCashFlow(
                period=d.labels[t - 1],
                servers_usd=parts["servers"],
                network_usd=parts["network"],
                energy_usd=parts["energy"],
                colocation_usd=parts["colocation"],
                cloud_usd=parts["cloud"],
                total_usd=total,
                discount=discount,
                present_value_usd=total * discount,
                cumulative_usd=cumulative,
                power_kw=float(pulp.value(m.power_w[t]) or 0.0) / 1e3,
                site_kw=None if np.isnan(kw) else float(kw),
            )
        )
    return out


def _residual(m: milp.Model) -> float:
    """Value left at the end, discounted: sum_t (discount_t - capex_weight_t) x capex_t."""
    periods = m.data.periods.set_index("t")
    total = 0.0
    for t in range(1, m.data.horizon + 1):
        capex = float(pulp.value(m.cash["servers"][t] + m.cash["network"][t]) or 0.0)
        total += (periods.at[t, "discount"] - periods.at[t, "capex_weight"]) * capex
    return total


def _pool_cost(m: milp.Model) -> dict[int, float]:
    """Each pool's discounted cost: its capex net of residual value, and the energy and colocation of its
    nodes and network (the objective's terms, split by pool)."""
    d = m.data
    costs, periods = d.fleet.costs, d.periods.set_index("t")
    supply, pools = d.supply.set_index(["o", "p"]), d.pools.set_index("p")
    usd_per_w_period = HOURS_PER_PERIOD * costs.pue * costs.usd_per_kwh / 1e3
    colo_per_w_period = costs.colocation_usd_per_kw_month * milp.MONTHS_PER_PERIOD / 1e3
    cost: dict[int, float] = {int(p): 0.0 for p in d.pools["p"]}
    for (o, p, t), x in m.buy.items():
        units = x.value() or 0.0
        if units:
            cost[p] += periods.at[t, "capex_weight"] * units * float(supply.at[(o, p), "extra_usd"])
            watts = units * float(supply.at[(o, p), "node_w"])
            later = periods.loc[list(d.in_service(t))]
            draw = costs.server_draw_fraction * usd_per_w_period + colo_per_w_period
            cost[p] += watts * draw * float(later["discount"].sum())
    spend = _spend_by_pool(m)
    for (p, t), usd in spend.items():
        cost[p] += periods.at[t, "capex_weight"] * usd
    installed_w = d.installed.drop_duplicates("entry").set_index("entry")
    for (i, t), a in m.active.items():
        watts = (a.value() or 0.0) * float(installed_w.at[i, "node_w"])
        draw = costs.server_draw_fraction * usd_per_w_period + colo_per_w_period
        cost[int(installed_w.at[i, "p"])] += watts * draw * periods.at[t, "discount"]
    for (p, t), now in m.fabric.items():
        row, before = pools.loc[p], m.fabric.get((p, t - 1))
        owned = milp.owned_fabric(row)
        values = {k: now[k].value() or 0.0 for k in now}
        added = {k: values[k] - ((before[k].value() or 0.0) if before else owned[k]) for k in now}
        capex = _network_total(row, added, "usd")
        watts = _network_total(row, values, "w")
        cost[p] += periods.at[t, "capex_weight"] * capex
        cost[p] += watts * (usd_per_w_period + colo_per_w_period) * periods.at[t, "discount"]
    return cost


def _network_total(row, counts: dict, unit: str) -> float:
    """USD or watts of switches (leaves and spines), switch cages' modules and leaf-spine links."""
    return (
        row[f"switch_{unit}"] * (counts["L"] + counts["S"])
        + row[f"cage_{unit}"] * counts["K"]
        + row[f"uplink_{unit}"] * counts["U"]
    )


def _spend_by_pool(m: milp.Model) -> dict[tuple[int, int], float]:
    """Each offer's tiered server spend in a period, split over the pools it fed in proportion to units."""
    out: dict[tuple[int, int], float] = {}
    for (o, t), spend in m.spend.items():
        usd = float(pulp.value(spend) or 0.0)
        units = {p: (x.value() or 0.0) for (oo, p, tt), x in m.buy.items() if oo == o and tt == t}
        total = sum(units.values())
        for p, u in units.items():
            if u:
                out[(p, t)] = out.get((p, t), 0.0) + usd * u / total
    return out


def _attribution(m: milp.Model, pools: list[FleetPool], jobs: list[FleetJobRun]) -> list[FleetAttribution]:
    d = m.data
    cost = _pool_cost(m)
    gpu_periods = {}
    for p in d.pools["p"]:
        gpus = int(d.pools.at[p, "gpus_per_node"])
        gpu_periods[int(p)] = sum(gpus * (pulp.value(m.nodes[(p, t)]) or 0.0) for t in range(1, d.horizon + 1))
    rate = {p: cost[p] / gpu_periods[p] if gpu_periods[p] else 0.0 for p in cost}
    usage: dict[str, dict] = {}
    for row in _usage(m):
        entry = usage.setdefault(row["workload"], {"kind": row["kind"], "gpu_periods": 0.0, "owned": 0.0, "cloud": 0.0})
        if row["pool"] is not None:
            entry["gpu_periods"] += row["gpus"]
            entry["owned"] += row["gpus"] * rate[row["pool"]]
        entry["cloud"] += row["cloud_pv"]
    penalty = {r.job: r.penalty_usd for r in jobs}
    out = []
    for name, u in usage.items():
        p = penalty.get(name, 0.0)
        out.append(
            FleetAttribution(workload=name, kind=u["kind"], gpu_periods=u["gpu_periods"], owned_usd=u["owned"],
                             cloud_usd=u["cloud"], penalty_usd=p, total_usd=u["owned"] + u["cloud"] + p)
        )  # fmt: skip
    busy = sum(u["owned"] for u in usage.values())
    idle = sum(cost.values()) - busy
    idle_gpu = sum(gpu_periods.values()) - sum(u["gpu_periods"] for u in usage.values())
    # whole serving instances are billed; services pay for the share their replicas fill, the rest is idle
    served = sum(u["cloud"] for u in usage.values() if u["kind"] == "inference")
    idle_cloud = max(_serving_cloud_bill(m) - served, 0.0)
    if abs(idle) > 0.5 or idle_gpu > 1e-6 or idle_cloud > 0.5:
        out.append(FleetAttribution(workload="(idle capacity)", kind="idle", gpu_periods=idle_gpu, owned_usd=idle,
                                    cloud_usd=idle_cloud, penalty_usd=0.0, total_usd=idle + idle_cloud))  # fmt: skip
    return out


def _serving_cloud_bill(m: milp.Model) -> float:
    """The discounted bill of every serving instance held (the objective's term)."""
    discount = m.data.periods.set_index("t")["discount"]
    return sum(float(discount[t]) * (i.value() or 0.0) * usd for t, terms in milp.serving_bills(m).items()
               for i, usd in terms)  # fmt: skip


def _usage(m: milp.Model) -> list[dict]:
    """GPU-periods on each pool and discounted cloud bills, per workload."""
    d = m.data
    rows = []
    periods = d.periods.set_index("t")
    for c, run in m.run.items():
        if not is_on(run):
            continue
        col, opt = d.columns.loc[c], d.options.loc[int(d.columns.at[c, "k"])]
        name = d.jobs.at[int(col["j"]), "name"]
        row = {"workload": name, "kind": "training", "pool": None, "gpus": 0, "cloud_pv": float(col["cloud_pv"])}
        if opt["kind"] == "pool":
            periods_held = int(col["finish"] - col["start"] + 1)
            row.update(pool=int(opt["resource"]), gpus=int(opt["n"] * opt["gpus_per_node"]) * periods_held)
        rows.append(row)
    rates = d.cloud.set_index("c")["usd_per_h"] if not d.cloud.empty else {}
    for (v, t), g in m.replicas.items():
        replicas = g.value() or 0.0
        if not replicas:
            continue
        row = d.serving.loc[v]
        name = d.services.at[int(row["s"]), "name"]
        if row["kind"] == "pool":
            rows.append({"workload": name, "kind": "inference", "pool": int(row["resource"]),
                         "gpus": replicas * row["replica_gpus"], "cloud_pv": 0.0})  # fmt: skip
        else:
            # serving instances are whole; each service pays for the share of instances its replicas fill
            share = replicas * row["replica_gpus"] / row["gpus_per_node"]
            bill = share * float(rates[int(row["resource"])]) * HOURS_PER_PERIOD * periods.at[t, "discount"]
            rows.append({"workload": name, "kind": "inference", "pool": None, "gpus": 0, "cloud_pv": bill})
    return rows


def _binding(m: milp.Model, jobs: list[FleetJobRun], cash: list[FleetCashFlow]) -> list[str]:
    d, out = m.data, []
    for r in jobs:
        if r.late_periods:
            out.append(f"deadline: {r.job} finishes {r.finish}, {r.late_periods} period(s) late "
                       f"(penalty {format_usd(r.penalty_usd)})")  # fmt: skip
        elif r.finish == r.deadline:
            out.append(f"deadline: {r.job} finishes in its deadline period {r.deadline}")
    for t, row in enumerate(cash, start=1):
        node_kw = _smallest_node_kw(m, t)
        if row.site_kw is not None and row.site_kw - row.power_kw < node_kw:
            out.append(
                f"site power: {row.period} uses {row.power_kw:,.0f} of {row.site_kw:,.0f} kW (no room for one "
                f"more {node_kw:.1f} kW node of a pool in service)"
            )
    for t, racks in d.site[["t", "racks"]].itertuples(index=False):
        if not np.isnan(racks):
            used = sum(_int(R) for (p, tt), R in m.racks.items() if tt == t)
            if racks and used >= BINDING_SHARE * racks:
                out.append(f"racks: {d.labels[t - 1]} uses {used} of {int(racks)}")
    out += _stock_and_tiers(m)
    for r, t in m.constraints["quota"]:
        used = _int(m.held.get(("cloud", r, t), 0)) + _int(m.instances.get((r, t), 0))
        if used >= d.cloud.at[r, "quota"]:
            row = d.cloud.loc[r]
            where = f"{row['provider']} {row['instance']}"
            out.append(f"cloud quota: {where} at its {row['quota']} instances in {d.labels[t - 1]}")
    for row in d.pools.itertuples(index=False):
        if any(_int(m.nodes[(row.p, t)]) >= row.max_nodes for t in range(1, d.horizon + 1)) and row.max_nodes:
            out.append(f"pool size: {row.name} at its {int(row.max_nodes)}-node limit")
    return out


def _smallest_node_kw(m: milp.Model, t: int) -> float:
    """The least nameplate kW one more node of a pool in service in t would add (any pool when none is):
    what the site must have left for its power not to bind."""
    d = m.data
    in_service = {p for (p, tt), n in m.nodes.items() if tt == t and _int(n) > 0}
    rows = d.supply[d.supply["p"].isin(in_service)] if in_service else d.supply
    watts = rows["node_w"].tolist() or d.installed["node_w"].tolist()
    return min(watts) / 1e3 if watts else 0.0


def _stock_and_tiers(m: milp.Model) -> list[str]:
    d, out = m.data, []
    for o, t in m.constraints["stock"]:
        cap = int(d.stock[(d.stock["o"] == o) & (d.stock["t"] == t)]["units"].iloc[0])
        bought = sum(_int(x) for (oo, _, tt), x in m.buy.items() if oo == o and tt == t)
        if cap and bought >= cap:
            out.append(f"stock: all {cap} {d.offers.at[o, 'server']} available in {d.labels[t - 1]} bought")
    orders = defaultdict(float)  # (offer, period) -> units ordered, over every band
    for (o, t, _), (q, _) in m.bands.items():
        orders[(o, t)] += q.value() or 0
    for (o, t, k), (q, on) in m.bands.items():
        lo = d.tiers[(d.tiers["o"] == o) & (d.tiers["k"] == k)]["lo"].iloc[0]
        # all-units: q is the whole order in the band it prices; incremental: q is only the band's share
        units = orders[(o, t)] if d.offers.at[o, "tier_kind"] == "incremental" else (q.value() or 0)
        if is_on(on) and k > 0 and abs(units - lo) < 0.5:
            out.append(f"volume tier: the {d.labels[t - 1]} order of {d.offers.at[o, 'server']} is exactly {int(lo)} "
                       "units, the tier's threshold")  # fmt: skip
    return out


def assumptions(d: ft.FleetData) -> list[str]:
    c, b = d.fleet.costs, d.fleet.buy
    return [
        "a period is a quarter (2,190 h); a training run holds its nodes for whole quarters, contiguously, "
        "at one node count, on one pool or cloud offering",
        f"discount rate {c.discount_rate:.1%} a year, cash at the start of each quarter",
        f"residual value: {b.residual.replace('_', ' ')} over {b.life_years:g} years, credited at the horizon's end",
        f"energy: servers draw {c.server_draw_fraction:.0%} of nameplate whether busy or idle, the network "
        f"nameplate; PUE {c.pue:g}; ${c.usd_per_kwh:g}/kWh",
        f"colocation ${c.colocation_usd_per_kw_month:g} per nameplate kW-month",
        "pool fabrics: one switch, or two tiers non-blocking (leaf-spine); switches are never sold back",
        "serving: output tokens/s per replica on planner serve's engine (planner/model/serving.py): prefill and "
        "decode with the TPOT SLO at the p90 where a service gives input_tokens, else its decode step alone",
        "cloud: training bills are instance-hours at the cheapest allowed pricing model; serving instances are "
        "held all quarter at the cheapest allowed rate",
    ]


def empty(data, solved: Solved, build_s, calibration, failures, relaxations) -> FleetPlan:
    return FleetPlan(
        name=data.fleet.name, status="infeasible", **solver_fields(solved), gap_proven=None,
        build_seconds=build_s, objective_usd=None, residual_usd=0.0, penalties_usd=0.0,
        model_size=model_size(solved.model), enumeration_log10=ft.enumeration_log10(data), periods=data.labels,
        purchases=[], network=[], pools=[], jobs=[], placements=[], cash_flow=[], attribution=[], binding=[],
        infeasible=failures, relaxations=relaxations, assumptions=assumptions(data), calibration=calibration.source,
    )  # fmt: skip
