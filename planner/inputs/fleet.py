"""The fleet scenario: a portfolio of workloads over a horizon of quarters, the installed base, vendors'
terms, the site and the cloud. YAML in, pydantic-validated (extra keys refused), then resolved against the
horizon so that every period is a number 1..H and every range is checked (`resolve`).

It reuses the plan scenario's building blocks: each training job's `workload` is scenario.Workload, the
energy fields are scenario.Objective's (same defaults and sources), the cloud section extends
scenario.CloudOptions. Periods may be written as numbers (1 = the first quarter) or, when `horizon.start`
is given, as labels such as 2026Q3.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from planner.assumptions import facility as D
from planner.base import limits as L
from planner.base.errors import ScenarioError
from planner.base.units import HOURS_PER_YEAR, parse_quantity
from planner.catalog.rows import Count, Params, PlanFabric, count, quantity_type
from planner.inputs.scenario import (
    USD,
    CloudOptions,
    Layout,
    Objective,
    TFLOPs,
    Workload,
    field_message,
    location_part,
    read_yaml,
    recompute_target_problem,
    validation_messages,
)
from planner.inputs.scenario import _Strict as _PlanStrict

QUARTER_LABEL = re.compile(r"^(\d{4})Q([1-4])$")
PeriodRef = Annotated[int | str, Field(description="A period: 1 = the first quarter, or a label such as 2026Q3.")]
Watts = quantity_type("w", "6.5kW", gt=0)
Nodes = count(ge=0, le=L.MAX_NODES)  # any node, unit or rack count: the MILP's coefficients stay sane
Years = Annotated[float, Field(ge=0, le=L.MAX_YEARS)]
NicsPerNode = count(ge=0, le=L.MAX_NICS_PER_NODE)
LeadPeriods = count(ge=0, le=40)
NonNegativeUSD = quantity_type("usd", "$2M", ge=0)


def _fraction(value: object) -> object:
    """5% or 0.05."""
    if isinstance(value, str) and value.strip().endswith("%"):
        return float(value.strip()[:-1]) / 100
    return value


Fraction = Annotated[float, BeforeValidator(_fraction), Field(ge=0, lt=1)]


def _kw(value: object) -> object:
    """1000, '1000kW', '1MW' -> kW (a hall may have 0 kW before it opens)."""
    if isinstance(value, str) and value.strip().lower().endswith("w"):
        return parse_quantity(value, "w") / 1e3
    return parse_quantity(value, "count")


KW0 = Annotated[float, BeforeValidator(_kw), Field(ge=0, le=L.MAX_QUANTITY["w"] / 1e3)]


class _Strict(_PlanStrict):
    """The plan scenario's rules (no .inf/.nan, no control characters, bounded lists) plus aliases."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, allow_inf_nan=False, populate_by_name=True)


class Horizon(_Strict):
    periods: Count = Field(ge=1, le=40, description="Quarters planned.")
    start: str | None = Field(
        None, pattern=QUARTER_LABEL.pattern, description="Label of the first quarter, e.g. 2026Q1 (dates in output)."
    )


class TrainingJob(_Strict):
    name: str = Field(min_length=1)
    workload: Workload
    tokens: Params = Field(description="Tokens to train, e.g. 1T.")
    start: PeriodRef = Field(1, description="Earliest period the run may start.")
    deadline: PeriodRef | None = Field(None, description="Last period the run may end in (default: the last).")
    target_tflops: TFLOPs | None = Field(None, description="Achieved TFLOPs per GPU the run must reach.")
    late_penalty_usd: NonNegativeUSD | None = Field(
        None, description="Cost per period finished after the deadline (none: the deadline is hard)."
    )
    max_nodes: Nodes | None = Field(None, ge=1, description="Most nodes the run may use.")

    @model_validator(mode="after")
    def _recompute_compared_on_tokens(self) -> TrainingJob:
        problem = recompute_target_problem(self.workload, self.target_tflops)
        if problem:
            raise ValueError(problem + " (the job's tokens and deadline are its throughput)")
        return self


PerGPU = Annotated[float, Field(gt=0, le=L.MAX_QUANTITY["count"])]


class InferenceService(_Strict):
    name: str = Field(min_length=1)
    model: str | None = Field(None, description="A model from models.csv (its architecture sizes the KV cache).")
    params: Params | None = Field(None, description="Parameters when no model is named (architecture estimated).")
    tokens_per_s: Params | None = Field(None, description="Output tokens per second to serve, e.g. 200k.")
    requests_per_s: float | None = Field(
        None, gt=0, le=L.MAX_QUANTITY["count"], description="Requests per second (with output_tokens)."
    )
    output_tokens: Count = Field(
        256, ge=1, le=L.MAX_SEQ_LEN, description="Output tokens per request (with requests_per_s or input_tokens)."
    )
    input_tokens: Count | None = Field(
        None,
        ge=1,
        le=L.MAX_SEQ_LEN,
        description="Mean prompt tokens per request: when given, replicas prefill too (planner serve's load model, "
        "max_ms_per_token at the p90); else decode only.",
    )
    growth_per_period: float = Field(0.0, ge=-0.5, le=2.0, description="Compound demand growth per quarter.")
    start: PeriodRef = Field(1, description="First period served.")
    end: PeriodRef | None = Field(None, description="Last period served (default: the last).")
    max_ms_per_token: float | None = Field(
        None, gt=0, le=L.MAX_QUANTITY["s"] * 1e3, description="Latency SLO: time per output token."
    )
    context_tokens: Count | None = Field(
        None, ge=1, le=L.MAX_SEQ_LEN, description="Tokens held per sequence (default: seq_len)."
    )
    batch: Count = Field(
        64,
        ge=1,
        le=L.MAX_MICRO_BATCH,
        description="Most sequences an engine decodes together (a tensor-parallel replica is one engine; an "
        "expert-parallel one has one per GPU, as planner serve counts them).",
    )
    weight_bytes: float = Field(2.0, ge=0.25, le=4, description="Bytes per weight: 2 bf16, 1 int8/fp8, 0.5 int4.")
    tokens_per_s_per_gpu: PerGPU | dict[str, PerGPU] | None = Field(
        None, description="Measured decode tokens/s per GPU (one number, or per GPU name): replaces the estimate."
    )

    @model_validator(mode="after")
    def _one_each(self) -> InferenceService:
        if (self.model is None) == (self.params is None):
            raise ValueError("give exactly one of model or params")
        if (self.tokens_per_s is None) == (self.requests_per_s is None):
            raise ValueError("give exactly one of tokens_per_s or requests_per_s (with output_tokens)")
        return self

    @property
    def demand_tokens_per_s(self) -> float:
        return self.tokens_per_s if self.tokens_per_s is not None else self.requests_per_s * self.output_tokens


class Installed(_Strict):
    server: str = Field(description="A server name from servers.csv.")
    count: Nodes = Field(ge=1, description="Nodes owned.")
    age_years: Years = Field(0.0, description="Age at the start of the horizon.")
    life_years: Years | None = Field(None, gt=0, description="Retired at this age (default: buy.life_years).")
    power_w: Watts | None = Field(None, description="Nameplate watts per node (default: the catalog's + NICs).")
    nic: str | None = Field(None, description="NIC sku per node (default: the server's included NIC).")
    nics_per_node: NicsPerNode | None = Field(None, description="NICs per node (default: the included count).")
    switch: str | None = Field(None, description="Switch sku of its fabric (default: the cheapest that connects).")
    fabric: PlanFabric | None = Field(None, description="Fabric (default: the cheapest that connects).")


class Tier(_Strict):
    units: Nodes = Field(ge=1, description="Units per order from which this tier's price applies.")
    discount: Fraction | None = Field(None, description="Off the unit price, e.g. 5%.")
    unit_usd: USD | None = Field(None, description="Or the tier's unit price.")

    @model_validator(mode="after")
    def _one_price(self) -> Tier:
        if (self.discount is None) == (self.unit_usd is None):
            raise ValueError("give exactly one of discount or unit_usd")
        return self


class Step(_Strict):
    """A value over a range of periods: from `from` to `to` (default: until the next step, or the end)."""

    start: PeriodRef = Field(alias="from")
    to: PeriodRef | None = None


class StockStep(Step):
    units: Nodes = Field(description="Most units delivered per period.")


class PowerStep(Step):
    kw: KW0 = Field(description="IT power available (nameplate), e.g. 1000 or 1MW.")


class RackStep(Step):
    racks: Nodes = Field()


class Terms(_Strict):
    server: str = Field(description="A server name from servers.csv.")
    vendor: str | None = Field(None, description="Who sells it (default: the catalog's vendor).")
    price_usd: USD | None = Field(None, description="Unit price before tiers (default: the catalog's).")
    tiers: list[Tier] = Field(default_factory=list, description="Volume tiers per order (one period's delivery).")
    tier_kind: Literal["all_units", "incremental"] = Field(
        "all_units", description="all_units: the order's size sets every unit's price; incremental: per band."
    )
    stock: Nodes | list[StockStep] | None = Field(
        None, description="Most units delivered per period: one number, or steps."
    )
    lead_time_periods: LeadPeriods = Field(0, description="Periods from order to delivery (none before 1 + lead).")


class Buy(_Strict):
    servers: list[str] | None = Field(None, description="Servers that may be bought (default: every catalog server).")
    terms: list[Terms] = Field(default_factory=list)
    network_options: Count = Field(
        1, ge=0, le=4, description="Network configurations (pools) per server shape: the fastest, then slower."
    )
    standalone_pools: bool = Field(True, description="Also offer pools without a network (inference, one node).")
    fabrics: list[PlanFabric] = Field(
        default_factory=lambda: ["ib", "roce", "spectrum-x"], min_length=1, description="Compute fabrics allowed."
    )
    max_nodes_per_pool: Nodes = Field(512, ge=1, description="Most nodes of one pool.")
    life_years: float = Field(
        D.YEARS.value, ge=0.25, le=L.MAX_YEARS, description="Service life (Epoch AI: 5-year server life)."
    )
    residual: Literal["straight_line", "none"] = Field(
        "straight_line", description="Credit the value left at the horizon's end (straight-line over life_years)."
    )


class Site(_Strict):
    power: list[PowerStep] | None = Field(None, description="IT power (nameplate kW) per period, as steps.")
    racks: list[RackStep] | None = Field(None, description="Racks per period, as steps.")
    layout: Layout = Field(
        default_factory=Layout, description="The plan scenario's rack layout: rack kW and units set nodes per rack."
    )


_ENERGY = Objective.model_fields


class Costs(_Strict):
    discount_rate: float = Field(
        D.DISCOUNT_RATE.value, ge=0, le=1, description="Annual discount rate (estimate: cost of capital)."
    )
    usd_per_kwh: float = _ENERGY["usd_per_kwh"]
    pue: float = _ENERGY["pue"]
    server_draw_fraction: float = _ENERGY["server_draw_fraction"]
    colocation_usd_per_kw_month: float = _ENERGY["colocation_usd_per_kw_month"]


class FleetCloud(CloudOptions):
    allowed: bool = Field(True, description="Whether jobs and services may run in the cloud.")
    pricing: list[Literal["ondemand", "spot", "reserved"]] = Field(
        default_factory=lambda: ["ondemand"], min_length=1, description="Pricing models the fleet may rent at."
    )
    max_instances: Count = Field(
        64, ge=1, le=L.MAX_INSTANCES, description="Most instances of any one offering at once."
    )


class Fleet(_Strict):
    name: str = "unnamed fleet"
    horizon: Horizon
    training: list[TrainingJob] = Field(default_factory=list)
    inference: list[InferenceService] = Field(default_factory=list)
    installed: list[Installed] = Field(default_factory=list)
    buy: Buy = Field(default_factory=Buy)
    site: Site = Field(default_factory=Site)
    costs: Costs = Field(default_factory=Costs)
    cloud: FleetCloud = Field(default_factory=FleetCloud)
    catalogs: list[str] = Field(default_factory=list, description="Catalog files, relative to the fleet file.")

    @model_validator(mode="after")
    def _some_work(self) -> Fleet:
        if not self.training and not self.inference:
            raise ValueError("give at least one training job or inference service")
        if len(self.training) + len(self.inference) > L.MAX_WORKLOADS:
            raise ValueError(f"at most {L.MAX_WORKLOADS} workloads (training plus inference) in one fleet; split it")
        names = [w.name for w in [*self.training, *self.inference]]
        duplicated = sorted({n for n in names if names.count(n) > 1})
        if duplicated:
            raise ValueError(f"workload names must be unique: {', '.join(duplicated)} appears twice")
        return self


# ---------------------------------------------------------------- periods

PERIODS_PER_YEAR = 4  # a period is a quarter
HOURS_PER_PERIOD = HOURS_PER_YEAR / PERIODS_PER_YEAR  # 2190 h
SECONDS_PER_PERIOD = HOURS_PER_PERIOD * 3600


@dataclass(frozen=True)
class Periods:
    """The horizon's periods 1..H and their labels."""

    count: int
    start: str | None

    @property
    def labels(self) -> list[str]:
        if self.start is None:
            return [f"P{t}" for t in range(1, self.count + 1)]
        year, quarter = (int(x) for x in QUARTER_LABEL.match(self.start).groups())
        out = []
        for i in range(self.count):
            q = quarter - 1 + i
            out.append(f"{year + q // 4}Q{q % 4 + 1}")
        return out

    def number(self, ref: int | str, where: str) -> int:
        """The period number of a reference, or a ScenarioError naming the field and the fix."""
        labels = self.labels
        if isinstance(ref, str) and ref.strip().isdigit():
            ref = int(ref)
        if isinstance(ref, str):
            if ref.strip() in labels:
                return labels.index(ref.strip()) + 1
            hint = f"{labels[0]}..{labels[-1]}" if self.start else f"1..{self.count} (or set horizon.start)"
            raise _FieldError(where, ref, f"not a period of the horizon; write one of {hint}")
        if not 1 <= ref <= self.count:
            raise _FieldError(where, ref, f"outside the horizon of {self.count} periods; use 1..{self.count}")
        return ref


class _FieldError(Exception):
    def __init__(self, where: str, value: object, message: str):
        super().__init__(f"{where} = {value!r}: {message}")


def steps(periods: Periods, items: list[Step] | None, field: str, where: str) -> list[float] | None:
    """Per-period values of a list of steps (None when no steps). Every period must be in exactly one step."""
    if items is None:
        return None
    values: list[float | None] = [None] * periods.count
    starts = [periods.number(s.start, f"{where}[{i}].from") for i, s in enumerate(items)]
    for i, item in enumerate(items):
        later = [s for s in starts if s > starts[i]]
        last = min(later) - 1 if later else periods.count
        if item.to is not None:
            last = periods.number(item.to, f"{where}[{i}].to")
        if last < starts[i]:
            raise _FieldError(f"{where}[{i}].to", item.to, f"before its from ({starts[i]}); give to >= from")
        for t in range(starts[i], last + 1):
            if values[t - 1] is not None:
                raise _FieldError(
                    f"{where}[{i}]", periods.labels[t - 1], "overlaps another step; give each period in one step only"
                )
            values[t - 1] = getattr(item, field)
    missing = [periods.labels[t] for t, v in enumerate(values) if v is None]
    if missing:
        raise _FieldError(where, missing[0], "is in no step; cover every period from the first (from: 1)")
    return values


# ---------------------------------------------------------------- resolved, with period numbers


@dataclass(frozen=True)
class Window:
    start: int
    end: int


def resolve_windows(fleet: Fleet) -> tuple[list[Window], list[Window]]:
    """Each job's (earliest start, deadline) and each service's (first, last period), checked."""
    periods = Periods(fleet.horizon.periods, fleet.horizon.start)
    jobs = []
    for i, job in enumerate(fleet.training):
        start = periods.number(job.start, f"training[{i}].start")
        end = periods.number(job.deadline, f"training[{i}].deadline") if job.deadline is not None else periods.count
        if end < start:
            raise _FieldError(f"training[{i}].deadline", job.deadline, f"before its start ({start}); move one")
        jobs.append(Window(start, end))
    services = []
    for i, svc in enumerate(fleet.inference):
        start = periods.number(svc.start, f"inference[{i}].start")
        end = periods.number(svc.end, f"inference[{i}].end") if svc.end is not None else periods.count
        if end < start:
            raise _FieldError(f"inference[{i}].end", svc.end, f"before its start ({start}); move one")
        services.append(Window(start, end))
    return jobs, services


def check(fleet: Fleet) -> None:
    """Every period reference and every list of steps, against the horizon (raises _FieldError)."""
    periods = Periods(fleet.horizon.periods, fleet.horizon.start)
    resolve_windows(fleet)
    steps(periods, fleet.site.power, "kw", "site.power")
    steps(periods, fleet.site.racks, "racks", "site.racks")
    for i, terms in enumerate(fleet.buy.terms):
        if isinstance(terms.stock, list):
            steps(periods, terms.stock, "units", f"buy.terms[{i}].stock")
        units = [t.units for t in terms.tiers]
        if units != sorted(set(units)):
            raise _FieldError(f"buy.terms[{i}].tiers", units, "give tiers in increasing units, each once")
        if terms.lead_time_periods >= periods.count:
            raise _FieldError(
                f"buy.terms[{i}].lead_time_periods",
                terms.lead_time_periods,
                f"nothing could be delivered within {periods.count} periods; lower it",
            )


# ---------------------------------------------------------------- loading


def load_fleet(path: str | Path, settings: dict[str, object] | None = None) -> Fleet:
    """Read, validate and check a fleet file; every problem is a ScenarioError naming file, field and fix."""
    path = Path(path)
    data = read_yaml(path, "fleet")
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: a fleet file is a YAML mapping with horizon, training, inference, ...")
    if "workload" in data and "horizon" not in data:
        raise ScenarioError(
            f"{path}: this is a plan scenario (workload, requirement); run `planner plan {path}` or `planner cloud`"
        )
    for dotted, value in (settings or {}).items():
        _set(data, dotted, value, path)
    try:
        fleet = Fleet.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError("\n".join(validation_messages(str(path), exc, _fleet_message))) from None
    try:
        check(fleet)
    except _FieldError as exc:
        raise ScenarioError(f"{path}: {exc}") from None
    base = path.parent
    return fleet.model_copy(update={"catalogs": [str((base / c).resolve()) for c in fleet.catalogs]})


_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _set(data: dict, dotted: str, value: object, path: Path) -> None:
    """--set KEY=VALUE with list items by index: training[0].tokens=2T, site.power[1].kw=1500."""
    steps = [(name, int(index)) if index else (name, None) for name, index in _STEP.findall(dotted)]
    keys = [name or index for name, index in steps]
    node: object = data
    for i, key in enumerate(keys):
        last = i == len(keys) - 1
        if isinstance(key, int):
            if not isinstance(node, list) or key >= len(node):
                raise ScenarioError(f"{path}: --set {dotted}: there is no item [{key}] there; count from 0")
            if last:
                node[key] = value
            node = node[key]
            continue
        if not isinstance(node, dict):
            raise ScenarioError(f"{path}: --set {dotted}: {key} is not inside a section")
        if last:
            node[key] = value
        else:
            node = node.setdefault(key, [] if isinstance(keys[i + 1], int) else {})


def _fleet_message(path: str, err: dict) -> str:
    return field_message(path, err, "fleet", _where, root=Fleet)


def _where(loc: tuple) -> str:
    """training.0.tokens -> training[0].tokens; pydantic's union branch names (int, str, ...) dropped."""
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts[-1 if parts else 0 :] = [f"{parts[-1]}[{item}]"] if parts else [f"[{item}]"]
        elif not _union_branch(str(item)):
            parts.append(location_part(item))
    return ".".join(parts) or "(top level)"


def _union_branch(name: str) -> bool:
    """pydantic names the branch of a union it tried (int, str, list[StockStep], function-after[...])."""
    return name in ("int", "str", "float", "list[StockStep]", "constrained-int") or ("[" in name and "(" in name)
