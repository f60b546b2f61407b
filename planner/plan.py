"""The Plan: what the planner recommends, as plain validated data (JSON-ready, no pulp objects)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BomLine(_Frozen):
    category: str  # servers, nics, switches, transceivers, cables
    sku: str
    description: str
    vendor: str = ""
    quantity: int
    unit_usd: float
    extended_usd: float
    unit_w: float = 0.0
    source: str = Field(description="catalog file:row the price comes from")
    confidence: str = ""


class Choice(_Frozen):
    server: str
    gpu: str
    nodes: int
    gpus: int
    gpus_per_node: int
    nic: str | None
    nics_per_node: int
    nic_speed_gbps: float
    node_gbps: float = Field(description="usable inter-node Gbps per node (NIC rate capped by PCIe)")
    fabric: str
    switch: str | None
    tier: int
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


class Cost(_Frozen):
    capex_usd: float
    by_category: dict[str, float]
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
    cost: Cost
    delta_usd: float = 0.0


class Plan(_Frozen):
    scenario: str
    status: str
    solver: str
    gap: float | None
    objective: str
    choice: Choice
    metrics: Metrics
    cost: Cost
    bom: list[BomLine]
    why: list[str] = Field(default_factory=list)
    per_fabric: list[Summary] = Field(default_factory=list)
    per_nic_speed: list[Summary] = Field(default_factory=list)
    alternatives: list[Summary] = Field(default_factory=list)
    candidates: int = 0
    calibration: str = ""
