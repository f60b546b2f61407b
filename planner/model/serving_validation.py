"""The serving model against published measurements (planner/data/serving_measurements.csv; docs/model.md
section 10): predict each point, fit the engine's five efficiencies (planner/model/engine.py Efficiency) on
the fit split, and report the error out of publication: each fit-split publisher predicted by a fit on the
other fit-split publishers, and the holdout split by a fit on the whole fit split (never on itself).

A point is predicted as it was measured:

  * max_throughput: every request queued at once; the batch is what the KV cache and the engine's cap
    (serve_max_sequences) allow; the rate the replica sustains there, x output tokens / its GPUs.
  * static_batch: B requests prefilled together, then decoded together: B x prefill + O steps at batch B;
    throughput B x O / that time / GPUs; a B beyond what the KV cache holds runs in waves.
  * concurrency: a closed loop of C clients: the rate at which C = rate x (TTFT + (O - 1) TPOT) (Little's
    law), and the mean TTFT and TPOT there.

Errors are log(predicted / measured); the fit minimises them (each publisher weighted 1/sqrt(its points),
bounded efficiencies), the report gives the median |predicted / measured - 1| per metric.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

from planner.assumptions import serving as S
from planner.base.errors import PlannerError
from planner.base.resources import data_dir
from planner.catalog.load import Catalog
from planner.model import engine, queueing
from planner.model.engine import Efficiency, Replicas, Shape
from planner.model.queueing import Requests

METRICS = ("output_tokens_per_s_per_gpu", "ttft_ms", "tpot_ms")
BOUNDS = {
    "hbm": (0.3, 1.0),
    "decode": (0.1, 1.0),
    "prefill": (0.1, 1.0),
    "step_overhead_s": (1e-4, 0.03),
    "collective_latency": (0.5, 10.0),
}


def database() -> Path:
    return data_dir() / "serving_measurements.csv"


def load(path: Path | None = None) -> pd.DataFrame:
    return pd.read_csv(path or database(), comment="#")


def _replicas(catalog: Catalog, rows: pd.DataFrame) -> Replicas:
    gpus = [catalog.gpu(name) for name in rows["gpu"]]
    peak = [getattr(g, S.PRECISIONS[p][2]) for g, p in zip(gpus, rows["precision"], strict=True)]
    scale_up: dict[str, float] = {}  # per GPU, the fastest scale-up link of a catalog server with it
    for server in catalog.items("servers"):
        name = catalog.gpu(server.gpu).name
        scale_up[name] = max(scale_up.get(name, 0.0), float(server.scale_up_gb_per_s))
    missing = sorted({g.name for g in gpus} - set(scale_up))
    if missing:
        raise PlannerError(f"serving measurements on {', '.join(missing)}: no catalog server has that GPU (its NVLink)")
    return Replicas(
        gpus=rows["replica_gpus"].to_numpy(float),
        ep=(rows["layout"] == "ep").to_numpy(),
        weight_bytes=np.array([S.PRECISIONS[p][0] for p in rows["precision"]]),
        kv_bytes=np.array([S.PRECISIONS[p][1] for p in rows["precision"]]),
        hbm_gib=np.array([g.hbm_gib for g in gpus], float),
        hbm_gb_per_s=np.array([g.hbm_gb_per_s for g in gpus], float),
        peak_tflops=np.array(peak, float),
        scale_up_gb_per_s=np.array([scale_up[g.name] for g in gpus], float),
    )


def predict(catalog: Catalog, frame: pd.DataFrame, eff: Efficiency) -> pd.DataFrame:
    """The predicted METRICS of every point (NaN where the kind predicts none)."""
    out = pd.DataFrame(np.nan, index=frame.index, columns=[f"predicted_{m}" for m in METRICS])
    for (model, kind), rows in frame.groupby(["model", "kind"], sort=False):
        shape, r = Shape.of(catalog.model(model)), _replicas(catalog, rows)
        req = Requests(rows["input_tokens"].to_numpy(float), rows["output_tokens"].to_numpy(float), 0.5)
        got = _KINDS[kind](shape, r, req, rows, eff)
        for metric, values in got.items():
            out.loc[rows.index, f"predicted_{metric}"] = values
    return out


def _max_throughput(shape, r, req, rows, eff) -> dict:
    """Every request queued: the batch at its limit B (KV cache, engine cap), each request prefilled once
    and decoded O - 1 steps, so B requests take (O - 1) T(B) + B t_p of the replica (operate's balance)."""
    batch = engine.max_sequences(shape, r, req.mean_context)
    step = engine.decode_step_s(shape, r, batch, req.mean_context, eff)["step_s"]
    rate = batch / ((req.output_tokens - 1) * step + batch * engine.prefill_s(shape, r, req.input_tokens, eff))
    return {"output_tokens_per_s_per_gpu": np.where(batch >= 1, rate, 0.0) * req.output_tokens / r.gpus}


def _static_batch(shape, r, req, rows, eff) -> dict:
    """B requests at once, in waves of at most what the KV cache holds at the mean context and the engine's cap
    (max_sequences: an engine admits what fits and the rest as sequences finish, and requests of one length
    finish together): each wave's B / waves requests prefilled, then decoded O steps together."""
    asked = rows["concurrency"].to_numpy(float)
    most = engine.max_sequences(shape, r, req.mean_context)
    waves = np.ceil(asked / np.maximum(most, 1.0))
    batch = asked / waves
    prefill = batch * engine.prefill_s(shape, r, req.input_tokens, eff)
    decode = req.output_tokens * engine.decode_step_s(shape, r, batch, req.mean_context, eff)["step_s"]
    rate = asked * req.output_tokens / (waves * (prefill + decode)) / r.gpus
    return {"output_tokens_per_s_per_gpu": np.where(most >= 1, rate, 0.0)}


def _concurrency(shape, r, req, rows, eff) -> dict:
    clients = rows["concurrency"].to_numpy(float)
    top = queueing.max_rate(shape, r, req, None, None, eff)["rate"]
    lo, hi = np.zeros_like(top), top
    for _ in range(queueing.BISECTIONS):
        mid = (lo + hi) / 2
        at = queueing.operate(shape, r, req, mid, eff)
        inside = mid * (at["ttft_s"] + (req.output_tokens - 1) * at["tpot_s"])  # Little's law
        few = at["stable"] & (inside < clients)
        lo, hi = np.where(few, mid, lo), np.where(few, hi, mid)
    at = queueing.operate(shape, r, req, lo, eff)
    return {
        "output_tokens_per_s_per_gpu": lo * req.output_tokens / r.gpus,
        "ttft_ms": at["ttft_s"] * 1e3,
        "tpot_ms": at["tpot_s"] * 1e3,
    }


_KINDS = {"max_throughput": _max_throughput, "static_batch": _static_batch, "concurrency": _concurrency}


def log_errors(frame: pd.DataFrame, predicted: pd.DataFrame) -> pd.DataFrame:
    """log(predicted / measured) per point and metric (NaN where either is missing)."""
    out = {}
    for m in METRICS:
        measured = pd.to_numeric(frame[m], errors="coerce").to_numpy(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            out[m] = np.log(predicted[f"predicted_{m}"].to_numpy(float) / measured)
    return pd.DataFrame(out, index=frame.index)


def fit(catalog: Catalog, frame: pd.DataFrame, start: Efficiency = engine.DEFAULT) -> Efficiency:
    """The efficiencies that minimise the weighted log errors over `frame`."""
    names = [f.name for f in dataclasses.fields(Efficiency)]
    lo = np.log([BOUNDS[n][0] for n in names])
    hi = np.log([BOUNDS[n][1] for n in names])
    x0 = np.clip(np.log([getattr(start, n) for n in names]), lo + 1e-9, hi - 1e-9)
    weight = 1 / np.sqrt(frame.groupby("publisher")["publisher"].transform("size").to_numpy(float))

    def residuals(x: np.ndarray) -> np.ndarray:
        eff = Efficiency(**dict(zip(names, np.exp(x), strict=True)))
        errors = log_errors(frame, predict(catalog, frame, eff)).to_numpy() * weight[:, None]
        return np.nan_to_num(errors[~np.isnan(errors)], posinf=5.0, neginf=-5.0)

    found = least_squares(residuals, x0, bounds=(lo, hi), diff_step=1e-3, max_nfev=200)
    return Efficiency(**dict(zip(names, np.exp(found.x), strict=True)))


def out_of_publication(catalog: Catalog, frame: pd.DataFrame) -> tuple[pd.DataFrame, Efficiency]:
    """Every point's out-of-publication prediction (fit-split publishers one at a time; the holdout by the fit
    on the whole fit split), and that whole-fit-split fit."""
    train = frame[frame["split"] == "fit"]
    whole = fit(catalog, train)
    parts = [predict(catalog, frame[frame["split"] == "holdout"], whole)]
    for publisher in train["publisher"].unique():
        others = fit(catalog, train[train["publisher"] != publisher])  # from the priors: `whole` saw this one
        parts.append(predict(catalog, train[train["publisher"] == publisher], others))
    return pd.concat(parts).loc[frame.index], whole


def summary(frame: pd.DataFrame, predicted: pd.DataFrame) -> pd.DataFrame:
    """Median |predicted / measured - 1| and points per publisher (with its split) and metric."""
    errors = np.abs(np.exp(log_errors(frame, predicted)) - 1)
    rows = []
    for (split, publisher), idx in frame.groupby(["split", "publisher"], sort=False).groups.items():
        for m in METRICS:
            e = errors.loc[idx, m].dropna()
            if len(e):
                row = {"split": split, "publisher": publisher, "metric": m, "points": len(e), "median": e.median()}
                rows.append(row)
    for split in ("fit", "holdout"):
        idx = frame.index[frame["split"] == split]
        for m in METRICS:
            e = errors.loc[idx, m].dropna()
            if len(e):
                rows.append({"split": split, "publisher": "all", "metric": m, "points": len(e), "median": e.median()})
    return pd.DataFrame(rows)


def report(catalog: Catalog, frame: pd.DataFrame) -> dict:
    """The serving validation: errors with the stated efficiencies (fitted to nothing: every point is out of
    sample), and with efficiencies fitted out of publication; the fit on the whole fit split; every point."""
    stated = predict(catalog, frame, engine.DEFAULT)
    fitted, whole = out_of_publication(catalog, frame)
    points = frame[["source", "publisher", "split", "kind", "model", "gpu", "replica_gpus", "precision"]].copy()
    points[["input_tokens", "output_tokens"]] = frame[["input_tokens", "output_tokens"]]
    for m in METRICS:
        points[f"measured_{m}"] = pd.to_numeric(frame[m], errors="coerce")
        points[f"stated_{m}"] = stated[f"predicted_{m}"]
        points[f"fitted_{m}"] = fitted[f"predicted_{m}"]
    return {
        "stated": summary(frame, stated).to_dict("records"),
        "out_of_publication": summary(frame, fitted).to_dict("records"),
        "fit_on_fit_split": dataclasses.asdict(whole),
        "stated_efficiencies": dataclasses.asdict(engine.DEFAULT),
        "points": points.to_dict("records"),
    }


def report_text(report: dict, show_points: bool = False) -> str:
    """validate --serving's terminal report."""
    names = {"output_tokens_per_s_per_gpu": "throughput", "ttft_ms": "TTFT", "tpot_ms": "TPOT"}

    def table(rows: list[dict]) -> list[str]:
        return [
            f"  {r['split']:<8} {r['publisher']:<26} {names[r['metric']]:<11} {r['points']:>4}  {r['median']:>6.1%}"
            for r in rows
        ]

    head = f"  {'split':<8} {'publisher':<26} {'metric':<11} {'pts':>4}  median |error|"
    fitted = ", ".join(f"{k} {v:.3g}" for k, v in report["fit_on_fit_split"].items())
    stated = ", ".join(f"{k} {v:.3g}" for k, v in report["stated_efficiencies"].items())
    lines = [
        "Serving model, stated efficiencies (fitted to none of these points):",
        f"  ({stated})",
        head,
        *table(report["stated"]),
        "Efficiencies fitted out of publication (each fit-split publisher by a fit on the others; the holdout "
        "by the fit on the whole fit split):",
        f"  (whole fit split: {fitted})",
        head,
        *table(report["out_of_publication"]),
    ]
    if show_points:
        lines.append("Points (measured / stated / fitted out of publication):")
        for p in report["points"]:
            figures = [
                f"{names[m]} {p[f'measured_{m}']:.4g}/{p[f'stated_{m}']:.4g}/{p[f'fitted_{m}']:.4g}"
                for m in METRICS
                if p[f"measured_{m}"] == p[f"measured_{m}"]
            ]
            lines.append(
                f"  {p['source']} {p['kind']} {p['model']} {p['gpu']} x{p['replica_gpus']} {p['precision']} "
                f"{p['input_tokens']}/{p['output_tokens']}: " + "; ".join(figures)
            )
    return "\n".join(lines)
