"""The rentals a sweep compares (planner sweep --rent) and what a draw moves, as planner/tables/choices.py's
Choices: the point rental (planner cloud's choice) and the next configurations (an offering at a micro-batch
on one pricing model), each at up to COUNTS instance counts from its cheapest count up to COUNT_RANGE's top.

A rental's cost is the draw's price factor for its cloud row times
  * on demand or spot: rate x instances x wall hours (the job's hours at the draw's throughput and goodput);
  * a Capacity Block or a commitment: what the point duration bills (whole blocks or terms, paid up front),
    plus the hours the job runs beyond them at the row's on-demand rate (its own rate where it has none).
Interruptions are the same reliability model as `planner cloud` (the provider's parts assumed, spot
preemptions on spot); there is no lead time. The deadline's days count from the start of the rental.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from planner.assumptions import uncertainty as U
from planner.catalog.load import Catalog
from planner.hardware import costing
from planner.inputs.scenario import Scenario
from planner.model import reliability
from planner.model.calibration import Calibration
from planner.model.draws import Spread
from planner.model.workload import Requirements, scenario_training
from planner.tables import buy as buy_table
from planner.tables import choices as choice_table
from planner.tables import rent as rent_table
from planner.tables.rent import RentOption, Variant


def build(
    catalog: Catalog, scenario: Scenario, calibration: Calibration, options: list[RentOption], point
) -> choice_table.Choices:
    """The rentals of a sweep among `options` (tables/rent.build_options'); `point` is planner cloud's
    CloudChoice among them (one pricing model: a mix is refused)."""
    req, work = Requirements.of(scenario), scenario_training(catalog, scenario)
    if req.tokens is None or scenario.requirement.days is None:
        raise ValueError("a sweep needs a deadline (requirement.tokens and requirement.days)")
    entries = _entries(options, point)
    rows = [_row(o, n, v, pricing, c) for o, n, v, pricing, c in entries]
    frame = pd.DataFrame(rows)
    parts = frame[["offering", "vendor", "confidence"]].drop_duplicates("offering", ignore_index=True)
    parts = parts.rename(columns={"offering": "part"}).assign(category="cloud")
    parts["sigma"] = [costing.price_uncertainty(c) for c in parts["confidence"]]
    parts["family"] = pd.factorize(parts["vendor"])[0]
    part_of = frame["offering"].map({p: i for i, p in enumerate(parts["part"])}).to_numpy(np.int64)
    groups = sorted(set(frame["range_group"]))
    return choice_table.Choices(
        frame=frame,
        part_usd=np.zeros((len(frame), len(parts))),
        parts=parts,
        other_usd=np.zeros(len(frame)),
        tokens_per_s=frame["tokens_per_s"].to_numpy(float),
        group=np.array([groups.index(g) for g in frame["range_group"]], dtype=np.int64),
        groups=groups,
        goodput=np.array([_goodput_grid(o, n, v, scenario, work.params) for o, n, v, _, _ in entries]),
        lead_weeks=np.zeros((len(frame), 0)),
        lead_families=[],
        point=0,
        tokens=float(req.tokens),
        deadline_days=float(scenario.requirement.days),
        spread=Spread(
            price_sigma=parts["sigma"].to_numpy(float),
            price_family=parts["family"].to_numpy(np.int64),
            families=int(parts["family"].max()) + 1,
            family_share=U.PRICE_FAMILY_SHARE.value,
            residuals=np.array([choice_table.quantiles(calibration, g) for g in groups]),
            rate_sigma=U.FAILURE_RATE_SPREAD.value,
            lead_sigma=U.LEAD_TIME_SPREAD.value,
            lead_families=0,
        ),
        rent=choice_table.Rent(
            part=part_of,
            fixed_usd=frame["fixed_usd"].to_numpy(float),
            prepaid_h=frame["prepaid_h"].to_numpy(float),
            usd_per_h=frame["usd_per_h_after"].to_numpy(float),
        ),
    )


def _entries(options: list[RentOption], point) -> list[tuple[RentOption, int, Variant, str, int]]:
    """(option, count, variant, pricing, configuration): the point rental first, then the cheapest other
    configurations (offering x micro-batch x pricing), each at its ladder of counts."""
    configs: dict[tuple, list] = {}
    for o in options:
        for n in o.counts:
            for v in o.variants[n]:
                if v.pure is not None:
                    configs.setdefault((id(o), v.pure), []).append((o, n, v, v.pure))
    if len(point.pricing_mix) != 1:
        raise ValueError("the point rental mixes pricing models; sweep a rental on one (cloud.mix_pricing: false)")
    label = rent_table.pricing_label
    is_point = [
        key
        for key, rows in configs.items()
        if any(
            o.row.provider == point.provider
            and o.row.instance == point.instance
            and o.row.region == point.region
            and o.micro_batch == point.micro_batch
            and label(o.row, p) in point.pricing_mix
            and n == point.instances
            for o, n, _, p in rows
        )
    ]
    cost = {key: min(_nominal_usd(*r) for r in rows) for key, rows in configs.items()}
    order = sorted((k for k in configs if k not in is_point[:1]), key=lambda k: cost[k])
    chosen = is_point[:1] + order[: int(U.CONFIGURATIONS.value) - 1]
    out = []
    for c, key in enumerate(chosen):
        rows = sorted(configs[key], key=lambda r: r[1])
        counts = np.array([r[1] for r in rows])
        start = point.instances if c == 0 else int(counts[0])
        keep = counts[(counts >= start) & (counts <= max(start, np.ceil(start * U.COUNT_RANGE[1])))]
        keep = set(buy_table._thin(keep, int(U.COUNTS.value))) | ({point.instances} if c == 0 else set())
        picked = [r for r in rows if r[1] in keep]
        if c == 0:  # the point rental's count first: Choices.point is 0
            picked.sort(key=lambda r: r[1] != point.instances)
        out += [(*r, c) for r in picked]
    return out


def _nominal_usd(o: RentOption, n: int, v: Variant, pricing: str) -> float:
    return rent_table.hourly_rate(o.row, pricing) * n * v.billed_hours[pricing]


def _row(o: RentOption, n: int, v: Variant, pricing: str, configuration: int) -> dict:
    """One rental as the sweep's frame row: what the report shows and the cost terms a draw scales."""
    f, rate = o.figures[n], rent_table.hourly_rate(o.row, pricing)
    hourly = pricing in ("ondemand", "spot")
    after = rent_table.hourly_rate(o.row, "ondemand") or rate
    sold = rent_table.pricing_label(o.row, pricing)
    where = f"{o.row.provider} {o.row.instance} ({o.row.region})"
    return {
        "label": f"{n} x {where}, {sold}, micro-batch {o.micro_batch}",
        "configuration": configuration,
        "offering": f"{o.row.provider}|{o.row.instance}|{o.row.region}",
        "vendor": o.row.provider,
        "confidence": o.row.confidence,
        "server": where,
        "gpu": o.row.gpu,
        "nic": None,
        "fabric": o.row.fabric or "",
        "switch": None,
        "tier": 0,
        "nodes": n,
        "gpus": int(f["gpus"]),
        "tokens_per_s": float(f.get("tokens_per_s_point", f["tokens_per_s"])),
        "range_group": str(f["range_group"]),
        "objective_usd": _nominal_usd(o, n, v, pricing),
        "capex_usd": _nominal_usd(o, n, v, pricing),
        "fixed_usd": 0.0 if hourly else rate * n * v.billed_hours[pricing],
        "prepaid_h": 0.0 if hourly else v.billed_hours[pricing],
        "usd_per_h_after": (rate if hourly else after) * n,
        "spot": pricing == "spot",
    }


def _goodput_grid(o: RentOption, n: int, v: Variant, scenario: Scenario, params: float) -> np.ndarray:
    """The rental's goodput with every interruption rate (failures and spot preemptions) times each of
    rate_multipliers(), as planner cloud counts it (rent_table._variant)."""
    parts = reliability.assumed_parts(o.row.gpus, o.row.hosts, n, float("inf"))
    out = []
    for m in map(float, choice_table.rate_multipliers()):
        rel, cloud = choice_table.scaled_reliability(scenario.reliability, m), scenario.cloud
        spot = v.spot
        extra = ()
        if spot:
            cloud = cloud.model_copy(
                update={
                    "spot_interruptions_per_1000_instance_days": cloud.spot_interruptions_per_1000_instance_days * m
                }
            )
            extra = (reliability.spot_interruptions(cloud, spot),)
        out.append(max(reliability.goodput(rel, params, n, parts, extra).fraction, 1e-6))
    return np.array(out)
