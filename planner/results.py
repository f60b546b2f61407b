"""Typed results of every question the planner answers (Plan, CloudPlan, InferencePlan), as plain validated
data: JSON-ready, no pulp objects. The library builds them; report/ renders them and never builds them."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


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
    section: str = Field("compute", description="compute, storage, in-band, out-of-band, subnet manager, racks")
    catalog_sku: str = Field("", description="the catalog row's key, when the part number is one of its lengths")
    length_m: float | None = None
    note: str = ""


class LinkLine(_Frozen):
    """One kind of link of the plan: its two ends (catalog rows) and the parts along it, with how many such
    links at each orderable length; what `planner.connectors` validates."""

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


class Metrics(_Frozen):
    achieved_tflops_per_gpu: float
    mfu: float
    t_compute_s: float
    t_comm_s: float
    t_step_s: float = Field(description="one micro-step")
    t_optimizer_step_s: float | None
    tokens_per_s: float
    training_days: float | None
    memory_per_gpu_gib: float
    usable_hbm_gib: float
    bytes_per_node_per_step: float
    binding: str


class CostBreakdown(_Frozen):
    capex_usd: float
    by_category: dict[str, float]
    by_section: dict[str, float] = Field(default_factory=dict, description="servers, compute fabric, storage, ...")
    power_kw: float = Field(description="nameplate IT power")
    draw_kw: float = Field(description="expected training draw (server_draw_fraction x servers + network)")
    energy_usd: float = Field(description="energy over the objective horizon, with PUE")
    tco_usd: float
    objective_usd: float


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
    alternatives: list[Summary] = Field(default_factory=list)
    candidates: int = 0
    calibration: str = ""


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


class ExcludedOffering(_Frozen):
    provider: str
    instance: str
    region: str
    gpu: str
    reason: str


class CloudPlan(_Frozen):
    scenario: str
    cost_basis: str = Field(description="'cost to train' with a token count, else 'cost per hour'")
    choice: CloudChoice | None
    ranking: list[RankedOffering]
    excluded: list[ExcludedOffering]
    calibration: str


class BuyVsRent(_Frozen):
    """The purchase beside renting the same throughput: months of full use after which buying is cheaper."""

    purchase_capex_usd: float
    purchase_energy_usd_per_h: float
    purchase_tco_usd: float
    rent_same_throughput_usd_per_h: float
    break_even_months: float | None
    cloud: CloudChoice
    note: str


# ---------------------------------------------------------------- serving (planner inference)


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
    weights_gb: float
    latency_target_s: float
    batch: int
    required_gb_per_s: float
    choice: InferenceChoice
    ladder: list[LadderStep]
    machine_sweep: list[SweepPoint]
    alternatives: list[InferenceChoice]
    calibration: str
