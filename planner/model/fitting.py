"""`planner calibrate` and `planner validate`: fit the model's parameters to measured training throughput, and
judge it by leave-one-source-out error.

Measurements (planner/data/measurements.csv, the database shipped with planner; or a user's CSV in the same
columns, `planner calibrate --help`): one run per row, with its cluster, model, batch, framework options and
the measured tokens/s per GPU (or a band; or, as in planner 0.1 files, achieved TFLOPs/GPU in the planner's
hardware-FLOP definition).

Fit (scipy.optimize.least_squares, bounded): residuals are log(predicted / measured) (for a band, the log
distance outside it, shrunk by BAND_MARGIN), each source weighted by 1/sqrt(its rows) so one large table does
not outvote the others, plus priors (planner.assumptions.model) with the sigmas below, which decide where the data
leave freedom. Parameters: the GEMM and FlashAttention efficiencies per GPU architecture (never per SKU),
width_k, the low-precision cast bytes, the Triton and FlashAttention-3 kernels' rates, eta_net
per fabric, overlap, step overhead and host costs per framework, latency_scale. Only parameters the data touch
are fitted (a fabric seen only on single nodes is not; an architecture without runs keeps its prior).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError
from scipy.optimize import least_squares

from planner.assumptions import model as A
from planner.base.errors import CatalogError, CatalogProblem, PlannerError, UsageError
from planner.base.limits import (
    MAX_GPUS,
    MAX_GPUS_PER_NODE,
    MAX_GRAD_ACCUM,
    MAX_MEASUREMENT_ROWS,
    MAX_MEASUREMENT_SOURCES,
    MAX_MEASUREMENTS_BYTES,
    MAX_MICRO_BATCH,
    MAX_PARAMS,
    MAX_QUANTITY,
    MAX_SEQ_LEN,
    MAX_TOKENS_PER_GPU,
)
from planner.base.resources import data_dir
from planner.base.text import text_problem
from planner.catalog.load import Catalog, problem_from_pydantic
from planner.catalog.read import read_csv
from planner.catalog.rows import Count, Gbps, Params
from planner.model import performance as perf
from planner.model.calibration import QUANTILES, UNMEASURED, Calibration
from planner.model.parallelism import (
    ATTENTION_KERNELS,
    CHECKPOINTING,
    FRAMEWORKS,
    LOW_PRECISIONS,
    PRECISIONS,
    SHARDINGS,
    STACKS,
    Parallelism,
)
from planner.model.workload import MOE_FIELDS, Cluster, Training, cluster_record, training

DATABASE = "measurements.csv"
MEASUREMENT_GPUS = "measurement_gpus.csv"
BAND_MARGIN = 0.025  # aim 2.5% inside a band's edges, so the fit is not balanced on an edge
BAND_WEIGHT = 10.0  # a stated bound counts as much as ten points: the fit must land inside it
# a one-sigma prior miss costs as much as a 5% error of one source: where sources disagree, the sourced
# priors of planner.assumptions.model hold
PRIOR_WEIGHT = 0.05
PRIOR_SIGMA = {
    "gemm": 0.10,
    "cast": 2.0,
    "triton": 0.15,
    "fa3": 0.3,
    "width_k": 1.5,
    "framework": 0.15,
    "attention": 0.1,
    "net_ratio": 0.1,
    "eta_net": 0.10,
    "overlap": 0.25,
    "latency": 0.5,
    "overhead": 0.05,
    "cpu_adam": 60.0,
    "per_call": 3e-4,
    "per_rank": 2e-6,  # about the prior's measured spread (2-5 us per rank and tensor)
    "moe": 0.2,
    "moe_layer": 3e-4,
    "cp": 0.3,
}
BOUNDS = {
    "gemm": (0.05, 1.0),
    "cast": (0.0, 40.0),
    "triton": (0.1, 1.0),
    "fa3": (1.0, 3.0),
    "width_k": (0.0, 40.0),
    "eta_net": (0.05, 1.0),
    "overlap": (0.0, 1.0),
    "latency": (0.1, 20.0),
    "overhead": (0.0, 2.0),
    "framework": (0.3, 1.5),
    "attention": (0.05, 1.0),
    "net_ratio": (0.3, 1.0),
    "cpu_adam": (10.0, 2000.0),
    "per_call": (0.0, 5e-3),
    "per_rank": (0.0, 5e-5),
    "moe": (0.1, 1.0),
    "moe_layer": (0.0, 5e-3),
    "cp": (0.0, 3.0),
}
MIN_GROUP_SOURCES = 3  # runs from fewer sources than this: the range falls back to a broader group


def _checkpointing(value: object) -> object:
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "1"):
        return "full"
    if isinstance(value, str) and value.strip().lower() in ("false", "no", "0"):
        return "none"
    return value.strip().lower() if isinstance(value, str) else value


def _lower(value: object) -> object:
    return value.strip().lower() if isinstance(value, str) else value


# every measured figure has a ceiling (planner.base.limits): no absurd float reaches the fit
Rate = Annotated[float, Field(gt=0, le=MAX_QUANTITY["count"])]  # tokens/s per GPU
TFLOPsFigure = Annotated[float, Field(gt=0, le=MAX_QUANTITY["tflops"])]


class Measurement(BaseModel):
    """One measured run (a row of the database or of a user's CSV)."""

    # allow_inf_nan=False: an inf or nan cell is refused here, not found later as non-finite residuals
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, populate_by_name=True, allow_inf_nan=False)

    id: str | None = None
    source_group: str = Field(
        "your measurements", description="the measurement set (one table of a publication); validation leaves it out"
    )
    publication: str | None = Field(None, description="the document (default: the source group)")
    source: str | None = None
    framework: Annotated[Literal[FRAMEWORKS], BeforeValidator(_lower)] = "deepspeed"
    qwz: bool = False
    hpz: bool = False
    qgz: bool = False
    model: str | None = None
    params: Params | None = Field(None, le=MAX_PARAMS, alias="model_params")
    layers: Count | None = Field(None, ge=1)
    hidden: Count | None = Field(None, ge=1)
    heads: Count | None = Field(None, ge=1)
    vocab: Count | None = Field(None, ge=1)
    gpu: str
    gpus: Count = Field(ge=1, le=MAX_GPUS)
    gpus_per_node: Count = Field(ge=1, le=MAX_GPUS_PER_NODE)
    node_gbps: Gbps | None = None
    fabric: Annotated[Literal["ib", "roce", "efa", "tcpx", "tcp", "none"], BeforeValidator(_lower)] = "ib"
    seq_len: Count | None = Field(None, ge=1, le=MAX_SEQ_LEN)
    micro_batch: Annotated[float, Field(gt=0, le=MAX_MICRO_BATCH)] | None = None
    tokens_per_gpu: Params | None = Field(None, le=MAX_TOKENS_PER_GPU)
    grad_accum: Count | None = Field(None, ge=1, le=MAX_GRAD_ACCUM)
    checkpointing: Annotated[Literal[CHECKPOINTING], BeforeValidator(_checkpointing)] = "full"
    offload: Annotated[Literal["none", "cpu", "nvme"], BeforeValidator(_lower)] = "none"
    grad_bytes: float = Field(2.0, gt=0, le=8)
    ffn_hidden: Count | None = Field(None, ge=1)
    kv_heads: Count | None = Field(None, ge=1)
    stack: Annotated[Literal[STACKS], BeforeValidator(_lower)] = "eager"
    precision: Annotated[Literal[PRECISIONS], BeforeValidator(_lower)] = "bf16"
    fp8_allgather: bool = False
    attention_kernel: Annotated[Literal[ATTENTION_KERNELS], BeforeValidator(_lower)] = "flash"
    sharding: Annotated[Literal[SHARDINGS], BeforeValidator(_lower)] = "full"
    shard_gpus: Count | None = Field(None, ge=1, le=MAX_GPUS)
    tp: Count = Field(1, ge=1, le=MAX_GPUS)
    pp: Count = Field(1, ge=1, le=MAX_GPUS)
    vp: Count = Field(1, ge=1, le=MAX_GPUS)
    cp: Count = Field(1, ge=1, le=MAX_GPUS)
    ep: Count = Field(1, ge=1, le=MAX_GPUS)
    tp_overlap: bool = False
    pp_balanced: bool = False
    experts: Count | None = Field(None, ge=1, description="routed experts per MoE layer")
    top_k: Count | None = Field(None, ge=1)
    expert_ffn: Count | None = Field(None, ge=1)
    shared_experts: Count | None = Field(None, ge=0)
    dense_layers: Count | None = Field(None, ge=0)
    peak_memory_gib: Annotated[float, Field(gt=0, le=MAX_QUANTITY["gib"])] | None = Field(
        None, description="measured peak memory per GPU (torch.cuda.max_memory_allocated or reserved), GiB"
    )
    tokens_per_s_per_gpu: Rate | None = None
    tokens_per_s_low: Rate | None = None
    tokens_per_s_high: Rate | None = None
    measured_tflops: TFLOPsFigure | None = None
    tflops_per_gpu_low: float | None = Field(None, ge=0, le=MAX_QUANTITY["tflops"])
    tflops_per_gpu_high: TFLOPsFigure | None = None
    reported_tflops_per_gpu: TFLOPsFigure | None = None
    confidence: str | None = None
    derivation: str | None = None
    note: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _plain_text(cls, data: object) -> object:
        problem = text_problem(data) if isinstance(data, dict) else None
        if problem:
            raise PydanticCustomError("text", "{message}", {"column": problem[0], "message": problem[1]})
        return data

    @model_validator(mode="after")
    def _complete(self) -> Measurement:
        targets = [self.tokens_per_s_per_gpu, self.tokens_per_s_low, self.tokens_per_s_high, self.measured_tflops]
        targets += [self.tflops_per_gpu_low, self.tflops_per_gpu_high]
        if all(t is None for t in targets):
            raise ValueError(
                "give tokens_per_s_per_gpu (or tokens_per_s_low/high), or measured_tflops (or tflops_per_gpu_low/high)"
            )
        if self.params is None and self.model is None:
            raise ValueError("give params (or model_params) or model")
        if self.gpus > self.gpus_per_node and (self.node_gbps is None or self.fabric == "none"):
            raise ValueError("a run over several nodes needs node_gbps and a fabric (ib, roce, efa, tcpx, tcp)")
        for low, high in (
            (self.tokens_per_s_low, self.tokens_per_s_high),
            (self.tflops_per_gpu_low, self.tflops_per_gpu_high),
        ):
            if low is not None and high is not None and low > high:
                raise ValueError(f"the band's low {low:g} is above its high {high:g}")
        try:
            self.parallelism.data_parallel(self.gpus)  # its rules, and gpus = tp x pp x cp x dp, checked there
        except UsageError as exc:
            raise ValueError(str(exc)) from None
        return self

    @property
    def parallelism(self) -> Parallelism:
        return Parallelism.of_fields(self)


def read_measurements(path: Path) -> list[tuple[int, Measurement]]:
    tables, problems = (
        read_csv(path, MAX_MEASUREMENTS_BYTES, "measurements")
        if path.exists()
        else ([], [CatalogProblem(str(path), None, None, None, "file not found; check the path")])
    )
    rows = []
    for table in tables:
        if not table.header:
            problems.append(CatalogProblem(table.label, None, None, None, "empty: no header row found"))
        if len(table.rows) > MAX_MEASUREMENT_ROWS:
            message = f"{len(table.rows):,} measurements, more than {MAX_MEASUREMENT_ROWS:,}; fit a sample of them"
            raise CatalogError([CatalogProblem(table.label, None, None, None, message)])
        for number, values in table.rows:
            record = {c: v for c, v in zip(table.header, values, strict=False) if c and v is not None}
            if "params" in record:
                record["model_params"] = record.pop("params")
            try:
                rows.append((number, Measurement.model_validate(record)))
            except ValidationError as exc:
                problems += [problem_from_pydantic(table.label, number, e) for e in exc.errors()]
    if problems:
        raise CatalogError(problems)
    if not rows:
        raise PlannerError(f"{path}: no measurement rows; see `planner calibrate --help` for the format")
    return rows


def database_path() -> Path:
    return data_dir() / DATABASE


# ---------------------------------------------------------------- measurements as a table the model reads


def measurement_frame(
    catalog: Catalog, rows: list[tuple[int, Measurement]], tokens_per_gpu: float | None, label: str = "measurements"
) -> pd.DataFrame:
    """The rows as one table for perf.evaluate, with the target of each (tokens/s or TFLOPs per GPU, a point
    or a band). A row the model rejects is named by file and row."""
    records = []
    for number, m in rows:
        try:
            records.append(_row_record(catalog, number, m, tokens_per_gpu))
        except PlannerError as exc:
            raise PlannerError(f"{label}:{number}: {exc}") from None
    return pd.DataFrame.from_records(records)


def _work(catalog: Catalog, m: Measurement, tokens_per_gpu: float | None) -> Training:
    tokens = m.tokens_per_gpu if m.tokens_per_gpu is not None else (None if m.micro_batch else tokens_per_gpu)
    if tokens is None and m.micro_batch is None:
        raise PlannerError("tokens per GPU unknown; add a tokens_per_gpu column or pass --tokens-per-gpu")
    seq_len = m.seq_len if m.seq_len is not None or m.model is not None or tokens is None else None
    shape = ("layers", "hidden", "heads", "vocab", "ffn_hidden", "kv_heads", *MOE_FIELDS)
    arch = {} if m.model else {k: getattr(m, k) for k in shape if getattr(m, k) is not None}
    return training(
        catalog,
        params=m.params if m.model is None else None,
        model=m.model,
        micro_batch=m.micro_batch,
        seq_len=seq_len,
        tokens_per_gpu=tokens,
        parallelism=m.parallelism,
        grad_accum=m.grad_accum or 1,
        **{k: float(v) for k, v in arch.items()},
    )


def _row_record(catalog: Catalog, number: int, m: Measurement, tokens_per_gpu: float | None) -> dict:
    work = _work(catalog, m, tokens_per_gpu)
    single = m.gpus <= m.gpus_per_node
    fabric = "ib" if single and m.fabric == "none" else m.fabric
    per_node = min(m.gpus_per_node, m.gpus)  # a run on part of one node: a node of that many GPUs
    record = cluster_record(catalog, work, Cluster(m.gpu, m.gpus, per_node, m.node_gbps or 1.0, fabric))
    in_tokens = any(v is not None for v in (m.tokens_per_s_per_gpu, m.tokens_per_s_low, m.tokens_per_s_high))
    point = m.tokens_per_s_per_gpu if in_tokens else m.measured_tflops
    low = m.tokens_per_s_low if in_tokens else m.tflops_per_gpu_low
    high = m.tokens_per_s_high if in_tokens else m.tflops_per_gpu_high
    nan = float("nan")
    return record | {
        "row": number,
        "id": m.id or f"row {number}",
        "source_group": m.source_group,
        "publication": m.publication or m.source_group,
        "unit": "tokens" if in_tokens else "tflops",
        "measured": nan if point is None else float(point),
        "band_low": nan if low is None else float(low),
        "band_high": nan if high is None else float(high),
        "weight": _confidence_weight(m.confidence, point is None),
        "measured_memory_gib": nan if m.peak_memory_gib is None else float(m.peak_memory_gib),
    }


def _confidence_weight(confidence: str | None, band: bool) -> float:
    """A band is a bound stated by the framework's authors (DeepSpeed #2928): missing it is a definite error,
    so it weighs as much as BAND_WEIGHT points; a reading off a plot (+-1-2 TFLOPs) weighs less."""
    if band:
        return BAND_WEIGHT
    return 0.7 if (confidence or "").startswith("figure") else 1.0


# ---------------------------------------------------------------- parameters


@dataclass(frozen=True)
class Parameters:
    """The fitted parameter vector's layout: names, kinds (prior sigma and bounds), priors."""

    names: list[tuple[str, str]]  # (kind, key)

    @classmethod
    def for_frame(cls, frame: pd.DataFrame) -> Parameters:
        multi = frame["gpus"] > frame["scale_up_gpus"]  # runs that cross the scale-out network
        names = [("gemm", a) for a in sorted(frame["architecture"].unique())] + [("width_k", "")]
        names += [("attention", a) for a in sorted(frame["architecture"].unique())]
        names += [("cast", "")] if frame["precision"].isin(LOW_PRECISIONS).any() else []
        names += [(k, "") for k in ("triton", "fa3") if (frame["attention_kernel"] == k).any()]
        moe = "experts" in frame and (frame["experts"].fillna(0) > 0).any()
        names += [("moe", ""), ("moe_layer", "")] if moe else []
        names += [("cp", "")] if "cp" in frame and (frame["cp"] > 1).any() else []
        names += [("framework", fw) for fw in sorted(frame["framework"].unique()) if fw != "fsdp"]  # fsdp: reference
        fabrics = sorted(frame.loc[multi, "fabric"].unique())
        # Ethernet-class fabrics relative to InfiniBand (a ratio <= 1), so no fit makes RoCE beat IB
        names += [("eta_net", "ib")] if fabrics else []
        names += [("net_ratio", f) for f in fabrics if f != "ib"]
        names += [("overlap", fw) for fw in sorted(frame["framework"].unique())]
        names += [("latency", "")] if multi.any() else []
        names += [("overhead", fw) for fw in sorted(frame["framework"].unique())]
        names += [("per_call", fw) for fw in sorted(frame["framework"].unique())]
        # only frameworks that loop over ranks (FSDP does not: its prior is 0)
        names += [("per_rank", fw) for fw in sorted(frame["framework"].unique()) if A.RANK_OVERHEAD_PRIOR[fw].value]
        names += [("cpu_adam", "")] if (frame["offload"] != "none").any() else []
        return cls(names)

    def prior(self) -> np.ndarray:
        priors = Calibration.priors()
        lookup = {
            "gemm": priors.gemm_efficiency_for,
            "cast": lambda _: priors.cast_bytes,
            "triton": lambda _: priors.triton_attention_ratio,
            "fa3": lambda _: priors.fa3_attention_ratio,
            "moe": lambda _: priors.moe_gemm_ratio,
            "moe_layer": lambda _: priors.moe_layer_overhead_s,
            "cp": lambda _: priors.cp_attention_penalty,
            "width_k": lambda _: priors.width_k,
            "eta_net": priors.eta_net_for,
            "overlap": priors.overlap_for,
            "latency": lambda _: priors.latency_scale,
            "overhead": priors.step_overhead_for,
            "net_ratio": lambda f: priors.eta_net_for(f) / priors.eta_net_for("ib"),
            "framework": priors.framework_efficiency_for,
            "cpu_adam": lambda _: priors.cpu_adam_bytes_per_param,
            "attention": priors.attention_efficiency_for,
            "per_call": priors.collective_overhead_for,
            "per_rank": priors.rank_overhead_for,
        }
        return np.array([lookup[kind](key) for kind, key in self.names])

    def sigma(self) -> np.ndarray:
        return np.array([PRIOR_SIGMA[kind] for kind, _ in self.names])

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array([BOUNDS[k][0] for k, _ in self.names]), np.array([BOUNDS[k][1] for k, _ in self.names])

    def calibration(self, x: np.ndarray, source: str = "") -> Calibration:
        fields: dict = {"gemm_efficiency": {}, "eta_net": {}, "overlap": {}, "source": source}
        fields["attention_efficiency"] = {}
        fields["step_overhead_s"] = {}
        fields["framework_efficiency"], fields["collective_overhead_s"], fields["rank_overhead_s"] = {}, {}, {}
        ratios: dict[str, float] = {}
        for (kind, key), value in zip(self.names, map(float, x), strict=True):
            if kind == "width_k":
                fields["width_k"] = value
            elif kind == "latency":
                fields["latency_scale"] = value
            elif kind == "net_ratio":
                ratios[key] = value
            elif kind == "cpu_adam":
                fields["cpu_adam_bytes_per_param"] = value
            elif kind == "cast":
                fields["cast_bytes"] = value
            elif kind in ("triton", "fa3"):
                fields[f"{kind}_attention_ratio"] = value
            elif kind == "moe":
                fields["moe_gemm_ratio"] = value
            elif kind == "moe_layer":
                fields["moe_layer_overhead_s"] = value
            elif kind == "cp":
                fields["cp_attention_penalty"] = value
            else:
                target = {"gemm": "gemm_efficiency", "eta_net": "eta_net", "overlap": "overlap"}
                target |= {"attention": "attention_efficiency"}
                target |= {"overhead": "step_overhead_s", "framework": "framework_efficiency"}
                target |= {"per_call": "collective_overhead_s", "per_rank": "rank_overhead_s"}
                fields[target[kind]][key] = min(value, 1.0) if kind in ("gemm", "eta_net", "attention") else value
        ib = fields["eta_net"].get("ib", Calibration.priors().eta_net_for("ib"))
        fields["eta_net"] |= {f: min(1.0, ib * r) for f, r in ratios.items()}
        return Calibration(**fields)


# ---------------------------------------------------------------- residuals and the fit


def predicted(parts: dict, frame: pd.DataFrame, cal: Calibration) -> np.ndarray:
    """The model's figure in each row's unit: tokens/s per GPU, or achieved TFLOPs per GPU."""
    figures = perf.combine(parts, cal)
    tokens = figures["tokens_per_s"] / frame["gpus"].to_numpy()
    return np.where(frame["unit"] == "tokens", tokens, figures["achieved_tflops_per_gpu"])


def log_miss(pred: np.ndarray, frame: pd.DataFrame, margin: float = 0.0) -> np.ndarray:
    """log(predicted / measured) for points; for a band, the log distance outside it (0 inside)."""
    point = np.log(pred / frame["measured"].to_numpy())
    low = frame["band_low"].to_numpy() * (1 + margin)
    high = frame["band_high"].to_numpy() * (1 - margin)
    with np.errstate(divide="ignore", invalid="ignore"):
        below = np.nan_to_num(np.maximum(0.0, np.log(low / pred)))
        above = np.nan_to_num(np.maximum(0.0, np.log(pred / high)))
    return np.where(frame["measured"].notna(), point, above - below)


def _weights(frame: pd.DataFrame) -> np.ndarray:
    """Each source counts about alike: 1/sqrt(rows of its group), times the row's confidence weight."""
    sizes = frame.groupby("source_group")["row"].transform("size").to_numpy()
    return frame["weight"].to_numpy() / np.sqrt(sizes)


def fit(frame: pd.DataFrame, source: str, start: np.ndarray | None = None) -> Calibration:
    """Fit to a measurement frame (measurement_frame)."""
    layout = Parameters.for_frame(frame)
    parts = perf.decompose({c: frame[c].to_numpy() for c in frame.columns}, len(frame))
    prior, sigma = layout.prior(), layout.sigma()
    lower, upper = layout.bounds()
    weights = _weights(frame)

    def residuals(x):
        miss = log_miss(predicted(parts, frame, layout.calibration(x)), frame, BAND_MARGIN)
        return np.concatenate([weights * miss, PRIOR_WEIGHT * (x - prior) / sigma])

    x0 = np.clip(prior if start is None else start, lower, upper)
    result = least_squares(residuals, x0, bounds=(lower, upper), x_scale=sigma, diff_step=1e-4, max_nfev=400)
    if not result.success and result.status == 0 and not np.all(np.isfinite(result.fun)):
        raise PlannerError(f"calibration fit did not converge ({result.message}); check the measurements")
    calibration = layout.calibration(result.x, source)
    report = point_report(frame, calibration, parts)
    fitted = {
        f"{kind}[{key}]" if key else kind: round(float(v), 6)
        for (kind, key), v in zip(layout.names, result.x, strict=True)
    }
    return calibration.model_copy(
        update={
            "fit": {
                "points": len(report),
                "sources": int(frame["source_group"].nunique()),
                "in_sample_median_abs_error": round(float(report["abs_error"].median()), 4),
                "parameters": fitted,
                "priors": {
                    f"{k}[{key}]" if key else k: float(v) for (k, key), v in zip(layout.names, prior, strict=True)
                },
                "prior_weight": PRIOR_WEIGHT,
                "band_margin": BAND_MARGIN,
                "method": "scipy.optimize.least_squares (trf) on log(predicted/measured), sources weighted 1/sqrt(n)",
            }
        }
    )


def point_report(frame: pd.DataFrame, calibration: Calibration, parts: dict | None = None) -> pd.DataFrame:
    """Per point: measured (or band), predicted, and the error |predicted/measured - 1| (0 inside a band)."""
    parts = parts or perf.decompose({c: frame[c].to_numpy() for c in frame.columns}, len(frame))
    pred = predicted(parts, frame, calibration)
    columns = [
        "row",
        "id",
        "source_group",
        "publication",
        "gpu",
        "architecture",
        "gpus",
        "framework",
        "fabric",
        "unit",
        "measured",
        "band_low",
        "band_high",
    ]
    report = frame[columns].copy()
    report["predicted"] = pred
    report["log_miss"] = log_miss(pred, frame)
    report["abs_error"] = np.abs(np.expm1(report["log_miss"]))
    return report


# ---------------------------------------------------------------- leave-one-source-out validation


def cross_validate(
    frame: pd.DataFrame,
    full: Calibration,
    progress: Callable[[str], None] = lambda _: None,
    by: str = "source_group",
):
    """Fit without each group (a measurement set; with by="publication" a whole document; with
    by="architecture" every run of a GPU architecture), predict it: the per-point report of out-of-group
    predictions."""
    layout = Parameters.for_frame(frame)
    start = np.array([_value(full, kind, key) for kind, key in layout.names])
    reports = []
    groups = sorted(frame[by].unique())
    label = {"source_group": "source", "publication": "publication", "architecture": "architecture"}[by]
    for i, group in enumerate(groups, start=1):
        progress(f"leave-one-{label}-out {i}/{len(groups)}: {group}")
        train, test = frame[frame[by] != group], frame[frame[by] == group]
        cal = fit(train.reset_index(drop=True), "", start=_restrict(start, layout, Parameters.for_frame(train)))
        reports.append(point_report(test.reset_index(drop=True), cal))
    return pd.concat(reports, ignore_index=True)


def with_range(report: pd.DataFrame, cal: Calibration, measured: set[str]) -> pd.DataFrame:
    """The report with each point's p10-p90 range (calibration.range_factors; `measured`: the architectures
    the fit that predicted it saw) and whether the measurement fell inside it (NaN for a band)."""
    keys = report[["architecture", "framework", "fabric"]].astype(str).itertuples(index=False, name=None)
    factors = [cal.range_factors(a, w, f, measured=a in measured)[:2] for a, w, f in keys]
    factors = np.array(factors, dtype=float).reshape(-1, 2)
    out = report.assign(range_low=report["predicted"] * factors[:, 0], range_high=report["predicted"] * factors[:, 1])
    inside = (out["range_low"] <= out["measured"]) & (out["measured"] <= out["range_high"])
    return out.assign(inside=inside.where(out["measured"].notna()))


def _value(cal: Calibration, kind: str, key: str) -> float:
    return {
        "gemm": lambda: cal.gemm_efficiency_for(key),
        "cast": lambda: cal.cast_bytes,
        "triton": lambda: cal.triton_attention_ratio,
        "fa3": lambda: cal.fa3_attention_ratio,
        "moe": lambda: cal.moe_gemm_ratio,
        "moe_layer": lambda: cal.moe_layer_overhead_s,
        "cp": lambda: cal.cp_attention_penalty,
        "width_k": lambda: cal.width_k,
        "eta_net": lambda: cal.eta_net_for(key),
        "net_ratio": lambda: cal.eta_net_for(key) / cal.eta_net_for("ib"),
        "overlap": lambda: cal.overlap_for(key),
        "latency": lambda: cal.latency_scale,
        "overhead": lambda: cal.step_overhead_for(key),
        "framework": lambda: cal.framework_efficiency_for(key),
        "cpu_adam": lambda: cal.cpu_adam_bytes_per_param,
        "attention": lambda: cal.attention_efficiency_for(key),
        "per_call": lambda: cal.collective_overhead_for(key),
        "per_rank": lambda: cal.rank_overhead_for(key),
    }[kind]()


def _restrict(x: np.ndarray, layout: Parameters, sub: Parameters) -> np.ndarray:
    values = dict(zip(layout.names, x, strict=True))
    prior = dict(zip(sub.names, sub.prior(), strict=True))
    return np.array([values.get(name, prior[name]) for name in sub.names])


def uncertainty(cv: pd.DataFrame, unmeasured: pd.DataFrame | None = None) -> dict[str, dict[str, float]]:
    """Quantiles of out-of-sample log residuals for each group of runs from enough sources: architecture|
    framework|fabric, architecture|framework, framework, and all; with `unmeasured` (leave-one-architecture-out
    residuals) the UNMEASURED group an architecture without measurements takes. Each source weighs alike
    (1/its points): a source's points share its software and its setting, so a large table would otherwise
    narrow the range to its own scatter."""
    points = _points(cv)
    groups: dict[str, pd.DataFrame] = {"all": points}
    for fw, sub in points.groupby("framework"):
        groups[fw] = sub
    for (arch, fw), sub in points.groupby(["architecture", "framework"]):
        groups[f"{arch}|{fw}"] = sub
    for (arch, fw, fab), sub in points.groupby(["architecture", "framework", "fabric"]):
        groups[f"{arch}|{fw}|{fab}"] = sub
    if unmeasured is not None and len(_points(unmeasured)):
        groups[UNMEASURED] = _points(unmeasured)
    return {
        name: _quantiles(sub) | {"points": len(sub), "sources": int(sub["source_group"].nunique())}
        for name, sub in groups.items()
        if sub["source_group"].nunique() >= MIN_GROUP_SOURCES or (name in ("all", UNMEASURED) and len(sub))
    }


def _quantiles(points: pd.DataFrame) -> dict[str, float]:
    """QUANTILES of the log residuals, each source's points weighing 1/their number (a weighted empirical CDF,
    interpolated at the middle of each point's weight)."""
    order = points["log_miss"].to_numpy().argsort()
    values = points["log_miss"].to_numpy()[order]
    weights = (1.0 / points.groupby("source_group")["log_miss"].transform("size")).to_numpy()[order]
    cumulative = (np.cumsum(weights) - weights / 2) / weights.sum()
    return {f"p{round(q * 100)}": round(float(np.interp(q, cumulative, values)), 4) for q in QUANTILES}


def _points(cv: pd.DataFrame) -> pd.DataFrame:
    """The measured points (not bands) with a finite residual."""
    keep = cv["unit"].notna() & np.isfinite(cv["log_miss"]) & cv["band_low"].isna() & cv["band_high"].isna()
    return cv[keep]


def summary(report: pd.DataFrame, by: str = "source_group") -> dict:
    """Median and maximum absolute error over all points, per source group (or publication) and per GPU
    architecture; with ranges (cross_validate's residuals), the share of points inside their p10-p90 range."""
    per_source = report.groupby(by)["abs_error"].agg(["median", "max", "size"])
    per_arch = report.groupby("architecture")["abs_error"].agg(["median", "max", "size"])
    out = {
        "points": len(report),
        "median_abs_error": float(report["abs_error"].median()),
        "max_abs_error": float(report["abs_error"].max()),
        "signed_median": float(np.expm1(report["log_miss"].median())),
        "per_architecture": {a: {k: float(v) for k, v in r.items()} for a, r in per_arch.iterrows()},
        "per_source": {g: {k: float(v) for k, v in r.items()} for g, r in per_source.iterrows()},
    }
    if "inside" in report and report["inside"].notna().any():
        inside = report["inside"].dropna().astype(bool)
        out["range_coverage"] = float(inside.mean())
        out["range_points"] = int(len(inside))
    return out


# ---------------------------------------------------------------- the command's work


def load_frames(catalog: Catalog, paths: list[Path], database: bool, tokens_per_gpu: float | None) -> pd.DataFrame:
    sources = list(paths) + ([database_path()] if database else [])  # the user's first: their errors come fast
    if not sources:
        raise PlannerError("nothing to fit: give a measurements CSV, or drop --no-database")
    tables = [(p, read_measurements(p)) for p in sources]
    yours = sum(len(rows) for p, rows in tables[: len(paths)])
    if yours > MAX_MEASUREMENT_ROWS:  # (each file is checked alone as it is read; this is all of them)
        raise PlannerError(
            f"{_named(paths)}: {yours:,} measurements in all, more than {MAX_MEASUREMENT_ROWS:,}; fit a sample of them"
        )
    database_catalog = with_measurement_gpus(catalog) if database else catalog
    frames = [
        measurement_frame(database_catalog if p == database_path() else catalog, rows, tokens_per_gpu, str(p))
        for p, rows in tables
    ]
    return pd.concat(frames, ignore_index=True)


def with_measurement_gpus(catalog: Catalog) -> Catalog:
    """The catalog and the GPUs the database's runs used that no one sells as such (planner/data/
    measurement_gpus.csv: Meta's 500 W H100), for the database's rows alone; a catalog GPU of the same name wins."""
    from planner.catalog.load import load_catalog

    extra = load_catalog([data_dir() / MEASUREMENT_GPUS], defaults=False)
    merged = dataclasses.replace(
        catalog, rows={k: dict(v) for k, v in catalog.rows.items()}, origins=dict(catalog.origins)
    )
    for key, row in extra.rows["gpus"].items():
        if key not in merged.rows["gpus"]:
            merged.rows["gpus"][key] = row
            merged.origins[("gpus", key)] = extra.origins[("gpus", key)]
    return merged


def _named(paths: list[Path]) -> str:
    return ", ".join(map(str, paths[:3])) + (f" and {len(paths) - 3:,} more files" if len(paths) > 3 else "")


def calibrate(
    catalog: Catalog,
    paths: list[Path],
    database: bool = True,
    tokens_per_gpu: float | None = None,
    validate: bool = True,
    progress: Callable[[str], None] = lambda _: None,
) -> tuple[Calibration, pd.DataFrame, pd.DataFrame | None]:
    """(calibration, in-sample report, leave-one-source-out report or None)."""
    frame = load_frames(catalog, paths, database, tokens_per_gpu)
    groups = frame["source_group"].nunique()
    if validate and groups > MAX_MEASUREMENT_SOURCES:  # before the fit: each group is one more fit to validate
        raise PlannerError(
            f"{_named(paths)}: {groups:,} source groups{' with the database' if database else ''}, more than "
            f"{MAX_MEASUREMENT_SOURCES} (leave-one-source-out validation fits once per group); give the rows of one "
            "measurement set one source_group (calibrate: or pass --no-cross-validation)"
        )
    names = (["planner/data/" + DATABASE] if database else []) + [Path(p).name for p in paths]
    source = (
        "fitted to "
        + " + ".join(names)
        + (f" (tokens_per_gpu {tokens_per_gpu:g} where not given)" if tokens_per_gpu else "")
    )
    progress(f"fitting {len(frame)} measurements from {frame['source_group'].nunique()} sources")
    calibration = fit(frame, source)
    memory = _rounded(memory_summary(memory_report(frame)))
    calibration = calibration.model_copy(
        update={"coverage": coverage(frame), "fit": {**calibration.fit, "memory": memory}}
    )
    report = point_report(frame, calibration)
    cv = None
    if validate and frame["source_group"].nunique() > 1:
        cv = cross_validate(frame, calibration, progress)
        by_arch = None
        if frame["architecture"].nunique() > 1:  # how far an architecture without measurements may miss
            by_arch = cross_validate(frame, calibration, progress, by="architecture")
        fit_record = {**calibration.fit}
        # a new user's cluster is a new publication (its own software, its own setting): the shipped ranges are
        # the residuals of predicting each document from the others, where there are several documents
        by = "source_group"
        if 1 < frame["publication"].nunique() < frame["source_group"].nunique():
            by = "publication"
            by_document = ranged(cross_validate(frame, calibration, progress, by=by), by_arch, frame, by)
            fit_record["leave_one_publication_out"] = _rounded(summary(by_document, by=by))
        residuals = by_document if by == "publication" else cv
        cv = ranged(cv, by_arch, frame, "source_group", residuals)
        fit_record["leave_one_source_out"] = _rounded(summary(cv))
        if by_arch is not None:
            fit_record["leave_one_architecture_out"] = _rounded(summary(by_arch, by="architecture"))
        update = {"uncertainty": uncertainty(residuals, by_arch), "fit": fit_record}
        calibration = calibration.model_copy(update=update)
    return calibration, report, cv


def ranged(
    cv: pd.DataFrame, by_arch: pd.DataFrame | None, frame: pd.DataFrame, by: str, residuals: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Each group's out-of-sample points with the p10-p90 range built from the other groups' residuals alone
    (`residuals`, default cv itself; by_arch for an architecture the group's fit never saw), and whether each
    measurement fell inside: the range's own out-of-sample test."""
    residuals = cv if residuals is None else residuals
    parts = []
    for group in sorted(cv[by].unique()):
        others = [None if r is None else r[r[by] != group] for r in (residuals, by_arch)]
        seen = set(frame.loc[frame[by] != group, "architecture"])
        cal = Calibration(uncertainty=uncertainty(*others))
        parts.append(with_range(cv[cv[by] == group], cal, seen))
    return pd.concat(parts).sort_index()


def memory_report(frame: pd.DataFrame) -> pd.DataFrame:
    """The memory model against the runs that publish their peak memory per GPU (mostly PyTorch's reserved
    memory, which the caching allocator rounds up): predicted, measured, |predicted/measured - 1|."""
    rows = frame[frame["measured_memory_gib"].notna()].reset_index(drop=True)
    if rows.empty:
        return pd.DataFrame(columns=["id", "source_group", "measured_gib", "predicted_gib", "abs_error"])
    parts = perf.decompose({c: rows[c].to_numpy() for c in rows.columns}, len(rows))
    out = rows[["id", "source_group", "publication", "gpu"]].copy()
    out["measured_gib"] = rows["measured_memory_gib"]
    out["predicted_gib"] = parts["memory_per_gpu_gib"]
    out["abs_error"] = (out["predicted_gib"] / out["measured_gib"] - 1).abs()
    return out


def memory_summary(report: pd.DataFrame) -> dict:
    if report.empty:
        return {"points": 0}
    signed = report["predicted_gib"] / report["measured_gib"] - 1
    per_source = report.groupby("source_group")["abs_error"].agg(["median", "size"])
    return {
        "points": len(report),
        "median_abs_error": float(report["abs_error"].median()),
        "max_abs_error": float(report["abs_error"].max()),
        "signed_median": float(signed.median()),
        "per_source": {g: {k: float(v) for k, v in r.items()} for g, r in per_source.iterrows()},
    }


def coverage(frame: pd.DataFrame) -> dict[str, float]:
    """Per framework, the fewest tokens per GPU per micro-step among the multi-node runs (where the fitted
    overlap and per-call costs stop being measured and start being extrapolated)."""
    multi = frame[frame["gpus"] > frame["scale_up_gpus"]]
    tokens = multi["seq_len"] * multi["micro_batch"]
    return {str(fw): float(t) for fw, t in tokens.groupby(multi["framework"]).min().items()}


def _rounded(value):
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return round(value, 4) if isinstance(value, float) and math.isfinite(value) else value
