"""Calibration: the fitted parameters the performance model uses, and the uncertainty of its predictions.

Fitted (planner/model/fitting.py, `planner calibrate`): eta_comp per GPU (the ceiling of compute efficiency at large
width), hidden_half (the width at which GEMMs run at half that ceiling), eta_net per fabric, overlap and a
fixed per-micro-step overhead per framework, host time per collective and (DeepSpeed) per rank and gradient
tensor, and latency_scale (a multiplier on NCCL's own latency model).
Missing entries fall back to the priors in planner.assumptions.model. `uncertainty` holds quantiles of the
leave-one-source-out log residuals log(predicted / measured), per group, which `range_factors` turns into
a p10-p90 range and the pessimistic factor `--confidence` buys for.

The shipped default (planner/data/calibration_default.json) is `planner calibrate` on the measurement
database planner/data/measurements.csv; a test re-runs that fit and checks it reproduces the file.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from planner.assumptions import model as A
from planner.base.errors import PlannerError
from planner.base.fileio import read_text
from planner.base.limits import MAX_CALIBRATION_BYTES, MAX_LOG_RESIDUAL, check_value, cut, short
from planner.base.resources import data_dir
from planner.base.safeyaml import YamlProblem, load_json, load_yaml
from planner.catalog.rows import error_text

DEFAULT_FILE = "calibration_default.json"
Fraction = Annotated[float, Field(gt=0, le=1)]  # an efficiency: above 0, at most all of peak
QUANTILES = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)


class Calibration(BaseModel):
    """Parameters that replace the priors in planner.assumptions.model. Missing entries fall back to them."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    eta_comp: dict[str, Fraction] = Field(default_factory=dict, description="GPU name -> ceiling fraction of peak")
    width_k: float = Field(
        A.WIDTH_K.value, ge=0, le=1e3, description="h_half / (peak FLOP/s / HBM B/s): the width penalty's scale"
    )
    attention_cost: float = Field(
        A.ATTENTION_COST.value, gt=0, le=5, description="time of counted attention FLOPs relative to dense GEMM FLOPs"
    )
    framework_efficiency: dict[str, Annotated[float, Field(gt=0, le=2)]] = Field(
        default_factory=dict, description="framework -> compute efficiency relative to PyTorch FSDP's kernels"
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

    def eta_comp_for(self, gpu: str) -> float:
        """The GPU's fitted value, else that of a measured GPU on the same die (assumptions.SAME_DIE), else
        its prior (or the die sibling's), else the default prior."""
        sibling = A.SAME_DIE.get(gpu, "")
        for name in (gpu, sibling):
            if name in self.eta_comp:
                return self.eta_comp[name]
        return A.ETA_COMP.get(gpu, A.ETA_COMP.get(sibling, A.ETA_COMP_DEFAULT)).value

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

    def range_factors(self, gpu: str, framework: str, fabric: str, low_q=0.1, high_q=0.9) -> tuple[float, float, str]:
        """(low, high, group): measured / predicted at the low and high quantiles for the most specific group
        with enough validation points; (1, 1, "") when the calibration carries no uncertainty."""
        for group in (f"{gpu}|{framework}|{fabric}", f"{gpu}|{framework}", framework, "all"):
            q = self.uncertainty.get(group)
            if q:
                # residual r = log(pred/meas): measured = predicted * exp(-r); a high residual is a low outcome
                return math.exp(-q[_key(high_q)]), math.exp(-q[_key(low_q)]), group
        return 1.0, 1.0, ""

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

    def pessimistic_factor(self, gpu: str, framework: str, fabric: str, confidence: float) -> float:
        """The throughput multiplier reached with probability `confidence` (e.g. 0.9: the p10 outcome)."""
        low, _, group = self.range_factors(gpu, framework, fabric, low_q=1 - confidence, high_q=confidence)
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
