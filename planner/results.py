"""Typed results of every question the planner answers (Plan, CloudPlan, InferencePlan), as plain validated
data: JSON-ready, no pulp objects. The library builds them; report/ renders them and never builds them."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, computed_field


class _Tables:
    """to_json() and to_frame() of a result (the Python API, planner.api): the JSON --json prints, and the rows
    a notebook tabulates (`frame_rows`: the list field that is the result's table; none: one row)."""

    frame_rows: ClassVar[str | None] = None

    def to_json(self) -> str:
        from planner.report.jsonout import dumps

        return dumps(self.model_dump())

    def to_frame(self):
        import pandas as pd

        if self.frame_rows is None:
            return pd.json_normalize(self.model_dump())
        return pd.json_normalize([row.model_dump() for row in getattr(self, self.frame_rows)])


class _Frozen(_Tables, BaseModel):
    # validators are built at a class's first use, not at import: a command builds only its own results
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class BomLine(_Frozen):
    category: str  # servers, nics, switches, transceivers, cables, racks, pdus, appliances
    sku: str = Field(description="the orderable part (a cable's part number for its length)")
    description: str
    vendor: str = ""
    quantity: int
    unit_usd: float
    extended_usd: float
    unit_w: float = 0.0
    source: str = Field(description="catalog file:row the price comes from")
    confidence: str = ""
    price_date: str = Field("", description="the date of the catalog row the price comes from")
    stale: bool = Field(False, description="the price is older than stale_price_months as of the plan's date")
    section: str = Field("compute", description="compute, storage, in-band, out-of-band, subnet manager, racks")
    catalog_sku: str = Field("", description="the catalog row's key, when the part number is one of its lengths")
    length_m: float | None = None
    note: str = ""
    lead_weeks: float | None = Field(None, description="weeks from order to delivery (planner/hardware/leadtime)")
    lead_basis: str = Field("", description="the catalog row or the LEAD_WEEKS family the lead time comes from")


class Delivery(_Frozen):
    """When the last part arrives, counted from the day the plan is priced (its as_of), and when a deadline
    counted from then ends."""

    as_of: str
    lead_weeks: float
    last_sku: str = Field(description="the part with the longest lead time (the first of equals, by cost)")
    basis: str
    delivered_by: str
    deadline_ends: str | None = Field(None, description="delivery + the requirement's days")


class DatedPrice(_Frozen):
    """One bill-of-materials line's price and how old it is."""

    sku: str
    price_date: str
    months_old: int
    extended_usd: float
    share_of_capex: float
    confidence: str
    source: str


class PriceAge(_Frozen):
    """How current the plan's prices are: its oldest decisive price (a line of at least decisive_share of
    capex) and every priced line older than stale_months."""

    as_of: str = Field(description="the day prices are judged against (scenario as_of, else the run's date)")
    decisive_share: float
    stale_months: int
    oldest_decisive: DatedPrice | None = None
    stale: list[DatedPrice] = Field(default_factory=list)
    stale_share_of_capex: float = 0.0


class LinkLine(_Frozen):
    """One kind of link of the plan: its two ends (catalog rows) and the parts along it, with how many such
    links at each orderable length; what `planner.catalog.connectors` validates."""

    section: str
    segment: str  # node-leaf, switch-switch, storage node-leaf, in-band node-switch, ...
    fabric: str
    a_kind: str  # nics or switches
    a_sku: str
    a_server: str | None = Field(None, description="the server whose own cages the NIC ports use (DGX)")
    b_sku: str  # the switch
    parts: list[str]  # optics skus, switch side first
    medium: str
    full_rate: bool = True
    count: int
    lengths: dict[str, int] = Field(default_factory=dict, description="run length (m) -> links")


class Choice(_Frozen):
    server: str
    gpu: str
    nodes: int
    gpus: int
    gpus_per_node: int
    nic: str | None
    nics_per_node: int
    nic_speed_gbps: float
    nic_usable_gbps: float = Field(0.0, description="per NIC: min(line rate, its PCIe slot's effective rate)")
    nic_pcie: str = ""
    gpus_per_nic: float = 0.0
    node_gbps: float = Field(description="usable inter-node Gbps per node (NIC rate capped by PCIe)")
    fabric: str
    switch: str | None
    tier: int
    topology: str = ""
    placement: str = ""
    oversubscription: float
    switches_by_tier: dict[str, int]
    links: str
    micro_batch: int
    grad_accum: int | None
    fabric_text: str
    tp: int = 1
    pp: int = 1
    vp: int = 1
    cp: int = 1
    ep: int = 1
    pp_balanced: bool = Field(False, description="the embedding and the loss each take a layer's pipeline slot")
    checkpointing: str = Field("", description="activation recompute: full, selective, op or none")
    dp: int = Field(0, description="data-parallel ranks: gpus / (tp x pp x cp)")
    sharding: str = ""
    layout: str = Field("", description="the parallel layout, e.g. TP 8 x PP 16 (VP 4) x CP 1 x EP 1")
    su_local: bool = Field(False, description="the job stays within one rail-optimised scalable unit")


class Metrics(_Frozen):
    achieved_tflops_per_gpu: float
    mfu: float
    t_compute_s: float
    t_comm_s: float
    t_step_s: float = Field(description="one micro-step")
    t_optimizer_step_s: float | None
    tokens_per_s: float = Field(description="planned throughput: the pessimistic outcome when confidence is set")
    tokens_per_s_point: float = Field(description="the model's point prediction")
    tokens_per_s_p10: float = Field(description="p10 of the out-of-publication error range")
    tokens_per_s_p90: float = Field(description="p90 of the out-of-publication error range")
    range_group: str = Field("", description="the validation group of the range: gpu|framework|fabric, ..., all")
    confidence: float | None = Field(None, description="planned for the outcome reached with this probability")
    training_days: float | None
    memory_per_gpu_gib: float
    usable_hbm_gib: float
    bytes_per_node_per_step: float
    binding: str
    t_comm_exposed_s: float = Field(0.0, description="communication not hidden behind compute, per micro-step")
    binding_label: str = Field("", description="binding, weighed by the exposed-communication share")
    goodput: float | None = Field(None, description="share of wall-clock time that trains (deadline runs)")
    effective_training_days: float | None = Field(None, description="training days / goodput: calendar days")
    usd_per_million_tokens: float | None = Field(
        None, description="TCO over the horizon / the tokens the cluster trains in it at this rate (goodput counted)"
    )
    cost_to_train_usd: float | None = Field(None, description="the run's tokens at usd_per_million_tokens")
    t_bubble_s: float = Field(0.0, description="pipeline bubble per micro-step (idle stages)")
    t_comm_tp_s: float = Field(0.0, description="exposed tensor- and expert-parallel communication per micro-step")
    bubble: float = Field(0.0, description="pipeline bubble as a share of the busy time, (pp-1)/(vp m)")
    tp_bytes_per_domain_per_step: float = Field(
        0.0, description="tensor/expert-parallel bytes a scale-up domain sends over the network per micro-step"
    )
    bytes_per_gpu_scale_up_per_step: float = Field(
        0.0, description="bytes each GPU moves over its scale-up links per micro-step (all dimensions)"
    )

    @property
    def trained_tokens_per_s(self) -> float:
        """Tokens/s at the plan's goodput (the calendar rate: what a token's cost and the output objectives use)."""
        return self.tokens_per_s * (self.goodput if self.goodput is not None else 1.0)


class CostBreakdown(_Frozen):
    capex_usd: float
    by_category: dict[str, float]
    by_section: dict[str, float] = Field(default_factory=dict, description="servers, compute fabric, storage, ...")
    power_kw: float = Field(description="nameplate IT power")
    draw_kw: float = Field(description="expected training draw (server_draw_fraction x servers + network)")
    energy_usd: float = Field(description="energy over the objective horizon, with PUE")
    pue: float = Field(1.0, description="the plan's PUE: its servers' by cooling, the network's at objective.pue")
    tco_usd: float = Field(description="capex + energy + colocation + support + staff over the horizon")
    objective_usd: float
    years: float = Field(0.0, description="the horizon of energy, colocation, support and staff")
    colocation_usd: float = Field(0.0, description="nameplate kW x $/kW-month over the horizon")
    support_usd: float = Field(0.0, description="support contracts: a yearly share of capex over the horizon")
    staff_usd: float = Field(0.0, description="FTEs x cost per FTE-year over the horizon")


class Schedule(_Frozen):
    """How a run with a deadline meets it once interruptions, restarts and checkpoints are counted."""

    deadline_days: float
    schedule_margin: float
    goodput: float
    goodput_given: bool = Field(description="the scenario gave the goodput instead of the model")
    nodes: int
    training_days: float = Field(description="uninterrupted training time")
    effective_days: float = Field(description="calendar days: training days / goodput")
    interruptions_expected: float
    interruptions_per_1000_node_days: float = Field(description="the plan's node interruptions per node-day x 1000")
    interruptions_by_part: dict[str, float] = Field(
        default_factory=dict, description="node interruptions expected over the run, by the kind of part that fails"
    )
    interruptions_from: str = Field(
        "bill of materials", description="'bill of materials' (parts x failure rates) or 'per node' (a given rate)"
    )
    restart_minutes: float
    checkpoint_interval_minutes: float | None = Field(description="None: no interruptions, no need")
    checkpoint_interval_young_daly: bool
    checkpoint_write_s: float
    checkpoint_share: float
    lost_work_share: float
    restart_share: float = Field(description="restarts, and the waits for repairs (repair_wait_share)")
    repair_wait_share: float = Field(0.0, description="node failures that find no spare free wait for the repair")
    spare_wait_probability: float = Field(0.0, description="the chance a GPU, host or NIC failure finds no spare")
    spare_nodes: int = 0
    repair_hours: float = 0.0
    meets_deadline: bool


class Summary(_Frozen):
    """A compact plan, for alternatives and per-fabric / per-NIC-speed bests."""

    label: str
    choice: Choice
    metrics: Metrics
    cost: CostBreakdown
    delta_usd: float = 0.0
    uncertainty_usd: float = Field(0.0, description="price uncertainty of the parts it does not share with the plan")
    tie: bool = Field(False, description="the difference is within that uncertainty")
    decides: str = ""


class Plan(_Frozen):
    frame_rows: ClassVar[str | None] = "bom"
    scenario: str
    status: str
    solver: str
    gap: float | None
    solve_seconds: float = 0.0
    objective: str
    choice: Choice
    metrics: Metrics
    cost: CostBreakdown
    bom: list[BomLine]
    links: list[LinkLine] = Field(default_factory=list)
    layout: dict[str, float | int | str] = Field(default_factory=dict)
    not_priced: list[str] = Field(default_factory=list)
    why: list[str] = Field(default_factory=list)
    per_fabric: list[Summary] = Field(default_factory=list)
    per_nic_speed: list[Summary] = Field(default_factory=list)
    per_gpu: list[Summary] = Field(default_factory=list, description="the best plan of each allowed GPU")
    alternatives: list[Summary] = Field(default_factory=list)
    alternatives_note: str = Field("", description="why fewer alternatives came back than were asked for")
    candidates: int = 0
    calibration: str = ""
    schedule: Schedule | None = None
    prices: PriceAge | None = None
    delivery: Delivery | None = None


# ---------------------------------------------------------------- renting (planner cloud)


class CloudChoice(_Frozen):
    """One offering at one instance count and pricing mix, with the model's figures."""

    provider: str
    instance: str
    region: str
    gpu: str
    instances: int
    gpus: int
    micro_batch: int
    pricing_mix: dict[str, int]
    fabric: str
    internode_gbps: float | None
    usd_per_h: float
    hours: float | None
    days: float | None
    cost_usd: float
    tflops_per_gpu: float
    mfu: float
    tokens_per_s: float
    memory_per_gpu_gib: float
    binding: str
    status: str
    meets_requirement: bool = True
    billed_days: dict[str, float] = Field(
        default_factory=dict, description="days billed per instance per pricing (a Capacity Block bills whole blocks)"
    )
    goodput: float | None = Field(None, description="share of wall-clock time that trains")
    interruptions_expected: float | None = None
    uninterrupted_days: float | None = Field(None, description="training days without interruptions")
    usd_per_instance_h: dict[str, float] = Field(default_factory=dict, description="hourly rate per pricing model")
    layout: str = Field("", description="the parallel layout the planner chose, e.g. TP 8 x PP 4 x CP 1 x EP 1")
    grad_accum: float | None = Field(None, description="micro-batches per optimizer step at that layout")
    checkpointing: str = Field("", description="activation recompute: full, selective, op or none")


class RankedOffering(_Frozen):
    """An offering at one pure pricing model, at its cheapest micro-batch and count."""

    provider: str
    instance: str
    region: str
    gpu: str
    pricing: str
    instances: int
    gpus: int
    micro_batch: int
    fabric: str
    tflops_per_gpu: float
    days: float | None
    usd_per_h: float
    cost_usd: float
    usd_per_pflop_day: float
    billed_days: float | None = None
    goodput: float | None = None
    confidence: str = Field("", description="the cloud row's confidence")
    price_date: str = Field("", description="the cloud row's date")
    stale: bool = Field(False, description="the price is older than stale_price_months as of the run")


class ExcludedOffering(_Frozen):
    provider: str
    instance: str
    region: str
    gpu: str
    reason: str


class CloudPlan(_Frozen):
    frame_rows: ClassVar[str | None] = "ranking"
    scenario: str
    cost_basis: str = Field(description="'cost to train' with a token count, else 'cost per hour'")
    choice: CloudChoice | None
    ranking: list[RankedOffering]
    excluded: list[ExcludedOffering]
    calibration: str
    terms: list[str] = Field(default_factory=list, description="what the costs assume: pricing, spot, capacity")


class CommittedBreakEven(_Frozen):
    """Buying against renting the purchase's throughput on a 1- or 3-year commitment (rate x hours, whole terms)."""

    pricing: str
    offering: str
    instances: int
    rent_same_throughput_usd_per_h: float
    break_even_months: float | None
    term_months: float
    note: str


class BuyVsRent(_Frozen):
    """The purchase beside renting the same throughput: months of full use after which buying is cheaper."""

    purchase_capex_usd: float
    purchase_energy_usd_per_h: float
    purchase_tco_usd: float
    rent_same_throughput_usd_per_h: float
    break_even_months: float | None
    cloud: CloudChoice
    note: str
    purchase_running_usd_per_h: float = Field(0.0, description="energy + colocation + support + staff per hour")
    pricing_compared: str = Field("", description="the pricing models of the rental compared with")
    committed: list[CommittedBreakEven] = Field(
        default_factory=list, description="the same comparison against each commitment term sold"
    )


# ---------------------------------------------------------------- serving (planner inference)


class CostLine(_Frozen):
    """One priced line of a serving configuration: what, how many, at what unit price."""

    item: str
    quantity: int
    unit_usd: float
    extended_usd: float


class InferenceChoice(_Frozen):
    server: str
    gpu: str
    gpus_per_machine: int
    machines: int
    gpus: int
    dram_gib_per_machine: float | None
    nvme: str | None
    nvme_per_machine: int
    nic: str | None
    nics_per_machine: int
    network: str
    usd: float
    power_kw: float
    latency_s: float
    bottleneck: str
    streaming_gb_per_s: float
    weights_gb_per_machine: dict[str, float]
    delta_usd: float = 0.0
    server_price_date: str = Field("", description="the server's catalog row date")
    server_price_stale: bool = Field(False, description="that price is older than stale_price_months today")
    lines: list[CostLine] = Field(default_factory=list, description="usd by line: servers, NICs, drives, network")


class LadderStep(_Frozen):
    """One link of a machine's bandwidth ladder: its rate, the bytes it moves per pass, its time."""

    link: str
    gb_per_s: float | None
    gb_per_pass: float | None
    seconds: float
    detail: str
    bottleneck: bool


class SweepPoint(_Frozen):
    machines: int
    latency_s: float
    bottleneck: str
    fits: bool


class InferencePlan(_Frozen):
    frame_rows: ClassVar[str | None] = "machine_sweep"
    weights_gb: float
    latency_target_s: float
    batch: int
    required_gb_per_s: float
    choice: InferenceChoice
    ladder: list[LadderStep]
    machine_sweep: list[SweepPoint]
    alternatives: list[InferenceChoice]
    calibration: str


# ---------------------------------------------------------------- the fleet (planner fleet)


class FleetPurchase(_Frozen):
    """Servers delivered in one period from one vendor into one pool, at one tier."""

    period: str
    server: str
    vendor: str
    pool: str
    units: int
    tier: str = Field(description="the volume tier the period's order reaches ('list' without tiers)")
    unit_usd: float = Field(description="server price per unit at that tier")
    extra_usd_per_node: float = Field(description="NICs the server does not include, and NIC-side links")
    extra_nics_per_node: int
    extended_usd: float
    source: str = Field(description="catalog file:row of the server")
    price_date: str = Field("", description="the catalog row's date, or 'fleet terms' for a price the file gives")
    stale: bool = Field(False, description="a catalog price older than stale_price_months today")


class FleetNetworkPurchase(_Frozen):
    period: str
    pool: str
    item: str  # leaf switches, spine switches, switch-side links, uplinks
    sku: str
    quantity: int
    unit_usd: float
    extended_usd: float


class FleetPool(_Frozen):
    """Identical nodes on one network, per period."""

    name: str
    gpu: str
    gpus_per_node: int
    nic: str | None
    nics_per_node: int
    fabric: str
    switch: str | None
    node_gbps: float
    topology: str
    nodes: list[int]
    installed: list[int]
    gpus_busy: list[float] = Field(description="GPUs held by training runs and serving replicas")
    leaves: list[int]
    spines: list[int]


class FleetJobRun(_Frozen):
    job: str
    where: str
    kind: str  # pool or cloud
    nodes: int
    gpus: int
    micro_batch: int
    start: str
    finish: str
    periods: list[str]
    deadline: str
    late_periods: int
    layout: str = Field("", description="the parallel layout the planner chose for the run")
    checkpointing: str = Field("", description="activation recompute: full, selective, op or none")
    achieved_tflops_per_gpu: float
    tokens_per_s: float
    days: float = Field(description="days of compute the run needs at this size")
    finish_date: str = Field(description="when the tokens are done, inside the finish period")
    cloud_usd: float
    penalty_usd: float


class FleetPlacement(_Frozen):
    """One service's replicas on one resource in one period."""

    service: str
    period: str
    where: str
    kind: str
    replicas: float = Field(description="counted in fractions: a fraction is a share of a replica's GPU time")
    layout: str = Field("tp", description="tp: tensor parallel; ep: expert parallel (a MoE model)")
    gpus_per_replica: int
    batch: int
    ms_per_token: float
    tokens_per_s: float
    demand_tokens_per_s: float


class FleetCashFlow(_Frozen):
    period: str
    servers_usd: float
    network_usd: float
    energy_usd: float
    colocation_usd: float
    cloud_usd: float
    total_usd: float
    discount: float
    present_value_usd: float
    cumulative_usd: float
    power_kw: float = Field(description="nameplate IT power in service")
    site_kw: float | None


class FleetAttribution(_Frozen):
    """A workload's share of the discounted cost: owned capacity by GPU-periods used (each pool's cost over
    its GPU-periods in service), cloud bills and penalties directly; idle capacity is its own line."""

    workload: str
    kind: str
    gpu_periods: float
    owned_usd: float
    cloud_usd: float
    penalty_usd: float
    total_usd: float


class FleetRelaxation(_Frozen):
    relaxed: str
    changes: list[str]
    objective_usd: float | None


class FleetPlan(_Frozen):
    frame_rows: ClassVar[str | None] = "purchases"
    name: str
    status: str = Field(description="optimal, feasible (gap or time limit), infeasible (see relaxations)")
    solver: str
    solver_threads: int = Field(description="threads the solver searched with")
    repeat_note: str = Field(description="why a rerun may return another plan ('' when it returns this one)")
    gap_requested: float
    gap_proven: float | None
    solve_seconds: float
    build_seconds: float
    objective_usd: float | None = Field(description="discounted cost over the horizon, net of residual value")
    residual_usd: float = Field(description="value credited for what is left at the end (discounted)")
    penalties_usd: float
    model_size: dict[str, int]
    enumeration_log10: float = Field(description="log10 of the plans a brute force would have to list")
    periods: list[str]
    purchases: list[FleetPurchase]
    network: list[FleetNetworkPurchase]
    pools: list[FleetPool]
    jobs: list[FleetJobRun]
    placements: list[FleetPlacement]
    cash_flow: list[FleetCashFlow]
    attribution: list[FleetAttribution]
    binding: list[str]
    infeasible: list[str] = Field(default_factory=list, description="what cannot be met, when status is infeasible")
    relaxations: list[FleetRelaxation] = Field(default_factory=list)
    shown: str = Field("", description="which plan is shown when the fleet is infeasible: the cheapest relaxation")
    assumptions: list[str]
    calibration: str

    @computed_field(description="a rerun of the same input returns this plan")
    @property
    def repeatable(self) -> bool:
        return not self.repeat_note


# ---------------------------------------------------------------- one configuration (planner predict)


class Prediction(_Tables, BaseModel):
    """What `planner predict` reports for one configuration: the figures below, and every other figure of the
    model (the per-term times, the layout, the architecture) as further fields, as --json prints them."""

    model_config = ConfigDict(extra="allow", frozen=True, defer_build=True)

    model_name: str | None = None
    gpu: str
    gpus: int
    gpus_per_node: int
    node_gbps: float
    fabric: str
    micro_batch: float
    tokens_per_s: float = Field(description="at the point prediction")
    tokens_per_s_p10: float = Field(description="the p10 of the out-of-publication errors for this group")
    tokens_per_s_p90: float
    achieved_tflops_per_gpu: float
    mfu: float
    t_step_s: float = Field(description="one micro-step")
    binding: str = Field(description="what bounds the step: compute, network bandwidth, latency, memory")
    memory_per_gpu_gib: float
    usable_hbm_gib: float
    fits_memory: bool
    calibration: str = ""


# ---------------------------------------------------------------- decisions under uncertainty (planner sweep)


class SweepChoice(_Frozen):
    """One purchase (a configuration at a node count) across a sweep's draws."""

    label: str
    configuration: int = Field(description="0 is the point plan's; the rest by the point plan's objective")
    server: str
    gpu: str
    nic: str | None
    fabric: str
    switch: str | None
    tier: int
    nodes: int
    gpus: int
    point_cost_usd: float = Field(description="the objective's money at the catalog prices")
    tokens_per_s: float = Field(description="the point prediction, before goodput")
    p_optimal: float = Field(description="share of draws in which it is the cheapest purchase meeting the deadline")
    p_deadline_met: float
    expected_cost_usd: float = Field(
        description="the objective's money, lateness not counted (exact: draws are mean-one)"
    )
    expected_total_usd: float = Field(description="cost + the late cost (late_usd_per_day x days late)")
    cost_p10_usd: float
    cost_p90_usd: float
    days_p50: float
    days_p90: float
    delivery_weeks: float = Field(description="the last part's lead time as stated (planner/hardware/leadtime)")
    delivery_weeks_p90: float
    expected_regret_usd: float = Field(
        description="its total (cost + late cost) minus the draw's cheapest purchase meeting the deadline, averaged"
    )
    worst_decile_regret_usd: float = Field(description="the mean regret over its worst 10% of draws (CVaR 90%)")


class Distribution(_Frozen):
    """A quantity over the draws: quantiles, mean and a histogram."""

    name: str
    unit: str
    mean: float
    p5: float
    p10: float
    p50: float
    p90: float
    p95: float
    edges: list[float] = Field(description="histogram bin edges (one more than the counts)")
    counts: list[int]


class FuturePolicy(_Frozen):
    """A first-stage fleet decision across sampled futures (planner sweep on a fleet file)."""

    policy: str
    purchases: list[dict] = Field(default_factory=list, description="what it fixes in the first period it buys")
    expected_cost_usd: float
    cost_p10_usd: float
    cost_p50_usd: float
    cost_p90_usd: float
    worst_cost_usd: float
    p_cheaper: float
    expected_regret_usd: float
    costs_usd: list[float] = Field(default_factory=list, description="per future, in order")


class Sweep(_Frozen):
    """`planner sweep`: a plan's outcome across draws of prices, throughput, interruptions and lead times, the
    probability each purchase is the cheapest, each purchase's regret, and the choice of a robust objective."""

    frame_rows: ClassVar[str | None] = "choices"
    scenario: str
    kind: str = Field(description="plan (purchases), rent (rentals) or fleet (buy now or wait across futures)")
    draws: int
    seed: int
    engine: str = Field(description="how the draws ran: Dask (scheduler, workers) or in this process")
    objective: str = Field(description="point, expected-cost (with p_deadline) or regret")
    p_deadline: float | None = None
    deadline_days: float | None = None
    late_usd_per_day: float | None = None
    late_basis: str = ""
    point: SweepChoice | None = None
    chosen: SweepChoice | None = None
    choices: list[SweepChoice] = Field(default_factory=list)
    compared: str = Field("", description="what the choices are: configurations x counts, and how chosen")
    distributions: list[Distribution] = Field(default_factory=list, description="of the chosen plan")
    point_distributions: list[Distribution] = Field(default_factory=list)
    risk: list[str] = Field(default_factory=list, description="the answer in sentences")
    policies: list[FuturePolicy] = Field(default_factory=list)

    @property
    def noun(self) -> str:
        """What the choices are: purchases, or rentals."""
        return "rental" if self.kind == "rent" else "purchase"

    def with_point_and_chosen(self, rows: list[SweepChoice]) -> list[SweepChoice]:
        """`rows`, then the point plan and the recommended choice where they are not among them (a report's
        shortened table keeps both)."""
        extra = [c for c in (self.point, self.chosen) if c is not None and all(c.label != r.label for r in rows)]
        return rows + list({c.label: c for c in extra}.values())

    assumptions: list[dict] = Field(default_factory=list, description="name, value, unit, source")
    calibration: str = ""
    seconds: float = 0.0


# ---------------------------------------------------------------- serving to latency targets (planner serve)


class ServingReplica(_Frozen):
    """One kind of server in a serving plan: its replicas' layout and operating point at the targets."""

    server: str
    gpu: str
    source: str = Field(description="catalog file:row of the server")
    price_date: str
    servers: int = Field(description="servers bought, or instances rented")
    gpus_per_server: int = Field(description="GPUs in one (its replicas may leave some idle)")
    unit_usd: float = Field(description="a server's price, or an instance's on-demand USD per hour")
    tco_usd: float | None = Field(description="buying: one server's TCO over the years, as planner plan counts it")
    power_w: float = Field(description="a server's nameplate power (0 for an instance: in its price)")
    precision: str = Field(description="weights (and KV cache: fp8 under fp4 weights)")
    mode: str = Field(description="aggregated (prefill and decode on every replica) or disaggregated")
    layout: str = Field(
        description="tp: tensor parallel over the replica; ep: data-parallel attention, experts split (the decode "
        "replicas' when disaggregated)"
    )
    replica_gpus: int
    replicas_per_server: int
    replicas: int
    prefill_layout: str = Field(description="disaggregated: the prefill replicas' layout ('' when aggregated)")
    prefill_replica_gpus: int
    prefill_replicas: int = Field(description="disaggregated: prefill-only replicas in all the servers (else 0)")
    rate_per_replica: float = Field(description="requests/s one (decode) replica serves within the targets")
    batch: float = Field(description="sequences decoded together at that rate (mean)")
    max_sequences: float = Field(description="sequences the KV cache (or the engine's cap) holds")
    ttft_s: float = Field(description="time to first token at the percentile, at that rate")
    tpot_s: float = Field(description="time per output token at the percentile, at that rate")
    weights_gib_per_gpu: float
    output_tokens_per_s_per_gpu: float = Field(description="at the replica's rate")
    binds: str = Field(description="what stops a replica serving more: TPOT, TTFT, KV cache or throughput")


class ServingOption(_Frozen):
    """The cheapest purchase (or rental) of one kind of server (or instance) alone: the ranking."""

    server: str
    gpu: str
    servers: int
    capex_usd: float = Field(description="their price (a rental: USD per hour)")
    tco_usd: float | None = Field(description="buying: their TCO over the years, as planner plan counts it")
    precision: str
    mode: str
    layout: str
    replica_gpus: int
    prefill_layout: str
    prefill_replica_gpus: int
    rate_per_server: float
    binds: str


class ServingPoint(_Frozen):
    """One point of a machine's latency/throughput curve (the chosen layout at a share of its rate)."""

    rate_per_server: float = Field(description="requests/s the machine serves")
    ttft_s: float = Field(description="at the percentile")
    tpot_s: float = Field(description="at the percentile")
    batch: float = Field(description="sequences decoded together on a (decode) replica")
    output_tokens_per_s_per_gpu: float


class ServingPlan(_Frozen):
    frame_rows: ClassVar[str | None] = "ranking"
    model: str
    purchase: str = Field(description="buy, or rent on demand")
    objective: str = Field(description="what was minimised: capex, tco, or usd per hour (renting)")
    rate_per_s: float
    input_tokens: int = Field(description="mean tokens in per request")
    output_tokens: int = Field(description="mean tokens out per request")
    input_cv: float = Field(description="the input lengths' standard deviation / mean (0: all alike)")
    output_cv: float = Field(description="the output lengths' standard deviation / mean")
    percentile: float
    ttft_target_s: float | None
    tpot_target_s: float | None
    status: str
    solver: str
    mix: list[ServingReplica]
    capex_usd: float = Field(description="the servers' price (0 when renting)")
    tco_usd: float | None = Field(description="buying: the TCO over the years, as planner plan counts it")
    usd_per_hour: float | None = Field(description="renting: the instances' on-demand USD per hour")
    power_w: float
    capacity_per_s: float = Field(description="requests/s the purchase serves within the targets")
    utilisation: float = Field(description="the asked rate / that capacity")
    gpus: int = Field(description="GPUs bought or rented")
    output_tokens_per_s_per_gpu: float = Field(description="at the asked rate, per GPU bought or rented")
    usd_per_million_output_tokens: float = Field(
        description="buying: the TCO over the years; renting: the hourly price; per million output tokens at the "
        "asked rate"
    )
    years: float
    ranking: list[ServingOption]
    curve_server: str = Field(description="the machine kind the curve is of: the plan's largest share of capacity")
    curve: list[ServingPoint]
    not_serving: list[str] = Field(description="servers that cannot serve the model within the targets, and why")
    assumptions: list[dict]
