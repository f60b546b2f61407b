"""The table of the rent question: cloud offerings, their pricing terms and the rules of who may rent what,
and each offering's options (a micro-batch, the instance counts that meet the scenario, and per count the
variants its pricing terms allow).

Offerings come from cloud.csv (one row per provider x instance x region, with on-demand, spot and reserved
$/h). The same performance model as the purchase predicts each offering's throughput with its own fabric
constants (EFA, GPUDirect-TCPX, TCP: planner/assumptions/model.py), through the same feasibility tests
(planner.model.workload). An offering without an inter-node fabric, or whose bandwidth the catalog does not
give, can only run on one instance.

Pricing models keep their terms: a job runs on one pricing model unless cloud.mix_pricing; spot is priced
with its preemptions (planner.model.reliability) and kept out of jobs spanning instances unless
cloud.spot_multi_instance, since one preemption stalls every rank of a synchronous job; a Capacity Block
(reserved_kind capacity-block) bills whole blocks of the durations AWS sells; a 1- or 3-year commitment bills whole
terms. Every job's wall-clock time
counts its goodput, and a deadline is met with the scenario's schedule margin. `planner cloud` and the fleet
plan both read these rules from here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from planner.assumptions import facility as D
from planner.base.units import SECONDS_PER_HOUR
from planner.catalog.load import Catalog
from planner.catalog.rows import CloudRow
from planner.hardware.topology import Topology, domain_gbps
from planner.inputs.scenario import CloudOptions, Scenario
from planner.model import layout, reliability
from planner.model import performance as perf
from planner.model.calibration import Calibration
from planner.model.parallelism import LAYOUT, SEARCHED
from planner.model.workload import (
    Requirements,
    feasible,
    fits_memory,
    gpu_columns,
    like_catalog,
    meets_target,
    perf_frame,
    scenario_training,
    whole_grad_accum,
)
from planner.results import ExcludedOffering
from planner.tables import buy as buy_table

# ---------------------------------------------------------------- pricing terms

PRICING_COLUMNS = {
    "ondemand": "ondemand_usd_per_h",
    "spot": "spot_usd_per_h",
    "reserved": "reserved_usd_per_h",
    "committed-1y": "committed_1y_usd_per_h",
    "committed-3y": "committed_3y_usd_per_h",
}


def hourly_rate(row: CloudRow, pricing: str) -> float | None:
    """USD per instance-hour of an offering under a pricing model (None: not offered)."""
    return getattr(row, PRICING_COLUMNS[pricing])


CAPACITY_BLOCK = "capacity-block"


def is_capacity_block(row: CloudRow, pricing: str) -> bool:
    """Reserved pricing of a row whose reserved_kind is capacity-block (AWS Capacity Blocks for ML)."""
    return pricing == "reserved" and (row.reserved_kind or "").strip().lower() == CAPACITY_BLOCK


def capacity_block_days(days: float) -> float | None:
    """The shortest Capacity Block covering `days`, as AWS sells them: whole days up to 14, then 7-day steps
    up to 182 (None: longer than any block)."""
    daily, step, most = (
        D.CAPACITY_BLOCK_DAILY_UP_TO_DAYS.value,
        D.CAPACITY_BLOCK_STEP_DAYS.value,
        D.CAPACITY_BLOCK_MAX_DAYS.value,
    )
    slack = 1e-9  # 14.000000001 days of float arithmetic is 14 days
    if days <= daily:
        return float(max(1, math.ceil(days - slack)))
    block = daily + math.ceil((days - daily) / step - slack) * step
    return block if block <= most else None


def committed_hours(pricing: str, wall_hours: float) -> float:
    """Hours billed under a commitment: whole terms (a 90-day job on a 1-year commitment pays the year)."""
    term = D.COMMITTED_TERM_HOURS[pricing].value
    return max(1, math.ceil(wall_hours / term - 1e-9)) * term


def billed_hours(row: CloudRow, pricing: str, wall_hours: float) -> float | None:
    """Hours charged per instance for a job of `wall_hours`: the whole block for a Capacity Block (paid up
    front, not refundable), whole terms of a commitment, the hours used otherwise. None when no block is long
    enough."""
    if pricing in D.COMMITTED_TERM_HOURS:
        return committed_hours(pricing, wall_hours)
    if not is_capacity_block(row, pricing):
        return wall_hours
    days = capacity_block_days(wall_hours / 24)
    return None if days is None else days * 24


def pricing_label(row: CloudRow, pricing: str) -> str:
    """The pricing model as sold: reserved rows of kind capacity-block are Capacity Blocks."""
    return "capacity-block" if is_capacity_block(row, pricing) else pricing


CAPACITY_BLOCK_CAP = int(D.CAPACITY_BLOCK_MAX_INSTANCES.value)


# ---------------------------------------------------------------- options: an offering at a micro-batch


@dataclass(frozen=True)
class Variant:
    """One way to run an option at a count: `pricings` for the instances not on spot, `spot` instances on
    spot, the job's wall-clock hours (goodput counted) and the hours billed per instance per pricing."""

    pricings: tuple[str, ...]
    spot: int
    wall_hours: float
    billed_hours: dict[str, float]
    goodput: float = 1.0
    interruptions: float = 0.0  # expected over the job

    @property
    def pure(self) -> str | None:
        """The one pricing model of a single-pricing variant (None for a mix)."""
        if self.spot and not self.pricings:
            return "spot"
        return self.pricings[0] if len(self.pricings) == 1 and not self.spot else None


@dataclass(frozen=True)
class RentOption:
    """One offering at one micro-batch, with its allowed instance counts, their figures and variants."""

    row: CloudRow
    micro_batch: int
    counts: list[int]
    hours: dict[int, float]  # uninterrupted training hours (or 1: cost per hour) per count
    figures: dict[int, dict]  # perf figures per count
    variants: dict[int, list[Variant]] = field(default_factory=dict)


# ---------------------------------------------------------------- who may rent what


def offerings(catalog: Catalog, scenario: Scenario) -> list[CloudRow]:
    """The cloud rows a plan scenario may rent: its cloud options' and its allowed GPUs."""
    rows = allowed_offerings(catalog, scenario.cloud)
    if scenario.constraints.gpus:
        names = {catalog.gpu(g).name for g in scenario.constraints.gpus}
        rows = [r for r in rows if r.gpu in names]
    return rows


def allowed_offerings(catalog: Catalog, options: CloudOptions) -> list[CloudRow]:
    """The cloud rows of the allowed providers, regions and instance types (case-insensitive; none given:
    all), for `planner cloud` and the fleet alike."""
    rows = catalog.items("cloud")
    filters = {"provider": options.providers, "region": options.regions, "instance": options.instances}
    for column, allowed in filters.items():
        if allowed:
            wanted = {a.lower() for a in allowed}
            rows = [r for r in rows if getattr(r, column).lower() in wanted]
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


# ---------------------------------------------------------------- the options of each offering


def offering_shape(catalog: Catalog, row: CloudRow) -> dict:
    """An instance as the performance model sees it: its GPU, its topology (planner.hardware.topology), and
    where the row does not say, the scale-up bandwidth and host figures of a purchased server of the same
    shape (planner.model.workload.like_catalog), so that buying and renting are modelled alike."""
    gpu = gpu_columns(catalog, row.gpu)
    like = like_catalog(catalog, gpu["gpu"], row.scale_up_domain, row.gpus_per_host)
    topology = Topology.of(row, like["scale_up_gb_per_s"])
    host = {"host_gbps": like["host_gbps"], "host_dram_gb_per_s": like["host_dram_gb_per_s"]}
    return {**gpu, **topology.columns(), **host}


SCREEN_COUNTS = 10  # instance counts at which many layouts are screened before every count is evaluated


@dataclass(frozen=True)
class _Job:
    """One offering at one micro-batch: the instance counts to evaluate and the layouts to try (TP tiles the
    instance's domain)."""

    row: CloudRow
    micro_batch: int
    counts: list[int]
    lay: pd.DataFrame


def _job_arrays(jobs: list[_Job], counts_of, lay_of, shapes: dict) -> dict[str, np.ndarray]:
    """One entry per (job, instance count, layout), in that order: the cluster's columns, `job` and `count`."""
    counts = [np.asarray(counts_of(j, job), dtype=np.int64) for j, job in enumerate(jobs)]
    lays = [lay_of(j, job) for j, job in enumerate(jobs)]
    sizes = np.array([len(c) * len(lay) for c, lay in zip(counts, lays, strict=True)])
    per_job = {
        "job": np.arange(len(jobs)),
        "micro_batch": np.array([job.micro_batch for job in jobs]),
        "fabric": np.array([multi_node_fabric(job.row) or "ib" for job in jobs]),  # single instance: no network
        "scale_out_gbps": np.array(
            [
                float(domain_gbps(job.row.internode_gbps or 1.0, job.row.gpus, shapes[id(job.row)]["scale_up_gpus"]))
                for job in jobs
            ]
        ),
    }
    for key in shapes[id(jobs[0].row)]:
        values = [shapes[id(job.row)][key] for job in jobs]
        per_job[key] = np.array(values, dtype=object if any(v is None for v in values) else None)
    out = {k: np.repeat(v, sizes) for k, v in per_job.items()}
    out["count"] = np.concatenate([np.repeat(c, len(lay)) for c, lay in zip(counts, lays, strict=True)])
    out["gpus"] = out["count"] * np.repeat([job.row.gpus for job in jobs], sizes)
    for c in SEARCHED:
        out[c] = np.concatenate([np.tile(lay[c].to_numpy(), len(n)) for n, lay in zip(counts, lays, strict=True)])
    return out


def _chosen(arrays: dict, work, calibration, req) -> dict:
    """Per (job, instance count) the layout the planner chooses (planner.model.layout.choose over the entries:
    legal at that count and fitting; the first entry where none is)."""
    clusters = {c: v for c, v in arrays.items() if c not in ("job", "count")}
    clusters["grad_accum"] = buy_table.micro_batches(clusters, work)
    figures = perf.evaluate_arrays({**work.perf_columns(), **clusters}, calibration, len(arrays["job"]), req.confidence)
    mb = clusters["micro_batch"]
    ok = fits_memory(figures) & whole_grad_accum(clusters["gpus"], mb, req, {**figures, "gpus": clusters["gpus"]})
    group = np.cumsum(np.r_[True, (np.diff(arrays["job"]) != 0) | (np.diff(arrays["count"]) != 0)]) - 1
    at = layout.choose(group, figures["tokens_per_s"], ok, {c: clusters[c] for c in LAYOUT}, fallback_first=True)
    return {k: v[at] for k, v in {**arrays, "grad_accum": clusters["grad_accum"]}.items()}


def _probe_counts(counts: list[int]) -> list[int]:
    """SCREEN_COUNTS of the instance counts, geometrically spaced."""
    return sorted({counts[int(i)] for i in np.geomspace(1, len(counts), SCREEN_COUNTS).round() - 1})


def _evaluate_jobs(catalog, work, jobs: list[_Job], calibration, req) -> list[pd.DataFrame]:
    """The model at each job's instance counts, each at the layout the planner chooses for it, all offerings in
    one evaluation. With many counts and layouts, the layouts are first tried at SCREEN_COUNTS of the counts;
    those chosen there, and the first (data parallelism), are tried at every count."""
    if not jobs:
        return []
    shapes = {id(job.row): offering_shape(catalog, job.row) for job in jobs}
    lays = []
    for job in jobs:
        domain = shapes[id(job.row)]["scale_up_gpus"]
        lays.append(job.lay[layout.tp_fits(job.lay["tp"].to_numpy(), domain)].reset_index(drop=True))
    screened = [j for j, job in enumerate(jobs) if len(lays[j]) > 1 and len(job.counts) > SCREEN_COUNTS]
    if screened:
        probes = {j: _probe_counts(jobs[j].counts) for j in screened}
        sub = [jobs[j] for j in screened]
        arrays = _job_arrays(sub, lambda i, job: probes[screened[i]], lambda i, job: lays[screened[i]], shapes)
        picked = pd.DataFrame(_chosen(arrays, work, calibration, req))
        for i, j in enumerate(screened):
            kept = picked.loc[picked["job"] == i, list(SEARCHED)].drop_duplicates()
            lays[j] = pd.concat([lays[j].iloc[:1], kept], ignore_index=True).drop_duplicates(ignore_index=True)
    every = _job_arrays(jobs, lambda j, job: job.counts, lambda j, job: lays[j], shapes)
    chosen = _chosen(every, work, calibration, req)
    jobs_of = chosen.pop("job")
    chosen.pop("count")
    ev = perf.evaluate(perf_frame(work, chosen), calibration, req.confidence)
    bounds = np.searchsorted(jobs_of, np.arange(len(jobs) + 1))  # entries are in job order
    return [ev.iloc[bounds[j] : bounds[j + 1]].reset_index(drop=True) for j in range(len(jobs))]


def build_options(
    catalog: Catalog, scenario: Scenario, calibration: Calibration
) -> tuple[list[RentOption], list[ExcludedOffering]]:
    """Feasible options, and each excluded offering with the reason."""
    work = scenario_training(catalog, scenario)
    req = Requirements.of(scenario)
    options, excluded, priced, jobs = [], {}, [], []  # excluded by offering index: reported in catalog order
    for i, row in enumerate(offerings(catalog, scenario)):
        prices = [p for p in scenario.cloud.pricing if hourly_rate(row, p) is not None]
        if not prices:
            excluded[i] = _excluded(row, "no price for the allowed pricing models")
            continue
        if prices == ["spot"] and scenario.cloud.spot_share_max < 1:
            excluded[i] = _excluded(row, "spot pricing only, but spot_share_max < 1 keeps some instances off spot")
            continue
        row_jobs, reasons = _jobs_of(scenario, work, req, row)
        priced.append((i, row, row_jobs, reasons))
        jobs += row_jobs
    evaluated = dict(zip(map(id, jobs), _evaluate_jobs(catalog, work, jobs, calibration, req), strict=True))
    for i, row, row_jobs, reasons in priced:
        fast, more = _options_of(row_jobs, [evaluated[id(j)] for j in row_jobs], req)
        found = [o for o in (_with_variants(o, scenario, work.params, req) for o in fast) if o.counts]
        # a micro-batch fast enough whose pricing terms or goodput then fail is the offering's nearest miss
        reasons = reasons + ([_terms_reason(row, scenario)] if fast and not found else []) + more
        options += found
        if not found:
            excluded[i] = _excluded(row, _one_reason_per_kind(reasons))
    return options, [excluded[i] for i in sorted(excluded)]


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
    parts = reliability.assumed_parts(o.row.gpus, o.row.hosts, n, math.inf)
    g = reliability.goodput(scenario.reliability, params, n, parts, extra) if trains else None
    wall = o.hours[n] / g.fraction if g else o.hours[n]
    r = scenario.requirement
    if trains and wall > r.days * (1 - r.schedule_margin) * 24 * (1 + 1e-9):
        return None
    billed = {p: billed_hours(o.row, p, wall) if trains else wall for p in pricings}
    pricings = tuple(p for p in pricings if billed[p] is not None)
    if not pricings and spot < n:
        return None
    if pricings == ("reserved",) and is_capacity_block(o.row, "reserved") and n - spot > CAPACITY_BLOCK_CAP:
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


def _jobs_of(scenario, work, req: Requirements, row: CloudRow) -> tuple[list[_Job], list[str]]:
    """The (micro-batch, instance counts, layouts) to evaluate for one offering, or why there are none."""
    cap = quota(scenario.cloud, row) if multi_node_fabric(row) else min(1, quota(scenario.cloud, row))
    counts = list(range(1, cap + 1))
    if req.gpus is not None:
        fixed = req.gpus / row.gpus
        counts = [int(fixed)] if fixed.is_integer() and 1 <= fixed <= cap else []
    if not counts:
        return [], ["GPU count not reachable in whole instances within quota"]
    lay = buy_table.layouts(work, scenario, row.scale_up_domain)
    if not layout.tp_fits(lay["tp"].to_numpy(), row.scale_up_domain).any():  # a fixed tp this domain cannot hold
        tp = int(lay["tp"].iloc[0])
        return [], [f"layout: tp {tp} does not fit the instance's {row.scale_up_domain}-GPU NVLink domain"]
    return [_Job(row, mb, counts, lay) for mb in scenario.workload.micro_batches], []


def _options_of(jobs: list[_Job], evaluated: list[pd.DataFrame], req: Requirements):
    """The offering's options (one per micro-batch with a feasible count) and why the others have none."""
    options, reasons = [], []
    for job, ev in zip(jobs, evaluated, strict=True):
        counts, mb, row = job.counts, job.micro_batch, job.row
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
    micro-batch for bandwidth (the best it gets), the smallest for memory and a global batch (the least memory,
    the most instances). Memory is a reason only where no micro-batch fits: one that fits fails for another
    reason, which is why the offering is out."""
    if any(not r.startswith("memory") for r in reasons):
        reasons = [r for r in reasons if not r.startswith("memory")]
    by_kind: dict[str, str] = {}
    for reason in reasons:
        kind = reason.split(":")[0]
        if not ((kind.startswith("global batch") or kind == "memory") and kind in by_kind):
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
            f"deadline: at most {ev.loc[fits & fast, 'tokens_per_s'].max():,.0f} tokens/s within quota (where the "
            f"model fits and meets the target) < {req.tokens_per_s:,.0f} needed"
        )
    smallest = int(ev.loc[fits & fast & speed, "gpus"].min()) // row.gpus
    group = f"workload.shard_gpus {req.shard_group}"
    if req.global_batch is None:  # (then only hybrid sharding's group rules a count out)
        largest = int(ev["gpus"].max()) // row.gpus
        return (
            f"{group}: no instance count from {smallest} to {largest} holds whole replicas of the shard group "
            f"(a multiple of {req.shard_group} GPUs, {row.gpus} per instance)"
        )
    most = req.global_batch // (row.gpus * mb)  # beyond it a step has less than one micro-batch per GPU
    if smallest > most:
        return (
            f"global batch {req.global_batch}: {smallest} instances or more are fast enough, but at micro-batch {mb} "
            f"at most {most} keep a whole micro-batch per GPU per step ({req.global_batch} / ({row.gpus} GPUs x "
            f"{mb})); a smaller micro-batch or a larger global batch"
        )
    replicas = f" that is also a multiple of {group} (whole replicas of the shard group)" if req.shard_group else ""
    return (
        f"global batch {req.global_batch}: no instance count from {smallest} to {most} gives a whole grad_accum at "
        f"micro-batch {mb}{replicas}"
    )
