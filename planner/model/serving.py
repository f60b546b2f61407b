"""Serving capacity of `planner fleet`: decode tokens per second of a model on a GPU, and how many GPUs a
replica needs. Deliberately simple and stated (docs/fleet.md section 4):

  * a replica is r GPUs holding the weights (tensor parallel): r divides the node's GPU count, or is a
    whole number of nodes where the machines are networked;
  * memory: weights W = params x weight_bytes, plus the KV cache of B sequences at the full context C,
    B x C x kv_bytes_per_token, within r x usable HBM (usable_hbm_fraction x HBM - framework reserve);
  * one decode step generates B tokens; it reads the weights once and, on average, half of each sequence's
    context from HBM, at decode_hbm_efficiency x HBM bandwidth; it cannot beat 2 x params x B FLOPs at
    decode_compute_efficiency x peak. Step time = the larger of the two;
  * the time per output token is the step time (the latency SLO caps it); prefill, speculative decoding and
    tensor-parallel all-reduce time are not modelled.
Each (model, GPU) takes the batch (a power of two up to `batch`) and replica size with the most tokens/s per
GPU that fit and meet the SLO. A measured tokens/s per GPU, when given, replaces the estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from planner.assumptions import model as A
from planner.base.units import GIB
from planner.catalog.load import Catalog


@dataclass(frozen=True)
class ServedModel:
    """What a service decodes: its size and the shape of its KV cache."""

    params: float
    weight_bytes: float
    layers: float
    kv_heads: float
    head_dim: float
    context_tokens: float
    max_batch: int
    max_ms_per_token: float | None = None
    measured_per_gpu: float | dict[str, float] | None = None

    @property
    def weights_bytes(self) -> float:
        return self.params * self.weight_bytes

    @property
    def kv_bytes_per_token(self) -> float:
        """K and V of every layer for one token of context."""
        return 2 * self.layers * self.kv_heads * self.head_dim * A.KV_CACHE_BYTES.value


def served_model(catalog: Catalog, service) -> ServedModel:
    """The model of an InferenceService: architecture from models.csv, or GPT-3 proportions from params
    (hidden = 128 x layers, multi-head attention: the largest KV cache, so capacity errs low)."""
    if service.model is not None:
        row = catalog.model(service.model)
        params, layers, heads = row.params, row.layers, row.heads
        kv_heads, hidden, seq_len = row.kv_heads or row.heads, row.hidden, row.seq_len
    else:
        ratio = A.ASPECT_RATIO.value
        params = service.params
        layers = max(1.0, round((params / (12 * ratio**2)) ** (1 / 3)))
        hidden = ratio * layers
        heads = kv_heads = max(1.0, round(hidden / 128))
        seq_len = 4096
    return ServedModel(
        params=params,
        weight_bytes=service.weight_bytes,
        layers=layers,
        kv_heads=kv_heads,
        head_dim=hidden / heads,
        context_tokens=service.context_tokens or seq_len,
        max_batch=service.batch,
        max_ms_per_token=service.max_ms_per_token,
        measured_per_gpu=service.tokens_per_s_per_gpu,
    )


def _replica_sizes(gpus_per_node: int, multi_node: bool) -> list[int]:
    sizes = [r for r in range(1, gpus_per_node + 1) if gpus_per_node % r == 0]
    return sizes + ([gpus_per_node * k for k in (2, 4, 8)] if multi_node else [])


def _batches(max_batch: int) -> list[int]:
    out = [1 << i for i in range(max_batch.bit_length()) if 1 << i <= max_batch]
    return sorted(set(out + [max_batch]))


def capacity(model: ServedModel, machines: pd.DataFrame) -> pd.DataFrame:
    """Per machine row (columns gpu, hbm_gib, hbm_gb_per_s, peak_tflops, gpus_per_node, multi_node): the best
    replica_gpus, batch, ms_per_token and tokens_per_s per replica (0 where the model cannot be served, with
    the reason)."""
    grid = []
    for i, m in enumerate(machines.itertuples(index=False)):
        for r in _replica_sizes(int(m.gpus_per_node), bool(m.multi_node)):
            grid += [(i, r, b) for b in _batches(model.max_batch)]
    g = pd.DataFrame(grid, columns=["row", "replica_gpus", "batch"])
    at = machines.reset_index(drop=True).iloc[g["row"]].reset_index(drop=True)
    r, b = g["replica_gpus"].to_numpy(float), g["batch"].to_numpy(float)
    usable = (A.USABLE_HBM_FRACTION.value * at["hbm_gib"].to_numpy(float) - A.FRAMEWORK_RESERVE_GIB.value) * GIB
    kv = model.kv_bytes_per_token
    fits = model.weights_bytes + b * model.context_tokens * kv <= r * usable
    read_bytes = model.weights_bytes + b * model.context_tokens / 2 * kv
    memory_s = read_bytes / (r * at["hbm_gb_per_s"].to_numpy(float) * 1e9 * A.DECODE_HBM_EFFICIENCY.value)
    flops_per_s = at["peak_tflops"].to_numpy(float) * 1e12 * A.DECODE_COMPUTE_EFFICIENCY.value
    compute_s = 2 * model.params * b / (r * flops_per_s)
    step_s = np.maximum(memory_s, compute_s)
    fast = step_s * 1e3 <= model.max_ms_per_token if model.max_ms_per_token else np.ones(len(g), bool)
    g["ms_per_token"] = step_s * 1e3
    g["tokens_per_s"] = b / step_s
    measured = _measured(model, at["gpu"])
    g["tokens_per_s"] = np.where(np.isnan(measured), g["tokens_per_s"], measured * r)
    g["ok"] = fits & (fast | ~np.isnan(measured))
    g["per_gpu"] = np.where(g["ok"], g["tokens_per_s"] / r, -1.0)
    best = g.sort_values(["row", "per_gpu", "replica_gpus", "batch"], ascending=[True, False, True, True])
    best = best.drop_duplicates("row").set_index("row").sort_index()
    out = machines.reset_index(drop=True).copy()
    for column in ("replica_gpus", "batch", "ms_per_token", "tokens_per_s"):
        out[column] = np.where(best["ok"], best[column], 0)
    out["reason"] = [_reason(g[g["row"] == i], fits, fast) if not ok else "" for i, ok in enumerate(best["ok"])]
    return out


def _measured(model: ServedModel, gpus: pd.Series) -> np.ndarray:
    value = model.measured_per_gpu
    if value is None:
        return np.full(len(gpus), np.nan)
    if isinstance(value, dict):
        lower = {k.lower(): v for k, v in value.items()}
        return np.array([lower.get(g.lower(), np.nan) for g in gpus], dtype=float)
    return np.full(len(gpus), float(value))


def _reason(rows: pd.DataFrame, fits: np.ndarray, fast: np.ndarray) -> str:
    at = rows.index.to_numpy()
    if not fits[at].any():
        return "weights and KV cache do not fit in HBM at any replica size"
    return "no replica meets the latency SLO"
