"""`planner cloud`: rent instead of buy. Which instance type, how many, which pricing, and the cost to train.

Offerings come from cloud.csv (one row per provider x instance x region, with on-demand, spot and reserved
$/h). The same performance model as the purchase predicts each offering's throughput with its own fabric
constants (EFA, GPUDirect-TCPX, TCP: planner/assumptions.py), through the same feasibility tests
(planner.workload). An offering without an inter-node fabric, or whose bandwidth the catalog does not give,
can only run on one instance. The choice itself is the rental MILP of planner/optimize/rent.py.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from planner import perf
from planner.calibration import Calibration
from planner.catalog import Catalog
from planner.costing import best_mix, energy_usd_per_hour, hourly_rate
from planner.optimize import rent
from planner.optimize.rent import RentOption, RentSolution
from planner.results import BuyVsRent, CloudChoice, CloudPlan, ExcludedOffering, RankedOffering
from planner.rows import CloudRow
from planner.scenario import Scenario
from planner.units import HOURS_PER_MONTH, SECONDS_PER_HOUR
from planner.workload import (
    Requirements,
    feasible,
    fits_memory,
    gpu_columns,
    intra_node_bandwidth,
    meets_target,
    perf_frame,
    scenario_training,
)


def offerings(catalog: Catalog, scenario: Scenario) -> list[CloudRow]:
    o = scenario.cloud
    rows = catalog.items("cloud")
    if o.providers:
        rows = [r for r in rows if r.provider.lower() in {p.lower() for p in o.providers}]
    if o.regions:
        rows = [r for r in rows if r.region.lower() in {p.lower() for p in o.regions}]
    if o.instances:
        rows = [r for r in rows if r.instance.lower() in {p.lower() for p in o.instances}]
    if scenario.constraints.gpus:
        names = {catalog.gpu(g).name for g in scenario.constraints.gpus}
        rows = [r for r in rows if r.gpu in names]
    return rows


def quota(scenario: Scenario, row: CloudRow) -> int:
    o = scenario.cloud
    for key in (f"{row.provider}/{row.instance}", row.instance):
        for name, value in o.quota.items():
            if name.lower() == key.lower():
                return min(value, o.max_instances)
    return o.max_instances


def multi_node_fabric(row: CloudRow) -> str | None:
    """The fabric a multi-instance job uses, or None when the offering cannot span instances."""
    return None if row.fabric == "none" or row.internode_gbps is None else row.fabric


def _evaluate(catalog, work, row: CloudRow, mb: int, counts: list[int], calibration, confidence) -> pd.DataFrame:
    gpu = gpu_columns(catalog, row.gpu)
    clusters = {
        **gpu,
        "gpus_per_node": row.gpus,
        # NVLink as in a purchased server of the same GPU and size, so buy and rent are modelled alike
        "intra_node_gb_per_s": intra_node_bandwidth(catalog, gpu["gpu"], row.gpus),
        "micro_batch": mb,
        "node_gbps": row.internode_gbps or 1.0,
        "fabric": multi_node_fabric(row) or "ib",  # single instance: no network term
        "gpus": np.asarray(counts) * row.gpus,
    }
    return perf.evaluate(perf_frame(work, clusters), calibration, confidence)


def build_options(
    catalog: Catalog, scenario: Scenario, calibration: Calibration
) -> tuple[list[RentOption], list[ExcludedOffering]]:
    """Feasible options, and each excluded offering with the reason."""
    work = scenario_training(catalog, scenario)
    req = Requirements.of(scenario)
    options, excluded = [], []
    for row in offerings(catalog, scenario):
        prices = [p for p in scenario.cloud.pricing if hourly_rate(row, p) is not None]
        if not prices:
            excluded.append(_excluded(row, "no price for the allowed pricing models"))
            continue
        if prices == ["spot"] and scenario.cloud.spot_share_max < 1:
            excluded.append(_excluded(row, "spot pricing only, but spot_share_max < 1 keeps some instances off spot"))
            continue
        found, reasons = _options_of(catalog, scenario, work, req, row, calibration)
        options += found
        if not found:
            excluded.append(_excluded(row, _one_reason_per_kind(reasons)))
    return options, excluded


def _options_of(catalog, scenario, work, req: Requirements, row: CloudRow, calibration):
    cap = quota(scenario, row) if multi_node_fabric(row) else min(1, quota(scenario, row))
    counts = list(range(1, cap + 1))
    if req.gpus is not None:
        fixed = req.gpus / row.gpus
        counts = [int(fixed)] if fixed.is_integer() and 1 <= fixed <= cap else []
    if not counts:
        return [], ["GPU count not reachable in whole instances within quota"]
    options, reasons = [], []
    for mb in scenario.workload.micro_batches:
        ev = _evaluate(catalog, work, row, mb, counts, calibration, req.confidence)
        good = [c for c, keep in zip(counts, feasible(ev, req), strict=True) if keep]
        if not good:
            reasons.append(_why_not(ev, req, row, mb))
            continue
        figures = {c: ev.iloc[counts.index(c)].to_dict() for c in good}
        hours = {c: (req.tokens / figures[c]["tokens_per_s"] / SECONDS_PER_HOUR if req.tokens else 1.0) for c in good}
        options.append(RentOption(row, mb, good, hours, figures))
    return options, reasons


def _one_reason_per_kind(reasons: list[str]) -> str:
    """Micro-batches fail for the same kind of reason: keep one per kind, the most telling: the largest
    micro-batch for bandwidth and memory (the best it gets), the smallest for a global batch (most instances)."""
    by_kind: dict[str, str] = {}
    for reason in reasons:
        kind = reason.split(":")[0]
        if not (kind.startswith("global batch") and kind in by_kind):
            by_kind[kind] = reason
    return "; ".join(by_kind.values()) or "no feasible configuration"


def _excluded(row: CloudRow, reason: str) -> ExcludedOffering:
    return ExcludedOffering(provider=row.provider, instance=row.instance, region=row.region, gpu=row.gpu, reason=reason)


def _why_not(ev: pd.DataFrame, req: Requirements, row: CloudRow, mb: int) -> str:
    fits = fits_memory(ev)
    fast = meets_target(ev, req)
    single = multi_node_fabric(row) is None
    what = "no inter-node fabric" if row.fabric == "none" else "inter-node bandwidth not in the catalog"
    if not fits.any():
        if single:
            return f"{what}: single instance only, and the model does not fit on its {row.gpus} GPUs"
        return f"memory: does not fit on {int(ev['gpus'].max())} GPUs (the most the quota allows)"
    if not (fits & fast).any():
        best = ev.loc[fits, "achieved_tflops_per_gpu"].max()
        return (
            f"bandwidth: where the model fits, at most {best:.0f} TFLOPs/GPU < target "
            f"{req.target_tflops:g} ({row.fabric}, {row.internode_gbps or 0:g} Gbps)"
        )
    speed = ev["tokens_per_s"] >= req.tokens_per_s if req.tokens_per_s is not None else True
    if not (fits & fast & speed).any():
        if single:
            return f"{what}: single instance only, too slow for the deadline"
        return (
            f"deadline: at most {ev['tokens_per_s'].max():,.0f} tokens/s within quota < {req.tokens_per_s:,.0f} needed"
        )
    smallest = int(ev.loc[fits & fast & speed, "gpus"].min()) // row.gpus
    return (
        f"global batch {req.global_batch}: no instance count from {smallest} up gives a whole grad_accum at "
        f"micro-batch {mb} (at most {req.global_batch // (row.gpus * mb)} instances)"
    )


# ---------------------------------------------------------------- choice


def brute_force(options: list[RentOption], scenario: Scenario) -> tuple[float, int, int] | None:
    """(cost, option index, count) by enumeration: the reference for the MILP."""
    found = None
    for i, o in enumerate(options):
        for n in o.counts:
            hourly, _ = best_mix(o.row, n, scenario.cloud.pricing, scenario.cloud.spot_share_max)
            cost = hourly * o.hours[n]
            if not math.isfinite(cost):
                continue
            if scenario.constraints.budget_usd is not None and cost > scenario.constraints.budget_usd + 1e-6:
                continue
            if found is None or cost < found[0] - 1e-6:
                found = (cost, i, n)
    return found


def solve_cloud(options: list[RentOption], scenario: Scenario, solver: str = "auto") -> RentSolution | None:
    """The rental MILP; None when infeasible (the budget)."""
    return rent.optimize(options, scenario.cloud, scenario.constraints.budget_usd, solver)


# ---------------------------------------------------------------- ranking


def ranking(options: list[RentOption], scenario: Scenario) -> pd.DataFrame:
    """Per offering and pure pricing model, its cheapest micro-batch and count: cost, days, $/PFLOP-day."""
    records = []
    for o in options:
        for p in scenario.cloud.pricing:
            rate = hourly_rate(o.row, p)
            if rate is None or (p == "spot" and scenario.cloud.spot_share_max < 1):
                continue
            n = o.counts[0]
            f = o.figures[n]
            model_pflops = f["model_flops_per_gpu"] / f["t_step_s"] * f["gpus"] / 1e15
            records.append(
                {
                    "provider": o.row.provider,
                    "instance": o.row.instance,
                    "region": o.row.region,
                    "gpu": o.row.gpu,
                    "pricing": p,
                    "instances": n,
                    "gpus": int(f["gpus"]),
                    "micro_batch": o.micro_batch,
                    "fabric": o.row.fabric,
                    "tflops_per_gpu": f["achieved_tflops_per_gpu"],
                    "days": o.hours[n] / 24 if scenario.requirement.tokens else None,
                    "usd_per_h": rate * n,
                    "cost_usd": rate * n * o.hours[n],
                    "usd_per_pflop_day": rate * n * 24 / model_pflops,
                }
            )
    frame = pd.DataFrame(records)
    if frame.empty:
        return frame
    frame = frame.sort_values("cost_usd").drop_duplicates(["provider", "instance", "region", "pricing"])
    return frame.reset_index(drop=True)


# ---------------------------------------------------------------- the whole answer


def run(catalog: Catalog, scenario: Scenario, calibration: Calibration, solver: str = "auto") -> CloudPlan:
    """Ranking, exclusions and the MILP's choice."""
    options, excluded = build_options(catalog, scenario, calibration)
    table = ranking(options, scenario)
    solution = solve_cloud(options, scenario, solver)
    return CloudPlan(
        scenario=scenario.name,
        cost_basis="cost to train" if scenario.requirement.tokens else "cost per hour",
        choice=describe(solution.option, solution.count, solution.mix, solution.cost_usd, scenario, "optimal")
        if solution
        else None,
        ranking=[RankedOffering(**r) for r in table.to_dict("records")],
        excluded=excluded,
        calibration=calibration.source,
    )


def describe(o: RentOption, n: int, mix: dict, cost_usd: float, scenario: Scenario, status: str) -> CloudChoice:
    f = o.figures[n]
    trains = scenario.requirement.tokens is not None
    return CloudChoice(
        provider=o.row.provider,
        instance=o.row.instance,
        region=o.row.region,
        gpu=o.row.gpu,
        instances=n,
        gpus=int(f["gpus"]),
        micro_batch=o.micro_batch,
        pricing_mix=mix,
        fabric=o.row.fabric,
        internode_gbps=o.row.internode_gbps,
        usd_per_h=sum(hourly_rate(o.row, p) * k for p, k in mix.items()),
        hours=o.hours[n] if trains else None,
        days=o.hours[n] / 24 if trains else None,
        cost_usd=cost_usd,
        tflops_per_gpu=f["achieved_tflops_per_gpu"],
        mfu=f["mfu"],
        tokens_per_s=f["tokens_per_s"],
        memory_per_gpu_gib=f["memory_per_gpu_gib"],
        binding=str(f["binding"]),
        status=status,
    )


def compare(plan_cost, plan_tokens_per_s: float, cloud_choice: CloudChoice, scenario: Scenario) -> BuyVsRent:
    """Buying vs renting the same throughput: months of full use after which buying is cheaper."""
    energy_per_h = energy_usd_per_hour(plan_cost.draw_kw, scenario.objective)
    rent_per_h = cloud_choice.usd_per_h * plan_tokens_per_s / cloud_choice.tokens_per_s
    saving_per_month = (rent_per_h - energy_per_h) * HOURS_PER_MONTH
    months = plan_cost.capex_usd / saving_per_month if saving_per_month > 0 else None
    return BuyVsRent(
        purchase_capex_usd=plan_cost.capex_usd,
        purchase_energy_usd_per_h=energy_per_h,
        purchase_tco_usd=plan_cost.tco_usd,
        rent_same_throughput_usd_per_h=rent_per_h,
        break_even_months=months,
        cloud=cloud_choice,
        note=(
            f"buying pays off after {months:.1f} months of full use"
            if months is not None
            else "renting costs less per hour than the purchase's energy: buying never pays off"
        ),
    )


def cheapest_per_token(
    catalog: Catalog, scenario: Scenario, calibration: Calibration, tokens_per_s: float
) -> CloudChoice | None:
    """The offering, count and pricing with the lowest cost per token among those reaching `tokens_per_s`
    (else among all), whatever the deadline: what renting the purchase's throughput would cost when no
    offering meets the scenario itself."""
    relaxed = scenario.model_copy(
        update={
            "requirement": scenario.requirement.model_copy(
                update={"tokens": None, "days": None, "gpus": None, "min_tokens_per_s": 1.0}
            )
        }
    )
    options, _ = build_options(catalog, relaxed, calibration)
    rows = []
    for o in options:
        for n in o.counts:
            hourly, mix = best_mix(o.row, n, relaxed.cloud.pricing, relaxed.cloud.spot_share_max)
            if hourly < math.inf:
                rows.append((o.figures[n]["tokens_per_s"], hourly, o, n, mix))
    if not rows:
        return None
    reaching = [r for r in rows if r[0] >= tokens_per_s * (1 - 1e-9)]
    # reaching the purchase's throughput: cheapest per token; else the fastest (least extrapolation)
    pick = min(reaching, key=lambda r: r[1] / r[0]) if reaching else max(rows, key=lambda r: (r[0], -r[1]))
    _, hourly, o, n, mix = pick
    described = describe(o, n, mix, hourly, relaxed, "closest")
    update = {"meets_requirement": False}
    if scenario.requirement.tokens:
        hours = scenario.requirement.tokens / described.tokens_per_s / SECONDS_PER_HOUR
        update.update(hours=hours, days=hours / 24, cost_usd=described.usd_per_h * hours)
    return described.model_copy(update=update)
