"""Calibration: the fitted parameters the performance model uses, and the uncertainty of its predictions.

Fitted (planner/model/fitting.py, `planner calibrate`): the GEMM efficiency per GPU architecture (not per SKU:
H100 and H200 share GH100's), width_k (the width roll-off), FlashAttention's efficiency per architecture and the
Triton / FlashAttention-3 kernels' rates relative to it, the low-precision casts, eta_net per fabric, overlap
and a fixed per-micro-step overhead per framework, host time per collective and (DeepSpeed) per rank and
gradient tensor, and latency_scale (a multiplier on NCCL's own latency model).
Missing entries fall back to the priors in planner.assumptions.model. `uncertainty` holds quantiles of the
leave-one-publication-out log residuals log(predicted / measured), per group, which `range_factors` turns into
a p10-p90 range and the pessimistic factor `--confidence` buys for.

The shipped default (planner/data/calibration_default.json) is `planner calibrate` on the measurement
database planner/data/measurements.csv; a test re-runs that fit and checks it reproduces the file.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from planner.assumptions import model as A
from planner.base.errors import PlannerError
from planner.base.fileio import read_text
from planner.base.limits import MAX_CALIBRATION_BYTES, MAX_LOG_RESIDUAL, cut, short
from planner.base.resources import data_dir
from planner.base.safeyaml import YamlProblem, load_json, load_yaml
from planner.base.text import check_value
from planner.catalog.rows import error_text

DEFAULT_FILE = "calibration_default.json"
Fraction = Annotated[float, Field(gt=0, le=1)]  # an efficiency: above 0, at most all of peak
QUANTILES = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)
UNMEASURED = "unmeasured architecture"  # the uncertainty group of leave-one-architecture-out residuals


class Calibration(BaseModel):
    """Parameters that replace the priors in planner.assumptions.model. Missing entries fall back to them."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    gemm_efficiency: dict[str, Fraction] = Field(
        default_factory=dict, description="GPU architecture -> sustained fraction of dense peak of the block GEMMs"
    )
    cast_bytes: float = Field(
        A.CAST_BYTES.value, ge=0, le=100, description="HBM bytes per low-precision GEMM input element per pass"
    )
    width_k: float = Field(
        A.WIDTH_K.value, ge=0, le=1e3, description="h_half / (peak FLOP/s / HBM B/s): the width penalty's scale"
    )
    attention_efficiency: dict[str, Fraction] = Field(
        default_factory=dict,
        description="GPU architecture -> FlashAttention's sustained fraction of dense peak on causal attention",
    )
    framework_efficiency: dict[str, Annotated[float, Field(gt=0, le=2)]] = Field(
        default_factory=dict, description="framework -> compute efficiency relative to PyTorch FSDP's kernels"
    )
    triton_attention_ratio: Fraction = Field(
        A.TRITON_ATTENTION_RATIO.value, description="MPT's Triton FlashAttention relative to FlashAttention"
    )
    fa3_attention_ratio: float = Field(
        A.FA3_ATTENTION_RATIO.value,
        ge=1,
        le=3,
        description="FlashAttention-3 class kernels relative to FlashAttention-2",
    )
    moe_gemm_ratio: Fraction = Field(
        A.MOE_GEMM_RATIO.value, description="routed experts' GEMM efficiency relative to the dense GEMMs'"
    )
    moe_layer_overhead_s: float = Field(
        A.MOE_LAYER_OVERHEAD_S.value, ge=0, le=0.1, description="host seconds per MoE layer per pass (sync, launches)"
    )
    cp_attention_penalty: float = Field(
        A.CP_ATTENTION_PENALTY.value, ge=0, le=3, description="extra attention time x (cp-1)/cp under ring attention"
    )
    eta_net: dict[str, Fraction] = Field(default_factory=dict, description="fabric -> fraction of line rate")
    overlap: dict[str, Annotated[float, Field(ge=0, le=1)]] = Field(
        default_factory=dict, description="framework -> share of the shorter phase hidden"
    )
    latency_scale: float = Field(1.0, gt=0, le=100, description="multiplier on NCCL's ring latency model")
    step_overhead_s: dict[str, Annotated[float, Field(ge=0, le=100)]] = Field(
        default_factory=dict, description="framework -> fixed seconds per micro-step"
    )
    cpu_adam_bytes_per_param: float = Field(
        A.CPU_ADAM_BYTES_PER_PARAM.value,
        gt=0,
        le=1e5,
        description="optimizer offload: host DRAM bytes per parameter per CPU-Adam step (effective)",
    )
    collective_overhead_s: dict[str, Annotated[float, Field(ge=0, le=1)]] = Field(
        default_factory=dict, description="framework -> host seconds per collective call (hooks, bookkeeping)"
    )
    rank_overhead_s: dict[str, Annotated[float, Field(ge=0, le=1e-2)]] = Field(
        default_factory=dict, description="framework -> host seconds per rank of the group per gradient tensor"
    )
    source: str = "priors of planner.assumptions.model (no fit)"
    fit: dict = Field(default_factory=dict, description="how it was fitted: inputs, errors")
    uncertainty: dict[str, dict[str, float]] = Field(
        default_factory=dict,
        description="group -> quantile -> log(predicted/measured) from leave-one-source-out validation",
    )
    coverage: dict[str, Annotated[float, Field(gt=0, le=1e9)]] = Field(
        default_factory=dict,
        description="framework -> fewest tokens per GPU per micro-step among the multi-node runs fitted",
    )

    @field_validator("overlap", mode="before")
    @classmethod
    def _one_overlap_for_all(cls, value: object) -> object:
        """Calibration files of planner 0.1 carry a single overlap: it applies to every framework."""
        if isinstance(value, int | float) and not isinstance(value, bool):
            return {fw: float(value) for fw in A.FRAMEWORKS}
        return value

    @model_validator(mode="before")
    @classmethod
    def _per_gpu_fits_are_gone(cls, data: object) -> object:
        """Files fitted before the per-architecture model carry eta_comp per GPU SKU (and attention_cost): their
        numbers belong to a different model, so they are refused, not reinterpreted."""
        if isinstance(data, dict) and ("eta_comp" in data or "attention_cost" in data):
            raise ValueError(
                "a calibration of the per-GPU model (eta_comp / attention_cost): the compute efficiency now belongs to "
                "the GPU architecture; refit it"
            )
        return data

    # names and source end up in reports and workbooks: no control characters (planner.base.limits)
    _text = field_validator("*", mode="before")(check_value)

    @field_validator("uncertainty")
    @classmethod
    def _quantiles(cls, value: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
        """Each group holds every quantile of QUANTILES, in order, each a log residual within
        MAX_LOG_RESIDUAL (range_factors exponentiates them: a hand-edited 1e300 would overflow)."""
        keys = [_key(q) for q in QUANTILES]
        for group, q in value.items():
            missing = [k for k in keys if k not in q]
            if missing:
                raise ValueError(f"group {short(group)} lacks the quantiles {', '.join(missing)}")
            values = [q[k] for k in keys]
            if any(abs(v) > MAX_LOG_RESIDUAL for v in values):
                raise ValueError(f"group {short(group)}: a quantile beyond +-{MAX_LOG_RESIDUAL:g} (a log residual)")
            if values != sorted(values):
                raise ValueError(f"group {short(group)}: the quantiles {', '.join(keys)} must not decrease")
        return value

    def gemm_efficiency_for(self, architecture: str) -> float:
        """The architecture's fitted GEMM efficiency; else that of the architecture it derives from
        (ARCHITECTURE_FAMILY: Blackwell Ultra keeps Blackwell's SM) scaled by their priors; else its prior (the
        MAMF fraction) scaled by how far the fitted architectures run below theirs (the median ratio): a training
        step's GEMMs on an architecture without measurements run as far below its maximum as the measured ones."""
        if architecture in self.gemm_efficiency:
            return self.gemm_efficiency[architecture]
        prior = gemm_prior(architecture)
        family = _family(architecture)
        if family in self.gemm_efficiency:
            return min(1.0, self.gemm_efficiency[family] * prior / gemm_prior(family))
        ratios = sorted(v / gemm_prior(a) for a, v in self.gemm_efficiency.items())
        if not ratios:
            return prior
        middle = len(ratios) // 2
        ratio = ratios[middle] if len(ratios) % 2 else (ratios[middle - 1] + ratios[middle]) / 2
        return min(1.0, prior * ratio)

    def measured(self, architecture: str) -> bool:
        """Whether the fit saw this architecture (else its efficiency is the prior, its range widened)."""
        return architecture in self.gemm_efficiency

    @staticmethod
    def lowp_ratio_for(architecture: str) -> float:
        return A.by_architecture(A.LOWP_EFFICIENCY_RATIO, architecture)

    def attention_efficiency_for(self, architecture: str) -> float:
        """Fitted, else the architecture's published FlashAttention rate (not scaled like the GEMMs: the prior
        is itself a training kernel's measured rate)."""
        for name in (architecture, _family(architecture)):
            if name in self.attention_efficiency:
                return self.attention_efficiency[name]
        return A.by_architecture(A.ATTENTION_EFFICIENCY_PRIOR, architecture)

    def framework_efficiency_for(self, framework: str) -> float:
        return self.framework_efficiency.get(framework, A.FRAMEWORK_EFFICIENCY_PRIOR[framework].value)

    def eta_net_for(self, fabric: str) -> float:
        """A fitted value; else the prior scaled by the ratio of a fitted fabric to its prior (a fit that
        lowers IB's efficiency lowers RoCE's and EFA's alike, so no unmeasured fabric looks better)."""
        if fabric in self.eta_net:
            return self.eta_net[fabric]
        prior = A.ETA_NET_PRIOR[fabric].value if fabric in A.ETA_NET_PRIOR else 0.0
        reference = next((f for f in A.ETA_NET_PRIOR if f in self.eta_net), None)
        if reference is None:
            return prior
        return min(1.0, prior * self.eta_net[reference] / A.ETA_NET_PRIOR[reference].value)

    def overlap_for(self, framework: str) -> float:
        return self.overlap.get(framework, A.OVERLAP_PRIOR[framework].value)

    def collective_overhead_for(self, framework: str) -> float:
        return self.collective_overhead_s.get(framework, A.COLLECTIVE_OVERHEAD_PRIOR[framework].value)

    def rank_overhead_for(self, framework: str) -> float:
        return self.rank_overhead_s.get(framework, A.RANK_OVERHEAD_PRIOR[framework].value)

    def step_overhead_for(self, framework: str) -> float:
        return self.step_overhead_s.get(framework, A.STEP_OVERHEAD_PRIOR[framework].value)

    def range_factors(
        self, arch: str, framework: str, fabric: str, low_q=0.1, high_q=0.9, measured: bool | None = None
    ) -> tuple[float, float, str]:
        """(low, high, group): measured / predicted at the low and high quantiles for the most specific group
        with enough validation points; (1, 1, "") when the calibration carries no uncertainty. An architecture
        the fit never saw takes the residuals of predicting each measured architecture from the others
        (UNMEASURED), wider than any measured group's (`measured`: whether the fit saw it, default: it has a
        fitted efficiency)."""
        groups = [f"{arch}|{framework}|{fabric}", f"{arch}|{framework}", framework, "all"]
        measured = self.measured(arch) if measured is None else measured
        if not measured and UNMEASURED in self.uncertainty:
            groups = [UNMEASURED]
        for group in groups:
            q = self.uncertainty.get(group)
            if q:
                # residual r = log(pred/meas): measured = predicted * exp(-r); a high residual is a low outcome
                return math.exp(-q[_key(high_q)]), math.exp(-q[_key(low_q)]), group
        return 1.0, 1.0, ""

    def unmeasured_note(self, arch: str, gpu: str) -> str:
        """A warning for a GPU whose architecture no measurement covers ("" when one does)."""
        if not self.gemm_efficiency or self.measured(arch):
            return ""
        seen = ", ".join(sorted(self.gemm_efficiency))
        return (
            f"{gpu} ({arch}): no training measurement of this architecture; its GEMM efficiency is the published "
            f"maximum-matmul fraction scaled like the measured architectures ({seen}), and its range is that of "
            "predicting one architecture from the others: benchmark before buying"
        )

    def extrapolation_note(self, framework: str, tokens_per_gpu: float, multi_node: bool) -> str:
        """A warning when a multi-node run has fewer tokens per GPU per micro-step than any multi-node run of
        its framework the fit saw: communication is hidden behind less compute than ever measured, and the
        fitted overlap is extrapolated ("" inside the measured range)."""
        least = self.coverage.get(framework)
        if not multi_node or least is None or tokens_per_gpu >= least:
            return ""
        return (
            f"extrapolated: {tokens_per_gpu:,.0f} tokens per GPU per micro-step, fewer than any multi-node "
            f"{framework} run the model was fitted to ({least:,.0f}); even at 2K tokens per GPU held-out runs were up "
            "to 1.7x (FSDP) and 2.3x (DeepSpeed of 2021) slower than predicted (docs/model.md section 6): size with "
            "--confidence 0.9 and benchmark before buying"
        )

    def pessimistic_factor(self, arch: str, framework: str, fabric: str, confidence: float) -> float:
        """The throughput multiplier reached with probability `confidence` (e.g. 0.9: the p10 outcome)."""
        low, _, group = self.range_factors(arch, framework, fabric, low_q=1 - confidence, high_q=confidence)
        return min(1.0, low) if group else 1.0

    @classmethod
    def priors(cls) -> Calibration:
        return cls()

    @classmethod
    def default(cls) -> Calibration:
        """The shipped calibration (fitted to planner/data/measurements.csv)."""
        return _DEFAULT if _DEFAULT is not None else cls.priors()

    def write(self, path: str | Path) -> None:
        from planner.base.fileio import write_text_atomic

        write_text_atomic(Path(path), self.model_dump_json(indent=2) + "\n")


def _family(architecture: str) -> str:
    return A.ARCHITECTURE_FAMILY.get(architecture, "")


def gemm_prior(architecture: str) -> float:
    return A.by_architecture(A.GEMM_EFFICIENCY_PRIOR, architecture)


def _key(q: float) -> str:
    """Quantile keys as stored: the nearest of QUANTILES, printed as 'p10'."""
    nearest = min(QUANTILES, key=lambda x: abs(x - q))
    return f"p{round(nearest * 100)}"


def load_calibration(path: str | Path | None) -> Calibration:
    """Read a calibration file (JSON or YAML). None -> the shipped default."""
    if path is None:
        return Calibration.default()
    path = Path(path)
    text = read_text(path, MAX_CALIBRATION_BYTES, "calibration")
    try:
        data = load_json(text) if path.suffix.lower() == ".json" else load_yaml(text)
    except YamlProblem as exc:
        raise PlannerError(f"{path}: not valid JSON/YAML ({exc})") from None
    try:
        return Calibration.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"]) or "(top level)"
        value = "" if err["type"] == "missing" else f" = {short(err.get('input'))}"
        message = error_text(err) if err["type"] != "missing" else str(err["msg"])
        raise PlannerError(f"{path}: {cut(where, 60)}{value}: {message}; write it with `planner calibrate`") from None


_DEFAULT: Calibration | None = None
_DEFAULT = load_calibration(data_dir() / DEFAULT_FILE) if (data_dir() / DEFAULT_FILE).exists() else None
