"""`planner calibrate`: fit eta_comp (per GPU), eta_net (per fabric) and overlap to measured throughput.

Measurements CSV (one run per row; '#' lines are comments):
  gpu, gpus, gpus_per_node, node_gbps, fabric                 the cluster
  params (or model_params) | model                            the model
  tokens_per_gpu | micro_batch + seq_len                       tokens per GPU per micro-step
  measured_tflops                                              achieved TFLOPs/GPU as DeepSpeed reports it
    or tflops_per_gpu_low / tflops_per_gpu_high                a band, when only a range is known
  optional: checkpointing, qwz, hpz, qgz, grad_bytes, note

Least squares (scipy.optimize.least_squares, bounded): residuals are the relative errors of the
predictions (for a band, the relative distance outside the band shrunk by BAND_MARGIN), plus weak priors
(weight PRIOR_WEIGHT) pulling each parameter towards planner.assumptions' starting points. The priors only
decide where the data leave freedom, as bands do; with exact points they move a fit by well under 1%.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError
from scipy.optimize import least_squares

from planner import perf
from planner.api import Cluster, Workload, check_cluster, configuration_frame, workload
from planner.calibration import Calibration
from planner.catalog import Catalog, problem_from_pydantic
from planner.errors import CatalogError, CatalogProblem, PlannerError
from planner.limits import MAX_MEASUREMENT_ROWS, MAX_MEASUREMENTS_BYTES, text_problem
from planner.models import CloudFabricField, Count, Gbps, Params
from planner.tables import read_csv

BAND_MARGIN = 0.025  # aim 2.5% inside a band's edges, so the fit is not balanced on an edge
PRIOR_WEIGHT = 0.005  # a one-sigma prior miss costs as much as a 0.5% prediction error
PRIOR_SIGMA = {"eta_comp": 0.10, "eta_net": 0.10, "overlap": 0.30}
BOUNDS = {"eta_comp": (0.05, 1.0), "eta_net": (0.05, 1.0), "overlap": (0.0, 1.0)}


class Measurement(BaseModel):
    # allow_inf_nan=False: an inf or nan cell is refused here, not found later as non-finite residuals
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, populate_by_name=True, allow_inf_nan=False)

    gpu: str
    gpus: Count = Field(ge=1)
    gpus_per_node: Count = Field(ge=1)
    node_gbps: Gbps
    fabric: CloudFabricField
    params: Params | None = Field(None, alias="model_params")
    model: str | None = None
    tokens_per_gpu: Params | None = None
    micro_batch: Params | None = None
    seq_len: Count | None = None
    checkpointing: bool = True
    qwz: bool = False
    hpz: bool = False
    qgz: bool = False
    grad_bytes: float = Field(2.0, gt=0, le=8)
    measured_tflops: float | None = Field(None, gt=0, le=1e7)
    tflops_per_gpu_low: float | None = Field(None, ge=0, le=1e7)
    tflops_per_gpu_high: float | None = Field(None, gt=0, le=1e7)
    note: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _plain_text(cls, data: object) -> object:
        problem = text_problem(data) if isinstance(data, dict) else None
        if problem:
            raise PydanticCustomError("text", "{message}", {"column": problem[0], "message": problem[1]})
        return data

    @model_validator(mode="after")
    def _has_target(self) -> Measurement:
        if self.measured_tflops is None and self.tflops_per_gpu_low is None and self.tflops_per_gpu_high is None:
            raise ValueError("give measured_tflops, or tflops_per_gpu_low and/or tflops_per_gpu_high")
        if self.params is None and self.model is None:
            raise ValueError("give params (or model_params) or model")
        low, high = self.tflops_per_gpu_low, self.tflops_per_gpu_high
        if low is not None and high is not None and low > high:
            raise ValueError(f"tflops_per_gpu_low {low:g} is above tflops_per_gpu_high {high:g}")
        return self


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


def measurement_frame(
    catalog: Catalog, rows: list[tuple[int, Measurement]], tokens_per_gpu: float | None, label: str = "measurements"
) -> pd.DataFrame:
    """The rows as one table for perf.evaluate, in row order. A row the model rejects is named by file and
    row. Rows of one workload become one frame (one pandas call, not one per row: 5,000 rows took 15 s)."""
    groups: dict[Workload, list[tuple[int, Measurement, Cluster]]] = {}
    for number, m in rows:
        try:
            work, cluster = _row_inputs(catalog, m, tokens_per_gpu)
        except PlannerError as exc:
            raise PlannerError(f"{label}:{number}: {exc}") from None
        groups.setdefault(work, []).append((number, m, cluster))
    frames = []
    for work, members in groups.items():
        frame = configuration_frame(catalog, work, [cluster for _, _, cluster in members])
        frame["row"] = [number for number, _, _ in members]
        for column, field in (
            ("measured_tflops", "measured_tflops"),
            ("band_low", "tflops_per_gpu_low"),
            ("band_high", "tflops_per_gpu_high"),
        ):
            values = [getattr(m, field) for _, m, _ in members]
            frame[column] = [np.nan if v is None else float(v) for v in values]
        frames.append(frame)
    return pd.concat(frames, ignore_index=True).sort_values("row", kind="stable", ignore_index=True)


def _row_inputs(catalog: Catalog, m: Measurement, tokens_per_gpu: float | None) -> tuple[Workload, Cluster]:
    """The workload and cluster of one row, checked (so an error names this row, not a group)."""
    tokens = m.tokens_per_gpu if m.tokens_per_gpu is not None else (None if m.micro_batch else tokens_per_gpu)
    if tokens is None and m.micro_batch is None:
        raise PlannerError("tokens per GPU unknown; add a tokens_per_gpu column or pass --tokens-per-gpu")
    work = workload(
        catalog,
        params=m.params if m.model is None else None,
        model=m.model,
        micro_batch=m.micro_batch,
        seq_len=m.seq_len,
        tokens_per_gpu=tokens,
        checkpointing=m.checkpointing,
        qwz=m.qwz,
        hpz=m.hpz,
        qgz=m.qgz,
        grad_bytes=m.grad_bytes,
    )
    cluster = Cluster(m.gpu, m.gpus, m.gpus_per_node, m.node_gbps, m.fabric)
    check_cluster(cluster)
    catalog.gpu(cluster.gpu)
    return work, cluster


def _unpack(x: np.ndarray, gpus: list[str], fabrics: list[str], source: str) -> Calibration:
    return Calibration(
        eta_comp=dict(zip(gpus, map(float, x[: len(gpus)]), strict=True)),
        eta_net=dict(zip(fabrics, map(float, x[len(gpus) : -1]), strict=True)),
        overlap=float(x[-1]),
        source=source,
    )


def miss_tflops(predicted: pd.Series, frame: pd.DataFrame) -> pd.Series:
    """Signed error vs a measured point; for a band, distance outside it (0 inside)."""
    point = predicted - frame["measured_tflops"]
    below = (frame["band_low"] - predicted).clip(lower=0)
    above = (predicted - frame["band_high"]).clip(lower=0)
    band = above.fillna(0) - below.fillna(0)
    return point.where(frame["measured_tflops"].notna(), band)


def _residuals(x, frame, gpus, fabrics, priors, sigmas):
    cal = _unpack(x, gpus, fabrics, "")
    predicted = perf.evaluate(frame, cal)["achieved_tflops_per_gpu"]
    shrunk = frame.assign(
        band_low=frame["band_low"] * (1 + BAND_MARGIN), band_high=frame["band_high"] * (1 - BAND_MARGIN)
    )
    scale = frame["measured_tflops"].fillna(frame[["band_low", "band_high"]].mean(axis=1))
    data = (miss_tflops(predicted, shrunk) / scale).to_numpy()
    return np.concatenate([data, PRIOR_WEIGHT * (x - priors) / sigmas])


def fit(frame: pd.DataFrame, source: str) -> tuple[Calibration, pd.DataFrame]:
    """Fit to an evaluated-ready measurement frame. Returns the calibration and a per-point report."""
    gpus, fabrics = sorted(frame["gpu"].unique()), sorted(frame["fabric"].unique())
    priors = Calibration.priors()
    x0 = np.array([priors.eta_comp_for(g) for g in gpus] + [priors.eta_net_for(f) for f in fabrics] + [priors.overlap])
    kinds = ["eta_comp"] * len(gpus) + ["eta_net"] * len(fabrics) + ["overlap"]
    sigmas = np.array([PRIOR_SIGMA[k] for k in kinds])
    lower, upper = np.array([BOUNDS[k][0] for k in kinds]), np.array([BOUNDS[k][1] for k in kinds])
    result = least_squares(
        _residuals,
        np.clip(x0, lower, upper),
        bounds=(lower, upper),
        args=(frame, gpus, fabrics, x0, sigmas),
        x_scale=sigmas,
        diff_step=1e-4,
    )
    if not result.success:
        raise PlannerError(f"calibration fit did not converge ({result.message}); check the measurements")
    calibration = _unpack(result.x, gpus, fabrics, source)
    report = point_report(frame, calibration)
    rms = float(np.sqrt(np.mean(report["miss_tflops"] ** 2)))
    calibration = calibration.model_copy(
        update={
            "fit": {
                "points": len(report),
                "rms_miss_tflops": round(rms, 3),
                "priors": dict(zip(kinds, x0.tolist(), strict=True)),
                "fitted_fabrics": fabrics,
                "band_margin": BAND_MARGIN,
                "prior_weight": PRIOR_WEIGHT,
                "method": "scipy.optimize.least_squares (trf)",
            }
        }
    )
    return calibration, report


def point_report(frame: pd.DataFrame, calibration: Calibration) -> pd.DataFrame:
    evaluated = perf.evaluate(frame, calibration)
    report = frame[["row", "gpu", "gpus", "node_gbps", "fabric", "measured_tflops", "band_low", "band_high"]].copy()
    report["predicted_tflops"] = evaluated["achieved_tflops_per_gpu"]
    report["miss_tflops"] = miss_tflops(report["predicted_tflops"], frame)
    return report


def fit_file(catalog: Catalog, path: Path, tokens_per_gpu: float | None) -> tuple[Calibration, pd.DataFrame]:
    frame = measurement_frame(catalog, read_measurements(path), tokens_per_gpu, str(path))
    source = f"fitted to {path.name}" + (
        f" (tokens_per_gpu {tokens_per_gpu:g} where not given)" if tokens_per_gpu else ""
    )
    return fit(frame, source)
