"""`planner cloud`: rent instead of buy. Which instance type, how many, which pricing, and the cost to train.

Offerings come from cloud.csv (one row per provider x instance x region, with on-demand, spot and reserved
$/h). The same performance model as the purchase predicts each offering's throughput with its own fabric
constants (EFA, GPUDirect-TCPX, TCP: planner/assumptions/model.py), through the same feasibility tests
(planner.model.workload). An offering without an inter-node fabric, or whose bandwidth the catalog does not give,
can only run on one instance. The choice itself is the rental MILP of planner/optimize/rent.py.

Pricing models keep their terms: a job runs on one pricing model unless cloud.mix_pricing; spot is priced
with its preemptions (planner.model.reliability) and kept out of jobs spanning instances unless
cloud.spot_multi_instance, since one preemption stalls every rank of a synchronous job; a Capacity Block
(reserved_kind capacity-block) bills whole blocks of the durations AWS sells. Every job's wall-clock time
counts its goodput, and a deadline is met with the scenario's schedule margin.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from planner.base.units import HOURS_PER_MONTH, SECONDS_PER_HOUR
from planner.catalog.load import Catalog
from planner.catalog.rows import CloudRow
from planner.hardware.costing import (
    billed_hours,
    energy_usd_per_hour,
    hourly_rate,
    is_capacity_block,
    running_usd_per_hour,
)
from planner.inputs.scenario import CloudOptions, Scenario
from planner.model import performance as perf
from planner.model import reliability
from planner.model.calibration import Calibration
from planner.model.workload import (
    Requirements,
    feasible,
    fits_memory,
    gpu_columns,
    intra_node_bandwidth,
    meets_target,
    perf_frame,
    scenario_training,
)
from planner.optimize import rent
from planner.optimize.rent import RentOption, RentSolution, Variant, cheapest_split
from planner.results import BuyVsRent, CloudChoice, CloudPlan, ExcludedOffering, RankedOffering


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


def quota(o: CloudOptions, row: CloudRow) -> int:
    """The most instances of this offering at once: its quota (by provider/instance or instance), at most
    max_instances."""
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
        found = [o for o in (_with_variants(o, scenario, work.params, req) for o in found) if o.counts]
        if not found and not reasons:
            reasons = [_terms_reason(row, scenario)]
        options += found
        if not found:
            excluded.append(_excluded(row, _one_reason_per_kind(reasons)))
    return options, excluded


# ---------------------------------------------------------------- pricing terms: variants of a count


def _with_variants(o: RentOption, scenario: Scenario, params: float, req: Requirements) -> RentOption:
    """The option with, per count, the variants its pricing terms allow (counts without any dropped)."""
    variants = {n: _variants(o, n, scenario, params, req) for n in o.counts}
    counts = [n for n in o.counts if variants[n]]
    return RentOption(o.row, o.micro_batch, counts, o.hours, o.figures, {n: variants[n] for n in counts})


def spot_allowed(n: int, cloud) -> bool:
    """Spot may serve a single-instance job; a job spanning instances only when the user opts in."""
    return n == 1 or cloud.spot_multi_instance


def _variants(o: RentOption, n: int, scenario: Scenario, params: float, req: Requirements) -> list[Variant]:
    """One variant per pricing model (and, with mix_pricing, a mix without spot and one with the largest
    spot share), each with its wall-clock and billed hours; those missing the deadline are dropped."""
    c = scenario.cloud
    offered = [p for p in c.pricing if hourly_rate(o.row, p) is not None]
    others = tuple(p for p in offered if p != "spot")
    spot_most = math.floor(c.spot_share_max * n + 1e-9) if "spot" in offered and spot_allowed(n, c) else 0
    plans = [((p,), 0) for p in others] + ([((), n)] if spot_most == n else [])
    if c.mix_pricing:
        plans += [(others, 0)] if len(others) > 1 else []
        plans += [(others, spot_most)] if 0 < spot_most < n and others else []
    found = (_variant(o, n, pricings, spot, scenario, params, req) for pricings, spot in plans)
    return [v for v in found if v is not None]


def _variant(
    o: RentOption,
    n: int,
    pricings: tuple[str, ...],
    spot: int,
    scenario: Scenario,
    params: float,
    req: Requirements,
) -> Variant | None:
    """n instances, `spot` of them on spot and the rest on `pricings`: the job's wall-clock hours at its
    goodput (spot preemptions included) and the hours each pricing bills; None when the deadline (less its
    margin) is missed or no pricing can sell the job (a run longer than any Capacity Block, or more
    instances than Capacity Blocks sell)."""
    trains = req.tokens is not None
    extra = (reliability.spot_interruptions(scenario.cloud, spot),) if spot else ()
    g = reliability.goodput(scenario.reliability, params, n, extra) if trains else None
    wall = o.hours[n] / g.fraction if g else o.hours[n]
    r = scenario.requirement
    if trains and wall > r.days * (1 - r.schedule_margin) * 24 * (1 + 1e-9):
        return None
    billed = {p: billed_hours(o.row, p, wall) if trains else wall for p in pricings}
    pricings = tuple(p for p in pricings if billed[p] is not None)
    if not pricings and spot < n:
        return None
    if pricings == ("reserved",) and is_capacity_block(o.row, "reserved") and n - spot > rent.CAPACITY_BLOCK_CAP:
        return None
    billed = {p: billed[p] for p in pricings} | ({"spot": wall} if spot else {})
    interruptions = g.interruptions_per_day * wall / 24 if g else 0.0
    return Variant(pricings, spot, wall, billed, g.fraction if g else 1.0, interruptions)


def _terms_reason(row: CloudRow, scenario: Scenario) -> str:
    """Why an offering that is fast enough has no variant: the pricing terms or goodput."""
    c = scenario.cloud
    offered = [p for p in c.pricing if hourly_rate(row, p) is not None]
    if offered == ["spot"] and not c.spot_multi_instance:
        return "spot only: excluded from jobs spanning instances (set cloud.spot_multi_instance to price preemptions)"
    if all(is_capacity_block(row, p) for p in offered):
        return "capacity blocks only, and the run is longer than the longest block (182 days)"
    return "deadline: too slow once interruptions (goodput) and the schedule margin are counted"


def _options_of(catalog, scenario, work, req: Requirements, row: CloudRow, calibration):
    cap = quota(scenario.cloud, row) if multi_node_fabric(row) else min(1, quota(scenario.cloud, row))
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
            for v in o.variants[n]:
                cost, _ = cheapest_split(o.row, n, v)
                if not math.isfinite(cost):
                    continue
                if scenario.constraints.budget_usd is not None and cost > scenario.constraints.budget_usd + 1e-6:
                    continue
                if found is None or cost < found[0] - 1e-6:
                    found = (cost, i, n)
    return found


def solve_cloud(options: list[RentOption], scenario: Scenario, solver: str = "auto") -> RentSolution | None:
    """The rental MILP; None when infeasible (the budget)."""
    return rent.optimize(options, scenario.constraints.budget_usd, solver)


# ---------------------------------------------------------------- ranking


def ranking(options: list[RentOption], scenario: Scenario) -> pd.DataFrame:
    """Per offering and pure pricing model, its cheapest micro-batch and count: cost (as billed), days
    (wall-clock, goodput counted), $/PFLOP-day."""
    records = []
    trains = scenario.requirement.tokens is not None
    for o in options:
        for n in o.counts:
            for v in o.variants[n]:
                if v.pure is not None:
                    records.append(_ranked(o, n, v, trains))
    frame = pd.DataFrame(records)
    if frame.empty:
        return frame
    frame = frame.sort_values("cost_usd", kind="stable").drop_duplicates(["provider", "instance", "region", "pricing"])
    return frame.reset_index(drop=True)


def _ranked(o: RentOption, n: int, v: Variant, trains: bool) -> dict:
    p, f = v.pure, o.figures[n]
    rate = hourly_rate(o.row, p)
    model_pflops = f["model_flops_per_gpu"] / f["t_step_s"] * f["gpus"] / 1e15
    return {
        "provider": o.row.provider,
        "instance": o.row.instance,
        "region": o.row.region,
        "gpu": o.row.gpu,
        "pricing": pricing_label(o.row, p),
        "instances": n,
        "gpus": int(f["gpus"]),
        "micro_batch": o.micro_batch,
        "fabric": o.row.fabric,
        "tflops_per_gpu": f["achieved_tflops_per_gpu"],
        "days": v.wall_hours / 24 if trains else None,
        "billed_days": v.billed_hours[p] / 24 if trains else None,
        "usd_per_h": rate * n,
        "cost_usd": rate * n * v.billed_hours[p],
        "usd_per_pflop_day": rate * n * 24 / model_pflops,
        "goodput": v.goodput if trains else None,
    }


def pricing_label(row: CloudRow, pricing: str) -> str:
    """The pricing model as sold: reserved rows of kind capacity-block are Capacity Blocks."""
    return "capacity-block" if is_capacity_block(row, pricing) else pricing


# ---------------------------------------------------------------- the whole answer


def run(catalog: Catalog, scenario: Scenario, calibration: Calibration, solver: str = "auto") -> CloudPlan:
    """Ranking, exclusions and the MILP's choice."""
    options, excluded = build_options(catalog, scenario, calibration)
    table = ranking(options, scenario)
    solution = solve_cloud(options, scenario, solver)
    return CloudPlan(
        scenario=scenario.name,
        cost_basis="cost to train" if scenario.requirement.tokens else "cost per hour",
        choice=describe(solution.option, solution.count, solution.variant, solution.mix, scenario, "optimal")
        if solution
        else None,
        ranking=[RankedOffering(**r) for r in table.to_dict("records")],
        excluded=excluded,
        calibration=calibration.source,
        terms=terms(scenario),
    )


def describe(o: RentOption, n: int, v: Variant, mix: dict, scenario: Scenario, status: str) -> CloudChoice:
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
        pricing_mix={pricing_label(o.row, p): k for p, k in mix.items()},
        fabric=o.row.fabric,
        internode_gbps=o.row.internode_gbps,
        usd_per_h=sum(hourly_rate(o.row, p) * k for p, k in mix.items()),
        hours=v.wall_hours if trains else None,
        days=v.wall_hours / 24 if trains else None,
        cost_usd=sum(hourly_rate(o.row, p) * v.billed_hours[p] * k for p, k in mix.items()),
        tflops_per_gpu=f["achieved_tflops_per_gpu"],
        mfu=f["mfu"],
        tokens_per_s=f["tokens_per_s"],
        memory_per_gpu_gib=f["memory_per_gpu_gib"],
        binding=str(f["binding"]),
        status=status,
        billed_days={pricing_label(o.row, p): v.billed_hours[p] / 24 for p in mix} if trains else {},
        goodput=v.goodput if trains else None,
        interruptions_expected=v.interruptions if trains else None,
        uninterrupted_days=o.hours[n] / 24 if trains else None,
        usd_per_instance_h={pricing_label(o.row, p): hourly_rate(o.row, p) for p in mix},
    )


def terms(scenario: Scenario) -> list[str]:
    """What the costs assume about pricing, preemption, capacity and interruptions, in words."""
    c, rel, r = scenario.cloud, scenario.reliability, scenario.requirement
    out = [
        "pricing: one pricing model per job"
        if not c.mix_pricing
        else f"pricing: a job may mix pricing models (spot: none, or {c.spot_share_max:.0%} of instances)",
        (
            "spot: allowed in jobs spanning instances (cloud.spot_multi_instance), priced with "
            if c.spot_multi_instance
            else "spot: excluded from jobs spanning instances (one preemption stalls every rank of a synchronous "
            "job; cloud.spot_multi_instance opts in); single-instance spot priced with "
        )
        + f"{c.spot_interruptions_per_1000_instance_days:g} preemptions per 1000 instance-days, "
        f"{c.spot_restart_minutes:g} min each (estimates)",
        "capacity blocks (reserved_kind capacity-block): billed for whole blocks as AWS sells them (1-14 days, "
        "then 7-day steps to 182), up to 256 instances",
    ]
    if r.tokens is not None:
        goodput = (
            f"goodput {rel.goodput:.0%} as given"
            if rel.goodput is not None
            else f"{rel.interruptions_per_1000_node_days:g} interruptions per 1000 instance-days, "
            f"{rel.restart_minutes:g} min restart, Young/Daly checkpoints"
        )
        margin = f", finishing {r.schedule_margin:.0%} early" if r.schedule_margin else ""
        out.append(f"days are calendar days: {goodput}{margin}")
    out.append(
        "capacity availability is not modelled: the quota caps instance counts; confirm capacity with the provider"
    )
    return out


def like_for_like(scenario: Scenario) -> Scenario:
    """The scenario a purchase is compared with: on-demand, reserved and capacity blocks, not spot (a
    purchased cluster is not preempted)."""
    kept = [p for p in scenario.cloud.pricing if p != "spot"] or ["ondemand"]
    return scenario.model_copy(update={"cloud": scenario.cloud.model_copy(update={"pricing": kept})})


def compare(plan, cloud_choice: CloudChoice, scenario: Scenario) -> BuyVsRent:
    """Buying vs renting the same throughput: months of full use after which buying is cheaper. The purchase
    side counts what owning costs per hour beyond capex (energy, colocation, support, staff)."""
    cost, tokens_per_s = plan.cost, plan.metrics.tokens_per_s
    energy_per_h = energy_usd_per_hour(cost.draw_kw, scenario.objective)
    running_per_h = running_usd_per_hour(cost.power_kw, cost.draw_kw, cost.capex_usd, scenario.objective)
    rent_per_h = cloud_choice.usd_per_h * tokens_per_s / cloud_choice.tokens_per_s
    saving_per_month = (rent_per_h - running_per_h) * HOURS_PER_MONTH
    months = cost.capex_usd / saving_per_month if saving_per_month > 0 else None
    compared = ", ".join(cloud_choice.pricing_mix)
    return BuyVsRent(
        purchase_capex_usd=cost.capex_usd,
        purchase_energy_usd_per_h=energy_per_h,
        purchase_running_usd_per_h=running_per_h,
        purchase_tco_usd=cost.tco_usd,
        rent_same_throughput_usd_per_h=rent_per_h,
        break_even_months=months,
        cloud=cloud_choice,
        pricing_compared=compared,
        note=(
            f"buying pays off after {months:.1f} months of full use (against {compared} pricing)"
            if months is not None
            else f"renting ({compared}) costs less per hour than running the purchase: buying never pays off"
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
            for v in o.variants[n]:
                hourly, mix = cheapest_split(o.row, n, v)  # per hour: no token count, so billed hours are 1
                if hourly < math.inf:
                    rows.append((o.figures[n]["tokens_per_s"], hourly, o, n, v, mix))
    if not rows:
        return None
    reaching = [r for r in rows if r[0] >= tokens_per_s * (1 - 1e-9)]
    # reaching the purchase's throughput: cheapest per token; else the fastest (least extrapolation)
    pick = min(reaching, key=lambda r: r[1] / r[0]) if reaching else max(rows, key=lambda r: (r[0], -r[1]))
    _, hourly, o, n, v, mix = pick
    described = describe(o, n, v, mix, relaxed, "closest")
    update = {"meets_requirement": False}
    if scenario.requirement.tokens:
        g = reliability.goodput(scenario.reliability, scenario_training(catalog, scenario).params, n)
        hours = scenario.requirement.tokens / described.tokens_per_s / SECONDS_PER_HOUR / g.fraction
        billed = {p: billed_hours(o.row, p, hours) for p in mix}
        if any(b is None for b in billed.values()):
            return None  # longer than any Capacity Block: no closest option on these terms
        update.update(
            hours=hours,
            days=hours / 24,
            cost_usd=sum(hourly_rate(o.row, p) * billed[p] * k for p, k in mix.items()),
            billed_days={pricing_label(o.row, p): b / 24 for p, b in billed.items()},
            goodput=g.fraction,
            uninterrupted_days=hours * g.fraction / 24,
        )
    return described.model_copy(update=update)
