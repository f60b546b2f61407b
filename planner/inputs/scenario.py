"""The planning scenario: what to train, what is required, what is allowed. YAML in, pydantic-validated.

Quantities accept units ("176B", "2T", "30M", "$30M", "500kW"). CLI flags override fields through
`apply_overrides` before validation, so an override is checked exactly like the file.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from planner.assumptions import facility as D
from planner.assumptions import hardware as H
from planner.base import limits as L
from planner.base.errors import ScenarioError
from planner.base.fileio import InputFileError, read_text
from planner.base.safeyaml import YamlProblem, load_yaml
from planner.base.text import check_value
from planner.catalog.rows import Count, Params, PlanFabric, count, error_text, quantity_type

USD = quantity_type("usd", "$30M", gt=0)
KW = Annotated[float, BeforeValidator(lambda v: _kw(v)), Field(gt=0, le=L.MAX_QUANTITY["w"] / 1e3)]
Days = quantity_type("days", "30d", gt=0)
TFLOPs = quantity_type("tflops", "40", gt=0)
ModelParams = quantity_type("count", "176B", gt=0, le=L.MAX_PARAMS)


def _kw(value: object) -> object:
    from planner.base.units import parse_quantity

    if isinstance(value, str) and value.strip().lower().endswith("w"):
        return parse_quantity(value, "w") / 1e3
    return parse_quantity(value, "count")


class _Strict(BaseModel):
    # allow_inf_nan=False: a .inf or .nan in any float field is refused, never handed to the solver
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _sane(cls, value: object, info: ValidationInfo) -> object:
        """Text without control characters, lists and dicts of at most MAX_LIST_ITEMS (sections are
        checked field by field by their own model, so a problem names the field)."""
        annotation = cls.model_fields[info.field_name].annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return value
        return check_value(value, L.MAX_NAME_CHARS)


class Workload(_Strict):
    model: str | None = Field(None, description="A model name from models.csv (gives params and architecture).")
    params: ModelParams | None = Field(None, description="Parameter count when no model is named, e.g. 176B.")
    seq_len: Count | None = Field(
        None, ge=1, le=L.MAX_SEQ_LEN, description="Tokens per sequence (default: the model's)."
    )
    micro_batches: list[count(ge=1, le=L.MAX_MICRO_BATCH)] = Field(
        default_factory=lambda: [1, 2, 4, 8], min_length=1, description="Micro-batch sizes the plan may pick."
    )
    global_batch: Count | None = Field(
        None, ge=1, description="Sequences per optimizer step; micro_batch x GPUs x grad_accum must equal it."
    )
    precision: Literal["bf16", "fp16", "fp8", "fp8-rowwise", "mxfp8", "fp4"] = Field(
        "bf16",
        description="Precision of the linear layers' GEMMs: bf16/fp16, fp8 (tensorwise scaling, as Transformer "
        "Engine or torchao float8), fp8-rowwise, mxfp8 (32-element block scales, Blackwell), or fp4 (NVFP4 on "
        "Blackwell); attention and logits stay bf16.",
    )
    grad_dtype: Literal["bf16", "fp16", "fp32"] | None = Field(
        None, description="Default: the precision (bf16 for fp8 and fp4 training)."
    )
    stack: Literal["eager", "compile"] = Field(
        "eager", description="eager PyTorch, or torch.compile (fused element-wise kernels, fewer launches)."
    )
    fp8_allgather: bool = Field(
        False,
        description="With fp8 (tensorwise): FSDP2 all-gathers the weights in fp8, 1 byte each (torchao's default: "
        "off).",
    )
    sharding: Literal["full", "hybrid", "zero2", "zero1", "none"] | None = Field(
        None,
        description="full: ZeRO-3 / FSDP over the data-parallel ranks; hybrid (HSDP, FSDP only): within groups; "
        "zero2: ZeRO-2 (fsdp, megatron: weights kept whole, gradients and optimizer states sharded, Llama 3's); "
        "zero1: Megatron's distributed optimizer; none: DDP. Default: full, zero1 with framework megatron.",
    )
    shard_gpus: count(ge=1, le=L.MAX_GPUS) | None = Field(
        None, description="GPUs per shard group with hybrid sharding (default: the scale-up domain)."
    )
    checkpointing: bool | Literal["full", "selective", "op", "none", "search"] = Field(
        "full",
        description="Activation checkpointing: full, selective (attention core only), op (torchtitan's per-op "
        "policy: every second matmul re-run) or none (true = full); search: the planner chooses per candidate "
        "(none, selective or full with megatron; none, op or full with fsdp; none or full with deepspeed), the "
        "fastest that fits.",
    )
    framework: Literal["deepspeed", "fsdp", "megatron"] = Field(
        "deepspeed",
        description="DeepSpeed ZeRO-3 (0.6 or later, data parallel only), PyTorch FSDP (with torchtitan's tensor, "
        "pipeline, context and expert parallelism) or Megatron-LM / NeMo (Megatron-Core).",
    )
    layout: Literal["search", "data-parallel"] = Field(
        "search",
        description="search: the planner chooses tp, pp, vp, cp and ep for every candidate (fsdp, megatron); "
        "data-parallel: sharded data parallelism over every GPU. Giving any of tp, pp, vp, cp, ep fixes the layout.",
    )
    tp: count(ge=1, le=L.MAX_GPUS) | None = Field(None, description="Tensor-parallel ranks (fixes the layout).")
    pp: count(ge=1, le=L.MAX_GPUS) | None = Field(None, description="Pipeline stages (fixes the layout).")
    vp: count(ge=1, le=L.MAX_GPUS) | None = Field(None, description="Virtual stages per pipeline rank.")
    cp: count(ge=1, le=L.MAX_GPUS) | None = Field(None, description="Context-parallel ranks (fixes the layout).")
    ep: count(ge=1, le=L.MAX_GPUS) | None = Field(None, description="Expert-parallel ranks (fixes the layout).")
    pp_balanced: bool | None = Field(
        None,
        description="true (fixes the layout, with pp): the embedding and the loss each take a layer's place in the "
        "pipeline split (Megatron-Core account_for_embedding/loss_in_pipeline_split; layers + 2 must divide by pp x "
        "vp); false: the search tries plain splits only; not given: the search tries both.",
    )
    tp_overlap: bool = Field(
        False, description="Tensor-parallel communication overlapped with the GEMMs (TE userbuffers, AsyncTP)."
    )
    offload: Literal["none", "cpu", "nvme"] = Field("none", description="Where the optimizer states and step live.")
    flash_attention: bool = True
    qwz: bool = False
    hpz: bool = False
    qgz: bool = False
    hierarchical: bool = False

    @model_validator(mode="after")
    def _one_model(self) -> Workload:
        if (self.model is None) == (self.params is None):
            raise ValueError("give exactly one of workload.model or workload.params")
        return self

    @model_validator(mode="after")
    def _layout_not_both(self) -> Workload:
        if self.layout == "data-parallel" and self.fixed_layout:
            raise ValueError("workload.layout data-parallel contradicts the tp/pp/vp/cp/ep given: drop one")
        return self

    @property
    def fixed_layout(self) -> bool:
        """Whether the scenario fixes the parallel layout (any of tp, pp, vp, cp, ep given)."""
        return any(getattr(self, k) is not None for k in ("tp", "pp", "vp", "cp", "ep")) or bool(self.pp_balanced)

    @property
    def searches_layout(self) -> bool:
        """Whether the planner chooses the layout: asked for, not fixed, and a framework that has one (DeepSpeed
        ZeRO-3, offload and hybrid sharding are modelled as data parallelism)."""
        flat = self.framework == "deepspeed" or self.offload != "none" or self.sharding == "hybrid"
        return self.layout == "search" and not self.fixed_layout and not flat


class Requirement(_Strict):
    gpus: count(ge=1, le=L.MAX_GPUS) | None = Field(None, description="A fixed GPU count.")
    tokens: Params | None = Field(None, description="Tokens to train, with days (a deadline).")
    days: Days | None = None
    min_tokens_per_s: Params | None = Field(None, description="A minimum total throughput.")
    schedule_margin: float = Field(
        0.0,
        ge=0,
        lt=1,
        description="With a deadline: finish this share of it early (0.1: within 27 of 30 days), counting "
        "the time interruptions cost (see reliability).",
    )

    @model_validator(mode="after")
    def _one_kind(self) -> Requirement:
        kinds = [
            self.gpus is not None,
            self.tokens is not None or self.days is not None,
            self.min_tokens_per_s is not None,
        ]
        if sum(kinds) != 1:
            raise ValueError("give exactly one requirement: gpus, or tokens with days, or min_tokens_per_s")
        if (self.tokens is None) != (self.days is None):
            raise ValueError("tokens and days go together (train this many tokens within this many days)")
        return self


class Objective(_Strict):
    kind: Literal["capex", "tco", "cost-per-token", "throughput", "days"] = Field(
        "capex",
        description="What the plan minimises: capex; TCO over the horizon; cost-per-token (TCO per trained token, "
        "each configuration at its node count with the least of it); or, within the budget or power "
        "cap, the most tokens/s (throughput) or the fewest training days (days), each configuration at the largest "
        "count the caps allow.",
    )
    years: float = Field(D.YEARS.value, gt=0, le=L.MAX_YEARS, description="TCO horizon (Epoch AI: 5-year server life).")
    usd_per_kwh: float = Field(
        D.USD_PER_KWH.value, ge=0, le=L.MAX_USD_PER_KWH, description="US industrial 2025 (Epoch AI)."
    )
    pue: float = Field(
        D.PUE.value,
        ge=1,
        le=L.MAX_PUE,
        description="Power usage effectiveness of air-cooled IT (Epoch AI modelling default, non-hyperscale).",
    )
    pue_liquid: float = Field(
        D.PUE_LIQUID.value,
        ge=1,
        le=L.MAX_PUE,
        description="Power usage effectiveness of the heat liquid cooling removes (a hybrid server: its liquid "
        "share at this PUE, the rest at pue). Estimate: warm-water direct-to-chip loops.",
    )
    server_draw_fraction: float = Field(
        D.SERVER_DRAW_FRACTION.value, gt=0, le=1, description="Training draw / server max power (Epoch AI)."
    )
    colocation_usd_per_kw_month: float = Field(
        D.COLOCATION_USD_PER_KW_MONTH.value,
        ge=0,
        le=L.MAX_USD_PER_KW_MONTH,
        description="Space, cooling and power delivery per kW of nameplate IT power per month (CBRE H2 2025 "
        "wholesale; 0 when you own the building and count it elsewhere).",
    )
    support_share_of_capex_per_year: float = Field(
        D.SUPPORT_SHARE_OF_CAPEX_PER_YEAR.value,
        ge=0,
        le=1,
        description="Hardware support contracts per year, as a share of capex (CTWatch 2006: 4-8%; low confidence).",
    )
    staff_fte: float = Field(
        0.0, ge=0, le=L.MAX_STAFF_FTE, description="Operations staff (full-time equivalents) charged to the cluster."
    )
    staff_usd_per_fte_year: float = Field(
        D.STAFF_USD_PER_FTE_YEAR.value,
        ge=0,
        le=L.MAX_USD_PER_FTE_YEAR,
        description="Cost per FTE-year (BLS median base wage; add overhead).",
    )


class Constraints(_Strict):
    budget_usd: USD | None = None
    power_kw: KW | None = Field(None, description="Cap on IT power at nameplate (servers, NICs, switches, optics).")
    max_nodes: Count = Field(2048, ge=1, le=L.MAX_NODES)
    gpus: list[str] | None = Field(None, description="Allowed GPU names or aliases.")
    servers: list[str] | None = Field(None, description="Allowed server names.")
    gpus_per_node: list[count(ge=1, le=L.MAX_GPUS_PER_NODE)] | None = Field(None, description="Allowed node sizes.")
    vendors: list[str] | None = Field(None, description="Allowed server vendors (substring, case-insensitive).")
    fabrics: list[PlanFabric] = Field(
        default_factory=lambda: ["ib", "roce", "spectrum-x"],
        min_length=1,
        description="ib (InfiniBand), roce (lossless RoCE: PFC and ECN configured), spectrum-x (Spectrum-4 "
        "switches with SuperNIC-class NICs).",
    )
    switches: list[str] | None = Field(None, description="Allowed compute-fabric switch SKUs.")
    topologies: list[Literal["rail", "leaf-spine", "rail-only"]] | None = Field(
        None,
        description="Fabric topologies: rail-optimised, plain leaf-spine and/or rail-only (no spines: every rail "
        "its own fabric, traffic between rails over NVLink; only asked for). Default: rail-optimised for nodes "
        "with one NIC per GPU (HGX/DGX, as DGX SuperPOD), else leaf-spine.",
    )
    planes: list[Literal[1, 2, 4]] = Field(
        default_factory=lambda: [1, 2],
        min_length=1,
        description="Fabric planes of a rail-optimised fabric: 2 or 4 put each port of a multi-port NIC on its own "
        "independent fabric (the DGX SuperPOD B300's twin-plane Spectrum-X).",
    )
    oversubscription: list[Annotated[float, Field(ge=1, le=L.MAX_OVERSUBSCRIPTION)]] = Field(
        default_factory=lambda: [1.0], min_length=1, description="Allowed leaf oversubscription ratios o (o:1)."
    )
    max_nics_per_host: count(ge=1, le=L.MAX_NICS_PER_HOST) | None = Field(
        None,
        validation_alias=AliasChoices("max_nics_per_host", "max_nics_per_node"),  # its name before hosts (schema 1)
        description="At most this many compute NICs per host (a server is one host; an NVL72 has 18).",
    )


class Cabling(_Strict):
    """Overrides of the cable runs the layout gives (None: from the layout)."""

    node_leaf_reach_m: float | None = Field(
        None, gt=0, le=L.MAX_REACH_M, description="Run NIC to leaf, metres (default: layout)."
    )
    switch_reach_m: float | None = Field(
        None, gt=0, le=L.MAX_REACH_M, description="Run between switch tiers, metres (default: layout)."
    )


class Layout(_Strict):
    """Racks and rows (planner/hardware/layout.py): nodes per rack from power and space, where leaves sit,
    cable runs."""

    rack_kw: float = Field(
        D.RACK_KW.value,
        gt=0,
        le=L.MAX_RACK_KW,
        description="IT power per air-cooled rack, kW (DGX SuperPOD H100: 4 x 10.2 kW DGX, RA-11333-001).",
    )
    liquid_rack_kw: float = Field(
        D.LIQUID_RACK_KW.value,
        gt=0,
        le=L.MAX_RACK_KW,
        description="IT power per liquid-cooled rack position, kW (a GB300 NVL72 rack peaks at 155 kW, Lenovo): "
        "liquid and hybrid servers stack to it; a rack-scale system must fit it.",
    )
    rack_units: int = Field(int(D.RACK_UNITS.value), ge=4, le=L.MAX_RACK_UNITS, description="Rack height, U.")
    reserved_units: int = Field(
        int(D.RESERVED_UNITS.value),
        ge=0,
        le=L.MAX_RACK_UNITS,
        description="U kept free in a compute rack (patch panels, ToR and OOB switches).",
    )
    rack_width_m: float = Field(D.RACK_WIDTH_M.value, gt=0, le=L.MAX_LAYOUT_M)
    row_pitch_m: float = Field(
        D.ROW_PITCH_M.value, gt=0, le=L.MAX_LAYOUT_M, description="Row to row: rack depth plus an aisle."
    )
    racks_per_row: int = Field(
        int(D.RACKS_PER_ROW.value),
        ge=1,
        le=L.MAX_RACKS_PER_ROW,
        description="Compute racks per row (a rail-optimised fabric: one scalable unit).",
    )
    leaf_placement: Literal["auto", "top-of-rack", "middle-of-row", "end-of-row"] = Field(
        "auto", description="auto: top-of-rack for leaf-spine, middle-of-row for rail-optimised (as SuperPOD)."
    )
    slack_m: float = Field(
        D.SLACK_M.value, ge=0, le=L.MAX_LAYOUT_M, description="Added to every cable run (service loops, dressing)."
    )
    rows_per_hall: int = Field(
        int(D.ROWS_PER_HALL.value),
        ge=1,
        le=L.MAX_RACKS_PER_ROW,
        description="Rows per data hall; halls stand side by side on a near-square floor, spines at its centre.",
    )
    hall_aisle_m: float = Field(D.HALL_AISLE_M.value, ge=0, le=L.MAX_LAYOUT_M, description="Between two halls.")

    @model_validator(mode="after")
    def _room_for_servers(self) -> Layout:
        if self.reserved_units >= self.rack_units:
            raise ValueError(
                f"layout.reserved_units ({self.reserved_units}) leaves no room in a {self.rack_units} U rack; "
                "reserve fewer units"
            )
        return self


class Include(_Strict):
    """Sections of the bill of materials beside the servers and the compute fabric; each on by default."""

    storage_network: bool = True
    inband_network: bool = True
    oob_network: bool = True
    subnet_manager: bool = Field(True, description="UFM appliances where InfiniBand switches are unmanaged.")
    storage_system: bool = Field(True, description="The shared file system itself (storage blocks).")
    installation: bool = Field(True, description="Installation and cabling labour (a sourced default line).")
    management_servers: bool = Field(True, description="Head, control-plane and login servers.")
    subnet_manager_slot: bool = Field(
        True,
        description="Hold one node's leaf ports of an InfiniBand fabric for the UFM's links, as the DGX SuperPOD"
        " builds (RA-11333-001 Table 7: 127 nodes in 4 SUs); false sizes the reference's idealised full SUs.",
    )
    racks: bool = Field(True, description="Racks and PDUs.")
    cooling: bool = Field(True, description="Coolant distribution units for liquid and hybrid cooled servers.")


class CloudOptions(_Strict):
    """Used by `planner cloud` (and `planner plan --compare-cloud`)."""

    providers: list[str] | None = Field(None, description="Allowed providers (case-insensitive).")
    regions: list[str] | None = Field(None, description="Allowed regions.")
    instances: list[str] | None = Field(None, description="Allowed instance types.")
    pricing: list[Literal["ondemand", "spot", "reserved", "committed-1y", "committed-3y"]] = Field(
        default_factory=lambda: ["ondemand", "spot", "reserved", "committed-1y", "committed-3y"],
        min_length=1,
        description="Pricing models to consider: on-demand, spot, reserved (capacity blocks, calendar or cluster "
        "reservations, as the row's reserved_kind says) and 1- or 3-year commitments (billed for whole terms).",
    )
    quota: dict[str, count(ge=0, le=L.MAX_INSTANCES)] = Field(
        default_factory=dict, description="Most instances per instance type (or provider/instance)."
    )
    max_instances: Count = Field(256, ge=1, le=L.MAX_INSTANCES, description="Most instances of any one offering.")
    spot_share_max: float = Field(
        1.0, ge=0, le=1, description="Largest share of instances on spot pricing (with mix_pricing)."
    )
    mix_pricing: bool = Field(
        False,
        description="Allow one job to mix pricing models (e.g. some instances on-demand, some reserved or "
        "spot); false: every instance of the job on one pricing model.",
    )
    spot_multi_instance: bool = Field(
        False,
        description="Allow spot/preemptible instances in a job spanning several instances, priced with the "
        "preemption model below. False: one preemption stalls every rank of a synchronous job, so spot only "
        "serves single-instance jobs.",
    )
    spot_interruptions_per_1000_instance_days: float = Field(
        D.SPOT_INTERRUPTIONS_PER_1000_INSTANCE_DAYS.value,
        ge=0,
        le=L.MAX_EVENTS_PER_1000_DAYS,
        description="Preemptions per 1000 spot instance-days (estimate from AWS Spot Advisor's top bucket).",
    )
    spot_restart_minutes: float = Field(
        D.SPOT_RESTART_MINUTES.value,
        ge=0,
        le=L.MAX_MINUTES,
        description="Minutes per preemption to get replacement capacity and restart (estimate).",
    )


class Spares(_Strict):
    """Spares bought with the cluster and kept on the shelf (priced, drawing no power): a share of the nodes (and
    at least what covers the repairs), of every link kind (its transceivers and cables), rounded up, and so many
    switches of each model."""

    node_share: float = Field(
        H.SPARE_NODE_SHARE.value, ge=0, le=1, description="Spare nodes per node (ceil(share x nodes))."
    )
    repair_cover: float = Field(
        H.SPARE_REPAIR_COVER.value,
        ge=0,
        lt=1,
        description="At least enough spare nodes to cover the nodes under repair at once at this quantile "
        "(failures from reliability.failure_rates, reliability.repair_hours); 0: the share alone.",
    )
    link_share: float = Field(
        H.SPARE_LINK_SHARE.value, ge=0, le=1, description="Spare links (optics and cables) per link, per kind."
    )
    switches_per_model: int = Field(
        int(H.SPARE_SWITCHES_PER_MODEL.value), ge=0, le=1000, description="Spare switches of each model in use."
    )


class Storage(_Strict):
    """The shared file system the plan buys (blocks of infra.csv kind `storage`): enough blocks for the read
    rate, the checkpoint write rate (reliability.checkpoint_write_gb_per_s_per_node on every host at once)
    and the capacity (checkpoints kept and the training data)."""

    read_gb_per_s_per_gpu: float = Field(
        H.STORAGE_READ_GB_PER_S_PER_GPU.value, ge=0, le=L.MAX_QUANTITY["gb_per_s"], description="Read rate per GPU."
    )
    checkpoints_kept: int = Field(
        int(H.STORAGE_CHECKPOINTS_KEPT.value), ge=0, le=10_000, description="Full checkpoints kept on the system."
    )
    dataset_bytes_per_token: float = Field(
        H.STORAGE_BYTES_PER_TOKEN.value, ge=0, le=1_000, description="Training data bytes per token (capacity)."
    )


def _rate(kind: str):
    c = D.FAILURE_RATES[kind]
    return Field(c.value, ge=0, le=L.MAX_EVENTS_PER_UNIT_DAY, description=f"{c.unit[0].upper()}{c.unit[1:]}.")


class FailureRates(_Strict):
    """Job interruptions per unit per day of each kind of part, applied to the plan's bill of materials
    (defaults and sources: planner/assumptions/facility.py FAILURE_RATES)."""

    gpu: float = _rate("gpu")
    host: float = _rate("host")
    nic: float = _rate("nic")
    node_link: float = _rate("node_link")
    fabric_link: float = _rate("fabric_link")
    leaf: float = _rate("leaf")
    upper_switch: float = _rate("upper_switch")
    storage_client: float = _rate("storage_client")
    software_share: float = Field(
        D.SOFTWARE_SHARE.value, ge=0, lt=1, description="Share of all interruptions from software (0.2)."
    )


class Reliability(_Strict):
    """Schedule risk of a training run with a deadline: interruptions cost restarts, recomputed work and
    checkpoint writes, so the run needs more throughput than tokens / days. Goodput = 1 - the lost share."""

    interruptions_per_1000_node_days: float | None = Field(
        None,
        ge=0,
        le=L.MAX_EVENTS_PER_1000_DAYS,
        description="Job interruptions per 1000 node-days, instead of counting them from the bill of materials "
        "(failure_rates); 0 turns the goodput model off.",
    )
    failure_rates: FailureRates = Field(default_factory=FailureRates)
    restart_minutes: float = Field(
        D.RESTART_MINUTES.value,
        ge=0,
        le=L.MAX_MINUTES,
        description="Minutes per interruption to detect, reschedule and reload.",
    )
    repair_hours: float = Field(
        D.REPAIR_HOURS.value,
        ge=0,
        le=L.MAX_MINUTES / 60,
        description="Hours a failed node is out of service: a GPU, host or NIC failure waits for it when no spare "
        "node is free (spares.node_share); 0: never waits.",
    )
    repair_hours_rack_scale: float = Field(
        D.REPAIR_HOURS_RACK_SCALE.value,
        ge=0,
        le=L.MAX_MINUTES / 60,
        description="Hours a rack-scale system (NVL72) is out when a compute tray fails (a tray swap).",
    )
    checkpoint_interval_minutes: float | None = Field(
        None, gt=0, le=L.MAX_MINUTES, description="Minutes between checkpoints (default: the Young/Daly optimum)."
    )
    checkpoint_write_gb_per_s_per_node: float = Field(
        D.CHECKPOINT_WRITE_GB_PER_S_PER_NODE.value,
        gt=0,
        le=L.MAX_QUANTITY["gb_per_s"],
        description="Sustained write to shared storage per node while every node writes its shard (per host: "
        "each tray of a rack-scale system writes its own).",
    )
    checkpoint_bytes_per_param: float = Field(
        D.CHECKPOINT_BYTES_PER_PARAM.value,
        gt=0,
        le=L.MAX_CHECKPOINT_BYTES_PER_PARAM,
        description="Bytes saved per parameter (14: bf16 + fp32 Adam).",
    )
    goodput: float | None = Field(
        None,
        gt=0,
        le=1,
        description="A measured share of wall-clock time that trains, instead of the model above (Llama 3 "
        "reports over 0.9). Default: the model's, at the plan's node count.",
    )


class Scenario(_Strict):
    name: str = "unnamed scenario"
    workload: Workload
    requirement: Requirement
    target_tflops: TFLOPs | None = Field(
        None, description="Achieved TFLOPs per GPU the plan must reach (none: no floor)."
    )
    confidence: float | None = Field(
        None,
        gt=0.5,
        lt=1,
        description="Plan for the pessimistic outcome reached with this probability (e.g. 0.9: the p10 of the "
        "model's leave-one-source-out errors for the GPU, framework and fabric); none: the point prediction.",
    )
    objective: Objective = Field(default_factory=Objective)
    constraints: Constraints = Field(default_factory=Constraints)
    cabling: Cabling = Field(default_factory=Cabling)
    layout: Layout = Field(default_factory=Layout)
    include: Include = Field(default_factory=Include)
    cloud: CloudOptions = Field(default_factory=CloudOptions)
    reliability: Reliability = Field(default_factory=Reliability)
    spares: Spares = Field(default_factory=Spares)
    storage: Storage = Field(default_factory=Storage)
    catalogs: list[str] = Field(default_factory=list, description="Catalog files, relative to the scenario file.")
    as_of: dt.date | None = Field(
        None,
        description="The day catalog prices are judged against (older than stale_price_months: flagged); "
        "default: the day the plan is made.",
    )

    @property
    def as_of_date(self) -> dt.date:
        return self.as_of or dt.date.today()

    @model_validator(mode="after")
    def _recompute_compared_on_tokens(self) -> Scenario:
        problem = recompute_target_problem(self.workload, self.target_tflops)
        if problem:
            raise ValueError(problem + " (requirement.min_tokens_per_s, or tokens with days)")
        return self

    @model_validator(mode="after")
    def _output_objective_bounded(self) -> Scenario:
        kind, c = self.objective.kind, self.constraints
        if kind in ("throughput", "days") and c.budget_usd is None and c.power_kw is None:
            raise ValueError(
                f"objective.kind {kind} buys the most training within a limit: give constraints.budget_usd "
                "(--budget) or constraints.power_kw (--power-kw)"
            )
        if kind == "days" and self.requirement.tokens is None:
            raise ValueError(
                "objective.kind days needs requirement.tokens (and days) to count training days; use throughput"
            )
        return self

    @model_validator(mode="after")
    def _bounded_search(self) -> Scenario:
        """Each micro-batch and oversubscription ratio multiplies the candidates the plan searches (4 x 4
        takes ~10 s, 8 x 8 minutes): their product is capped."""
        pairs = len(self.workload.micro_batches) * len(self.constraints.oversubscription)
        if pairs > L.MAX_SEARCH_PAIRS:
            raise ValueError(
                f"workload.micro_batches ({len(self.workload.micro_batches)}) x constraints.oversubscription "
                f"({len(self.constraints.oversubscription)}) = {pairs} combinations to search; at most "
                f"{L.MAX_SEARCH_PAIRS}: allow fewer"
            )
        return self


def recompute_target_problem(workload: Workload, target_tflops: float | None) -> str:
    """A TFLOPs/GPU target counts recomputed FLOPs (hardware FLOPs, as DeepSpeed reports): with the recompute
    mode searched it would credit the modes that repeat work, so the search asks for a throughput instead."""
    if workload.checkpointing == "search" and target_tflops:
        return (
            "workload.checkpointing search with target_tflops: a TFLOPs/GPU target counts the recomputed FLOPs and "
            "would favour recompute; drop target_tflops and state a throughput, or fix workload.checkpointing"
        )
    return ""


def apply_overrides(data: dict, overrides: dict[str, object], keep_none: bool = False) -> dict:
    """Set dotted keys ("constraints.budget_usd") in the raw scenario dict. None means "not given" and is
    skipped, unless keep_none (--set KEY=null sets the field to null)."""
    for dotted, value in overrides.items():
        if value is None and not keep_none:
            continue
        node = data
        *parents, leaf = dotted.split(".")
        if len(parents) >= L.MAX_NESTING_DEPTH:
            raise ScenarioError(f"cannot override {L.short(dotted)}: at most {L.MAX_NESTING_DEPTH} dotted parts")
        for key in parents:
            node = node.setdefault(key, {})
            if not isinstance(node, dict):
                raise ScenarioError(f"cannot override {L.short(dotted)}: {L.short(key)} is not a section")
        node[leaf] = value
    return data


def sources(
    path: str | Path, overrides: dict | None = None, settings: dict | None = None, flags: dict | None = None
) -> dict[str, str]:
    """Where each overridden field's value came from, by its dotted key: `--set KEY`, or the flag that sets it
    (flags: dotted key -> option; "the command line" for one not named); the file gives the rest."""
    given = {key: (flags or {}).get(key, COMMAND_LINE) for key, v in (overrides or {}).items() if v is not None}
    return given | {key: f"--set {location_part(key, 80)}" for key in settings or {}}


def source_of(where: str, path: str | Path, given: dict[str, str]) -> str:
    """The source of the field at `where` (workload.seq_len, constraints.gpus[0]): the longest overridden key
    it lies under, else the file."""
    plain = where.replace("[", ".").replace("]", "")
    keys = [k for k in given if plain == k or plain.startswith(k + ".")]
    return given[max(keys, key=len)] if keys else str(path)


# What a scenario made of options alone is called in messages (there is no file to name).
COMMAND_LINE = "the command line"


def scenario_data(
    path: str | Path | None,
    overrides: dict[str, object] | None = None,
    settings: dict[str, object] | None = None,
    ask: str = "give --tokens with --days (a deadline), or --gpus (a GPU count)",
) -> dict:
    """The scenario's raw mapping: the file's (an empty one without a file: a question asked in options alone)
    with the command line's overrides applied; what --save-scenario writes. `ask`: how to give a requirement."""
    data: object = {} if path is None else read_yaml(Path(path), "scenario")
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: a scenario is a YAML mapping with workload, requirement, target_tflops")
    if "horizon" in data and "workload" not in data:
        raise ScenarioError(f"{path}: this is a fleet file (horizon, training, inference); run `planner fleet {path}`")
    if "load" in data and "workload" not in data:
        raise ScenarioError(f"{path}: this is a serving scenario (model, load, targets); run `planner serve {path}`")
    data = apply_overrides(data, overrides or {})
    data = apply_overrides(data, settings or {}, keep_none=True)
    if path is None and "name" not in data:
        data = {"name": _question_name(data), **data}
    if path is None and not data.get("requirement"):
        raise ScenarioError(f"{COMMAND_LINE}: no requirement: {ask}")
    return data


def load_scenario(
    path: str | Path | None,
    overrides: dict[str, object] | None = None,
    settings: dict[str, object] | None = None,
    flags: dict[str, str] | None = None,
) -> Scenario:
    """The scenario file (None: options alone) with the command line's overrides (flags: the option of each
    dotted key, which an error in its value names instead of the file)."""
    label = COMMAND_LINE if path is None else str(path)
    base = Path(path).parent if path is not None else Path.cwd()
    ask = "give --tokens with --days (a deadline)" + (
        ", or --gpus (a GPU count)" if "requirement" in (flags or {}) else ""
    )
    data = scenario_data(path, overrides, settings, ask)
    return validated(data, label, base, sources(label, overrides, settings, flags))


def validated(data: dict, label: str, base: Path, given: dict[str, str] | None = None) -> Scenario:
    """A scenario mapping validated, every problem a line naming `label` (or the option in `given` that set the
    field) and the field; catalog paths made absolute from `base`."""
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        labelled = lambda where, err: field_message(source_of(_dotted(err["loc"]), where, given or {}), err)  # noqa: E731
        raise ScenarioError("\n".join(validation_messages(label, exc, labelled))) from None
    return scenario.model_copy(update={"catalogs": [str((base / c).resolve()) for c in scenario.catalogs]})


def _question_name(data: dict) -> str:
    """A name for a question asked in options: its model and requirement ("Llama-3-70B, 15T tokens in 90 days")."""
    w, r = data.get("workload") or {}, data.get("requirement") or {}
    model = w.get("model") or (f"{w['params']} parameters" if w.get("params") else "a model")
    if r.get("tokens") and r.get("days"):
        return f"{model}, {r['tokens']} tokens in {r['days']} days"
    if r.get("gpus"):
        return f"{model} on {r['gpus']} GPUs"
    return str(model)


def read_yaml(path: Path, what: str) -> object:
    """A scenario-sized YAML (or JSON) file under every input limit, or a one-line ScenarioError."""
    try:
        return load_yaml(read_text(path, L.MAX_SCENARIO_BYTES, what))
    except InputFileError as exc:
        raise ScenarioError(str(exc)) from None
    except YamlProblem as exc:
        raise ScenarioError(f"{path}: {exc}") from None


def validation_messages(label: str, exc: ValidationError, message=None) -> list[str]:
    """One line per problem (the first MAX_ERROR_LINES, then how many more), each naming the field;
    `message(label, error)` words one (default: the plan scenario's)."""
    errors, message = exc.errors(), message or field_message
    lines = [message(label, e) for e in errors[: L.MAX_ERROR_LINES]]
    if len(errors) > L.MAX_ERROR_LINES:
        lines.append(f"{label}: ... and {len(errors) - L.MAX_ERROR_LINES:,} more problems")
    return lines


def _dotted(loc: tuple) -> str:
    """workload.micro_batches.0, each part cut to 40 characters (a key may be huge) and quoted when it is
    not plain printable text (a key holding a carriage return would otherwise start a spoofed line)."""
    return ".".join(location_part(x) for x in loc)


def location_part(part: object, limit: int = 40) -> str:
    """One part of a field's location as a message shows it: as typed when it is short printable text,
    else quoted with its control characters escaped (L.short)."""
    plain = isinstance(part, str) and len(part) <= limit and part.isprintable()
    return part if plain else L.short(part, limit)


def _unknown_field(loc: tuple, root) -> str:
    """An unknown key, with the closest field of its section when one is close (seqlen: seq_len)."""
    import difflib

    section = root
    for part in loc[:-1]:
        fields = getattr(section, "model_fields", {}) if section is not None else {}
        if isinstance(part, int) or part not in fields:
            section = None if not isinstance(part, int) else section
            continue
        section = _model_of(fields[part].annotation)
    names = list(getattr(section, "model_fields", {})) if section is not None else []
    close = difflib.get_close_matches(str(loc[-1]), names, n=1, cutoff=0.6)
    return f"unknown field; did you mean {close[0]}?" if close else "unknown field"


def _model_of(annotation):
    """The pydantic model a field holds (through Optional and list), or None."""
    import typing

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def field_message(label: str, err: dict, command: str = "plan", where_of=_dotted, root=None) -> str:
    """file: field = value: what is wrong. The value is cut to MAX_VALUE_CHARS: the input may be huge.
    `command` names the schema to see; `where_of` writes the field's location; `root` is the model whose
    fields an unknown key is matched against (default: the plan scenario's)."""
    where = where_of(err["loc"])
    message = L.cut(error_text(err) if err["type"] != "missing" else str(err["msg"]))
    if err["type"] == "extra_forbidden":
        message = _unknown_field(err["loc"], root or (Scenario if command == "plan" else None))
    hint = f" (see `planner {command} --schema`)" if err["type"] in ("extra_forbidden", "missing") else ""
    if not err["loc"]:  # a rule over several fields: its message names them
        return f"{label}: {message}{hint}"
    value = "" if err["type"] == "missing" else f" = {L.short(err.get('input'))}"
    return f"{label}: {where}{value}: {message}{hint}"
