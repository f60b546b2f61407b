"""`planner cloud`: rent instead of buy. Which instance type, how many, which pricing, and the cost to train.

The offerings, their terms and options are the rent table (planner/tables/rent.py); the choice is the rental
MILP (planner/optimize/rent.py). Here: the ranking per offering and pricing, the chosen plan, the terms in
words, and buy against rent (break-even months).
"""

from __future__ import annotations

import datetime as dt
import math

import pandas as pd

from planner.assumptions import facility as D
from planner.assumptions import hardware as H
from planner.base.units import HOURS_PER_MONTH, SECONDS_PER_HOUR
from planner.catalog import dates
from planner.catalog.load import Catalog
from planner.hardware.costing import energy_usd_per_hour, running_usd_per_hour
from planner.inputs.scenario import Scenario
from planner.model import reliability
from planner.model.calibration import Calibration
from planner.model.layout import layout_name
from planner.model.workload import scenario_training
from planner.optimize import rent
from planner.optimize.rent import RentSolution, cheapest_split
from planner.results import BuyVsRent, CloudChoice, CloudPlan, CommittedBreakEven, RankedOffering
from planner.tables.rent import RentOption, Variant, billed_hours, build_options, hourly_rate, pricing_label

# ---------------------------------------------------------------- choice


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
        "confidence": o.row.confidence,
        "price_date": o.row.date,
        "stale": dates.is_stale(o.row.date, dt.date.today(), int(H.STALE_PRICE_MONTHS.value)),
    }


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
        layout=layout_name(f),
        grad_accum=float(f["grad_accum"]),
        checkpointing=str(f["checkpointing"]),
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
        "commitments (committed-1y, committed-3y: savings plans, reserved instances, committed-use discounts): "
        "billed for whole 1- or 3-year terms, used or not",
    ]
    if r.tokens is not None:
        goodput = (
            f"goodput {rel.goodput:.0%} as given"
            if rel.goodput is not None
            else f"{rel.interruptions_per_1000_node_days:g} interruptions per 1000 instance-days, "
            f"{rel.restart_minutes:g} min restart, Young/Daly checkpoints"
            if rel.interruptions_per_1000_node_days is not None
            else "interruptions from each instance's GPUs and hosts at their failure rates (reliability."
            "failure_rates), its network counted as one NIC and link per GPU on a non-blocking two-tier fabric, "
            f"{rel.restart_minutes:g} min restart, Young/Daly checkpoints"
        )
        margin = f", finishing {r.schedule_margin:.0%} early" if r.schedule_margin else ""
        out.append(f"days are calendar days: {goodput}{margin}")
    out.append(
        "capacity availability is not modelled: the quota caps instance counts; confirm capacity with the provider"
    )
    return out


def like_for_like(scenario: Scenario, pricing: list[str] | None = None) -> Scenario:
    """The scenario a purchase is compared with: on-demand, reserved and capacity blocks, not spot (a
    purchased cluster is not preempted) nor commitments (compared apart, term by term); or `pricing`."""
    kept = pricing or [p for p in scenario.cloud.pricing if p != "spot" and p not in D.COMMITTED_TERM_HOURS]
    return scenario.model_copy(update={"cloud": scenario.cloud.model_copy(update={"pricing": kept or ["ondemand"]})})


def _break_even(capex: float, rent_per_h: float, running_per_h: float) -> float | None:
    """Months of full use after which buying costs less than renting (None: renting is cheaper per hour)."""
    saving_per_month = (rent_per_h - running_per_h) * HOURS_PER_MONTH
    return capex / saving_per_month if saving_per_month > 0 else None


def committed_break_evens(
    catalog: Catalog, plan, scenario: Scenario, calibration: Calibration, running_per_h: float
) -> list[CommittedBreakEven]:
    """The purchase against renting its throughput on each commitment term the catalog prices: the offering
    with the lowest committed cost per token, its rate for the purchase's throughput, and the break-even."""
    out = []
    for term, hours in D.COMMITTED_TERM_HOURS.items():
        if term not in scenario.cloud.pricing:
            continue
        choice = cheapest_per_token(catalog, like_for_like(scenario, [term]), calibration, plan.metrics.tokens_per_s)
        if choice is None:
            continue
        rent_per_h = choice.usd_per_h * plan.metrics.tokens_per_s / choice.tokens_per_s
        months = _break_even(plan.cost.capex_usd, rent_per_h, running_per_h)
        term_months = hours.value / HOURS_PER_MONTH
        verdict = (
            f"buying pays off after {months:.1f} months of full use"
            + (" - longer than the term" if months > term_months else "")
            if months is not None
            else "renting on this commitment costs less per hour than running the purchase: buying never pays off"
        )
        out.append(
            CommittedBreakEven(
                pricing=term, offering=f"{choice.provider} {choice.instance} ({choice.region})",
                instances=choice.instances, rent_same_throughput_usd_per_h=rent_per_h, break_even_months=months,
                term_months=term_months, note=verdict,
            )
        )  # fmt: skip
    return out


def compare(plan, cloud_choice: CloudChoice, scenario: Scenario, committed=()) -> BuyVsRent:
    """Buying vs renting the same throughput: months of full use after which buying is cheaper. The purchase
    side counts what owning costs per hour beyond capex (energy, colocation, support, staff)."""
    cost, tokens_per_s = plan.cost, plan.metrics.tokens_per_s
    energy_per_h = energy_usd_per_hour(cost.draw_kw, scenario.objective, cost.pue)
    running_per_h = running_purchase_usd_per_h(plan, scenario)
    rent_per_h = cloud_choice.usd_per_h * tokens_per_s / cloud_choice.tokens_per_s
    months = _break_even(cost.capex_usd, rent_per_h, running_per_h)
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
        committed=list(committed),
    )


def running_purchase_usd_per_h(plan, scenario: Scenario) -> float:
    """What the purchase costs per hour to run (energy at its PUE, colocation, support, staff)."""
    c = plan.cost
    return running_usd_per_hour(c.power_kw, c.draw_kw, c.capex_usd, scenario.objective, c.pue)


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
        parts = reliability.assumed_parts(o.row.gpus, o.row.hosts, n, math.inf)
        g = reliability.goodput(scenario.reliability, scenario_training(catalog, scenario).params, n, parts)
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
