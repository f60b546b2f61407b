"""Serving capacity of `planner fleet`: the output tokens/s one replica of a service decodes on a machine, on
the engine `planner serve` uses (planner/model/engine.py, docs/model.md section 10; docs/fleet.md section 4):

  * a replica is g GPUs inside one scale-up domain, tensor parallel (or expert parallel for a MoE model), the
    layouts engine.layouts lists;
  * its KV cache holds B sequences at the service's full context C (engine.max_sequences at C, at most
    `batch` per engine: one under tp, one per GPU under ep), beside the weights at `weight_bytes` per parameter;
  * a decode step of B sequences reads their KV cache at the mean context C / 2 (engine.decode_step_s: the
    GEMMs, attention, the tensor- or expert-parallel collectives and the engine's step overhead, at the
    engine's stated efficiencies) and makes B tokens, so tokens/s = B / step;
  * the time per output token is the step time, which the latency SLO caps. Demand is output tokens/s;
    speculative decoding is not modelled; weights held at 8 or 4 bits are multiplied at 16 (weight-only
    quantisation: the bf16 peak).
Each machine takes the layout, replica size and batch (the largest within the cap that meets the SLO) with the
most tokens/s per GPU. A service that gives its prompts' length (`input_tokens`) is served as `planner serve`
serves one: its requests (input_tokens in, output_tokens out, Poisson arrivals) are prefilled and decoded on the
replica with chunked prefill (planner/model/queueing.py), and a replica's capacity is the most requests/s whose
time per output token at the p90 meets the SLO (within the batch cap), times output_tokens. A measured tokens/s
per GPU, when given, replaces the estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from planner.assumptions import model as A
from planner.catalog.load import Catalog
from planner.model import engine, queueing
from planner.model.engine import Replicas, Shape

ESTIMATED_CONTEXT = 4096  # tokens per sequence of a model known by its size alone (GPT-3's 2,048, doubled)


@dataclass(frozen=True)
class ServedModel:
    """What a service decodes: the model's shape, its weights' bytes, the context each sequence holds, the
    batch cap and the SLO."""

    shape: Shape
    weight_bytes: float
    context_tokens: float
    max_batch: int
    max_ms_per_token: float | None = None
    measured_per_gpu: float | dict[str, float] | None = None
    requests: queueing.Requests | None = None  # the request shape, when the service gives its prompts' length


def served_model(catalog: Catalog, service) -> ServedModel:
    """The model of an InferenceService: its architecture from models.csv, or Shape.estimated from params."""
    if service.model is not None:
        row = catalog.model(service.model)
        shape, seq_len = Shape.of(row), row.seq_len
    else:
        shape, seq_len = Shape.estimated(service.params), ESTIMATED_CONTEXT
    return ServedModel(
        shape=shape,
        weight_bytes=service.weight_bytes,
        context_tokens=service.context_tokens or seq_len,
        max_batch=service.batch,
        max_ms_per_token=service.max_ms_per_token,
        measured_per_gpu=service.tokens_per_s_per_gpu,
        requests=queueing.Requests(service.input_tokens, service.output_tokens) if service.input_tokens else None,
    )


def _domain(m) -> int:
    """GPUs a replica may span: the machine's scale-up domain where its bandwidth is known (one GPU otherwise,
    as `planner serve`), within the node."""
    if pd.isna(m.scale_up_gb_per_s) or pd.isna(m.scale_up_gpus) or not m.scale_up_gpus:
        return 1
    return int(np.gcd(int(m.scale_up_gpus), int(m.gpus_per_node)))


def _options(shape: Shape, machines: pd.DataFrame) -> pd.DataFrame:
    """One row per machine x layout x replica size inside its domain, with the machine's columns (`row`: its
    index)."""
    options = [
        (i, lay, g)
        for i, m in enumerate(machines.itertuples(index=False))
        for lay, g in engine.layouts(shape, _domain(m))
    ]
    rows = pd.DataFrame(options, columns=["row", "layout", "replica_gpus"])
    return pd.concat([rows, machines.iloc[rows["row"]].reset_index(drop=True)], axis=1)


def _largest_batch(model: ServedModel, r: Replicas, cap: np.ndarray) -> np.ndarray:
    """The most sequences (at most `cap`) whose decode step meets the SLO; 0 where not even one does. The step
    grows with the batch and tokens/s = B / step with it (the step's overhead is a positive intercept), so
    this batch is each replica's best; found by bisection over 1 .. cap."""
    low, high = np.zeros(len(cap), np.int64), cap.astype(np.int64)
    if not model.max_ms_per_token:
        return high
    while (low < high).any():
        mid = (low + high + 1) // 2
        step_s = engine.decode_step_s(model.shape, r, mid.astype(float), model.context_tokens / 2)["step_s"]
        meets = step_s * 1e3 <= model.max_ms_per_token
        low, high = np.where(meets, mid, low), np.where(meets, high, mid - 1)
    return low


def capacity(model: ServedModel, machines: pd.DataFrame) -> pd.DataFrame:
    """Per machine row (columns gpu, hbm_gib, hbm_gb_per_s, peak_tflops, gpus_per_node, scale_up_gpus,
    scale_up_gb_per_s): the best layout, replica_gpus, batch, ms_per_token and tokens_per_s per replica (0
    where the model cannot be served, with the reason)."""
    machines = machines.reset_index(drop=True)
    frame = _options(model.shape, machines).assign(weight_bytes=model.weight_bytes, kv_bytes=A.KV_CACHE_BYTES.value)
    r = Replicas.of(frame)
    measured = _measured(model, frame["gpu"])
    if model.requests is None:
        cap, batch, ms_per_token, estimated = _decoding(model, r, measured)
    else:
        cap, batch, ms_per_token, estimated = _serving(model, r)
        batch = np.where(~np.isnan(measured) & (cap >= 1), np.maximum(batch, 1), batch)  # a measured rate stands
    frame["batch"], frame["ms_per_token"] = batch, ms_per_token
    frame["tokens_per_s"] = np.where(np.isnan(measured), estimated, measured * frame["replica_gpus"])
    frame["per_gpu"] = np.where(batch >= 1, frame["tokens_per_s"] / frame["replica_gpus"], -1.0)
    order = frame.sort_values(["row", "per_gpu", "replica_gpus", "batch"], ascending=[True, False, True, True])
    best = order.drop_duplicates("row").set_index("row").reindex(range(len(machines)))
    ok = (best["per_gpu"] > 0).to_numpy()
    fits = np.zeros(len(machines), bool)
    fits[frame["row"].to_numpy()[cap >= 1]] = True
    out = machines.copy()
    out["layout"] = np.where(ok, best["layout"].fillna(""), "")
    for column in ("replica_gpus", "batch", "ms_per_token", "tokens_per_s"):
        out[column] = np.where(ok, best[column].fillna(0), 0)
    out["reason"] = ["" if ok[i] else _reason(fits[i]) for i in range(len(machines))]
    return out


def _batch_cap(model: ServedModel, r: Replicas) -> np.ndarray:
    """Sequences a replica may decode together: `batch` per engine, as planner serve counts its cap (one engine
    under tp; under ep one per GPU, each attending to its own sequences)."""
    return model.max_batch * np.where(r.ep, r.gpus, 1.0)


def _decoding(model: ServedModel, r: Replicas, measured: np.ndarray) -> tuple[np.ndarray, ...]:
    """Decode only: the memory cap at the full context, the batch, ms per token and tokens/s per replica."""
    cap = engine.max_sequences(model.shape, r, model.context_tokens, cap=_batch_cap(model, r)).astype(np.int64)
    # a measured rate stands for its own operating point: the replica at the most sequences that fit
    batch = np.where(np.isnan(measured), _largest_batch(model, r, cap), cap)
    step_s = engine.decode_step_s(model.shape, r, np.maximum(batch, 1).astype(float), model.context_tokens / 2)
    return cap, batch, step_s["step_s"] * 1e3, batch / step_s["step_s"]


def _serving(model: ServedModel, r: Replicas) -> tuple[np.ndarray, ...]:
    """Prefill and decode, as planner serve: the most requests/s within the SLO (TPOT at the p90), the batch
    there, its TPOT and output tokens/s per replica; a replica that serves none has batch 0."""
    req = model.requests
    tpot_s = model.max_ms_per_token / 1e3 if model.max_ms_per_token else None
    at = queueing.max_rate(model.shape, r, req, None, tpot_s, max_sequences=_batch_cap(model, r))
    serves = at["serves"] & (at["max_sequences"] >= 1)
    batch = np.where(serves, np.maximum(np.round(at["batch"]), 1), 0).astype(np.int64)
    return at["max_sequences"], batch, at["tpot_p_s"] * 1e3, np.where(serves, at["rate"] * req.output_tokens, 0.0)


def _measured(model: ServedModel, gpus: pd.Series) -> np.ndarray:
    value = model.measured_per_gpu
    if value is None:
        return np.full(len(gpus), np.nan)
    if isinstance(value, dict):
        lower = {k.lower(): v for k, v in value.items()}
        return np.array([lower.get(g.lower(), np.nan) for g in gpus], dtype=float)
    return np.full(len(gpus), float(value))


def _reason(fits: bool) -> str:
    if not fits:
        return "weights and the KV cache of one sequence do not fit one scale-up domain"
    return "no replica meets the latency SLO"
