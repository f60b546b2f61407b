"""The ZeRO-3 (and ZeRO++) performance and memory model of docs/model.md sections 1-4.

Pure, vectorised functions: every argument may be a scalar, a numpy array or a pandas Series, and
broadcasts. `evaluate(frame)` applies the whole model to a table of configurations (one row each), which
is how `predict`, `bandwidth` and the planner's candidate table all use it.

Units are in the names: *_s seconds, *_bytes bytes, *_gbps Gbit/s, *_gib GiB, *_tflops 1e12 FLOP/s.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from planner import assumptions as A
from planner.calibration import Calibration
from planner.units import GIB

# ------------------------------------------------------------------ traffic (docs/model.md section 1)


def bytes_per_param_per_step(qwz=False, hpz=False, qgz=False, grad_bytes=2.0):
    """Cross-node bytes per parameter per micro-step, before the ring factor.

    Forward all-gather of bf16 weights (2 B/param), backward all-gather (2), gradient reduce-scatter
    (grad_bytes: 2 for bf16/fp16, 4 for fp32). ZeRO++ (Wang et al. 2023):
      qwZ: weights all-gathered as int8 with block scales, 1 B/param, in every cross-node all-gather;
      hpZ: a secondary weight copy inside each node serves the backward all-gather, 0 B across nodes;
      qgZ: gradients reduced as int4 through a hierarchical all-to-all, 0.5 B/param across nodes.
    All three: 1 + 0 + 0.5 = 1.5 B/param, the paper's "4x less" than 6.
    (Departure from the project brief, which applies qwZ to the forward gather only: DeepSpeed quantises every
    weight all-gather when zero_quantized_weights is on; with hpZ the backward one stays in the node.)
    """
    weight = np.where(qwz, 1.0, 2.0)
    forward = weight
    backward = np.where(hpz, 0.0, weight)
    gradient = np.where(qgz, 0.5, grad_bytes)
    return forward + backward + gradient


def ring_factor(gpus, nodes, hierarchical=False):
    """Share of each collective's S bytes that crosses a node's NICs: (n-1)/n for NCCL's flat ring over
    n GPUs; (N-1)/N for a hierarchical (intra-node first) algorithm, the lower bound. 0 on one node."""
    gpus, nodes = np.asarray(gpus, float), np.asarray(nodes, float)
    flat = (gpus - 1) / gpus
    hier = (nodes - 1) / np.maximum(nodes, 1)
    return np.where(nodes <= 1, 0.0, np.where(hierarchical, hier, flat))


def cross_node_bytes_per_node(
    params, gpus, gpus_per_node, qwz=False, hpz=False, qgz=False, grad_bytes=2.0, hierarchical=False
):
    """V_node = P * (b_fwd + b_bwd + b_grad) * ring factor: bytes each node sends (and receives) per
    micro-step. Note it is about the whole model per collective, NOT 6P/N: in a ring every node forwards
    (n-1)/n of each collective's bytes."""
    nodes = np.asarray(gpus) // np.asarray(gpus_per_node)
    per_param = bytes_per_param_per_step(qwz, hpz, qgz, grad_bytes)
    return np.asarray(params, float) * per_param * ring_factor(gpus, nodes, hierarchical)


def intra_node_bytes_per_gpu(params, gpus, qwz=False, hpz=False, qgz=False, grad_bytes=2.0):
    """Bytes each GPU moves over NVLink per micro-step: in a flat ring every GPU forwards (n-1)/n of each
    collective, at the collective's dtype. hpZ's backward gather stays on NVLink at bf16 (2 B/param);
    qgZ quantises its intra-node stage too (int4, 0.5 B/param)."""
    gpus = np.asarray(gpus, float)
    weight = np.where(qwz, 1.0, 2.0)
    per_param = weight + np.where(hpz, 2.0, weight) + np.where(qgz, 0.5, grad_bytes)
    return np.asarray(params, float) * per_param * (gpus - 1) / gpus


# ------------------------------------------------------------------ time (docs/model.md section 2)


def estimated_layers(params):
    """Layers of a GPT-shaped model of P params with hidden = 128 * layers (P ~ 12 L h^2)."""
    ratio = A.ASPECT_RATIO.value
    return np.maximum(1, np.round((np.asarray(params, float) / (12 * ratio**2)) ** (1 / 3)))


def collectives_per_step(layers):
    return A.COLLECTIVES_PER_LAYER.value * np.asarray(layers, float)


def ring_latency_s(gpus, nodes, net_step_us, passes=1):
    """NCCL ring/simple latency of one collective (the only latency formula in planner): a base plus, per
    pass over the ring, (n-N) NVLink steps and (N-1) network steps. All-gather and reduce-scatter make one
    pass; all-reduce (reduce-scatter then all-gather) two. One GPU runs no collectives."""
    gpus, nodes = np.asarray(gpus, float), np.asarray(nodes, float)
    steps_us = A.NCCL_INTRA_STEP_US.value * (gpus - nodes) + net_step_us * (nodes - 1)
    us = A.NCCL_BASE_LAT_US.value + passes * steps_us
    return np.where(gpus > 1, us * 1e-6, 0.0)


def collective_latency_s(gpus, nodes, net_step_us):
    """One all-gather or reduce-scatter (a single pass of the ring)."""
    return ring_latency_s(gpus, nodes, net_step_us)


def model_flops_per_gpu(params, tokens, layers=np.nan, hidden=np.nan, seq_len=np.nan):
    """F_model = 6 P T, plus 12 L h s T for attention scores when the architecture is known."""
    dense = 6.0 * np.asarray(params, float) * np.asarray(tokens, float)
    attention = 12.0 * np.asarray(layers, float) * hidden * seq_len * tokens
    return dense + np.nan_to_num(attention)


def hardware_flops_per_gpu(model_flops, checkpointing=True):
    """Activation checkpointing re-runs the forward pass: 8/6 of the model FLOPs."""
    return np.asarray(model_flops, float) * np.where(checkpointing, 8.0 / 6.0, 1.0)


def step_time_s(t_compute_s, t_comm_s, overlap):
    """t_step = t_comp + t_comm - overlap * min(t_comp, t_comm)."""
    return t_compute_s + t_comm_s - overlap * np.minimum(t_compute_s, t_comm_s)


# ------------------------------------------------------------------ memory (docs/model.md section 4)


def memory_per_gpu_gib(
    params,
    gpus,
    gpus_per_node,
    micro_batch,
    seq_len,
    layers,
    hidden,
    heads,
    vocab,
    checkpointing=True,
    flash_attention=True,
    hpz=False,
):
    """Peak bytes per GPU, in GiB: sharded model states + activations + live gathered weights + logits +
    framework reserve. Compare with usable HBM (usable_hbm_fraction * HBM)."""
    params, gpus = np.asarray(params, float), np.asarray(gpus, float)
    b, s, h, L = micro_batch, seq_len, np.asarray(hidden, float), np.asarray(layers, float)
    states = A.BYTES_MODEL_STATES.value * params / gpus
    states = states + np.where(hpz, 2.0 * params / gpus_per_node, 0.0)  # hpZ secondary bf16 copy
    layer_work = A.ACT_WORKING_BYTES.value * b * s * h
    scores = np.where(flash_attention, 0.0, A.ACT_ATTN_SCORES.value * heads * s**2 * b)
    activations = np.where(checkpointing, 2.0 * b * s * h * L + layer_work + scores, L * (layer_work + scores))
    live = 2.0 * np.minimum(2.0 * params / L, A.MAX_LIVE_PARAMS.value)
    logits = np.nan_to_num(A.LOGIT_BYTES.value * b * s * np.asarray(vocab, float))
    return (states + activations + live + logits) / GIB + A.FRAMEWORK_RESERVE_GIB.value


def usable_hbm_gib(hbm_gib):
    return A.USABLE_HBM_FRACTION.value * np.asarray(hbm_gib, float)


# ------------------------------------------------------------------ the whole model over a table

REQUIRED = (
    "params",
    "gpus",
    "gpus_per_node",
    "micro_batch",
    "seq_len",
    "node_gbps",
    "fabric",
    "gpu",
    "peak_tflops",
    "hbm_gib",
)
OPTIONAL = {
    "layers": np.nan,
    "hidden": np.nan,
    "heads": np.nan,
    "vocab": np.nan,
    "checkpointing": True,
    "flash_attention": True,
    "qwz": False,
    "hpz": False,
    "qgz": False,
    "grad_bytes": 2.0,
    "hierarchical": False,
    "intra_node_gb_per_s": np.nan,
}


def evaluate(frame: pd.DataFrame, calibration: Calibration | None = None) -> pd.DataFrame:
    """Add the model's figures to a table with one configuration per row (columns REQUIRED, and any of
    OPTIONAL). Returns a new frame; the input is not modified."""
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise ValueError(f"evaluate() needs columns {missing}")
    columns = {c: frame[c].to_numpy() for c in frame.columns}
    figures = evaluate_arrays(columns, calibration, len(frame))
    out = frame.copy()
    for name, values in figures.items():
        out[name] = values
    return out


def evaluate_arrays(columns: dict, calibration: Calibration | None = None, rows: int | None = None) -> dict:
    """The model over arrays (one entry per configuration; scalars broadcast): the fast path that the
    candidate bounds bisect on. Returns the input columns (architecture filled in) and every figure."""
    cal = calibration or Calibration.default()
    rows = rows if rows is not None else max(np.size(v) for v in columns.values())
    c = {k: _broadcast(columns.get(k, OPTIONAL.get(k)), rows) for k in (*REQUIRED, *OPTIONAL)}
    layers_known = ~np.isnan(c["layers"].astype(float))
    _fill_architecture(c)

    nodes = c["gpus"] // c["gpus_per_node"]
    tokens = c["micro_batch"] * c["seq_len"]
    checkpointing = c["checkpointing"].astype(bool)
    f_model = model_flops_per_gpu(
        c["params"], tokens, np.where(layers_known, c["layers"], np.nan), c["hidden"], c["seq_len"]
    )
    f_hw = hardware_flops_per_gpu(f_model, checkpointing)
    eta_comp = _per_value(c["gpu"], cal.eta_comp_for)
    eta_net = _per_value(c["fabric"], cal.eta_net_for)
    net_step_us = _per_value(c["fabric"], net_step_latency_us)

    quant = {k: c[k].astype(bool) for k in ("qwz", "hpz", "qgz")}
    grad_bytes = c["grad_bytes"].astype(float)
    v_node = cross_node_bytes_per_node(
        c["params"],
        c["gpus"],
        c["gpus_per_node"],
        **quant,
        grad_bytes=grad_bytes,
        hierarchical=c["hierarchical"].astype(bool),
    )
    v_gpu = intra_node_bytes_per_gpu(c["params"], c["gpus"], **quant, grad_bytes=grad_bytes)
    node_bytes_per_s = c["node_gbps"].astype(float) * 1e9 / 8
    with np.errstate(divide="ignore", invalid="ignore"):
        t_net = np.where(nodes > 1, v_node / (node_bytes_per_s * eta_net), 0.0)
        nvlink = c["intra_node_gb_per_s"].astype(float) * 1e9 * A.ETA_NVLINK.value
        t_nvlink = np.nan_to_num(v_gpu / nvlink)  # unknown NVLink bandwidth: treated as never binding
    t_bandwidth = np.maximum(t_net, t_nvlink)
    t_latency = collectives_per_step(c["layers"]) * ring_latency_s(c["gpus"], nodes, net_step_us)
    peak = c["peak_tflops"].astype(float) * 1e12
    t_comp = f_hw / (peak * eta_comp)
    t_comm = t_bandwidth + t_latency
    t_step = step_time_s(t_comp, t_comm, cal.overlap)
    memory = memory_per_gpu_gib(
        c["params"],
        c["gpus"],
        c["gpus_per_node"],
        c["micro_batch"],
        c["seq_len"],
        c["layers"],
        c["hidden"],
        c["heads"],
        c["vocab"],
        checkpointing,
        c["flash_attention"].astype(bool),
        quant["hpz"],
    )
    usable = usable_hbm_gib(c["hbm_gib"])
    figures = {
        "nodes": nodes,
        "tokens_per_gpu": tokens,
        "model_flops_per_gpu": f_model,
        "hw_flops_per_gpu": f_hw,
        "eta_comp": eta_comp,
        "eta_net": eta_net,
        "overlap": np.full(rows, cal.overlap),
        "bytes_per_node_per_step": v_node,
        "bytes_per_gpu_nvlink_per_step": v_gpu,
        "t_compute_s": t_comp,
        "t_comm_network_s": t_net,
        "t_comm_nvlink_s": t_nvlink,
        "t_comm_bandwidth_s": t_bandwidth,
        "t_comm_latency_s": t_latency,
        "t_comm_s": t_comm,
        "t_step_s": t_step,
        "t_comm_exposed_s": t_step - t_comp,
        "achieved_tflops_per_gpu": f_hw / t_step / 1e12,
        "mfu": f_model / t_step / peak,
        "tokens_per_s": tokens * c["gpus"] / t_step,
        "memory_per_gpu_gib": memory,
        "usable_hbm_gib": usable,
        "fits_memory": memory <= usable,
    }
    figures["binding"] = _binding(figures)
    return {"layers": c["layers"], "hidden": c["hidden"], "heads": c["heads"], **figures}


def _broadcast(value, rows: int) -> np.ndarray:
    array = np.asarray(value)
    return (
        np.full(rows, array.item(), dtype=array.dtype if array.dtype != object else object)
        if array.ndim == 0
        else array
    )


def _per_value(keys: np.ndarray, lookup) -> np.ndarray:
    """lookup(key) for each entry, computed once per distinct key (gpu names, fabrics)."""
    unique, inverse = np.unique(keys.astype(str), return_inverse=True)
    return np.array([lookup(k) for k in unique], dtype=float)[inverse]


def net_step_latency_us(fabric: str) -> float:
    """NCCL's per-hop network latency of a ring step on this fabric (0 for unknown: no network)."""
    return A.NCCL_NET_STEP_US[fabric].value if fabric in A.NCCL_NET_STEP_US else 0.0


def _fill_architecture(c: dict) -> None:
    """Unknown layers/hidden/heads are estimated from P (GPT-3 proportions) for latency and memory."""
    layers = c["layers"].astype(float)
    c["layers"] = np.where(np.isnan(layers), estimated_layers(c["params"]), layers)
    hidden = c["hidden"].astype(float)
    c["hidden"] = np.where(np.isnan(hidden), c["layers"] * A.ASPECT_RATIO.value, hidden)
    heads = c["heads"].astype(float)
    c["heads"] = np.where(np.isnan(heads), np.maximum(1, np.round(c["hidden"] / 128)), heads)
    c["vocab"] = c["vocab"].astype(float)


def _binding(f: dict) -> np.ndarray:
    """What limits the step: memory (does not fit), compute, network bandwidth, NVLink, or latency."""
    comm = np.where(
        f["t_comm_latency_s"] > f["t_comm_bandwidth_s"],
        "latency",
        np.where(f["t_comm_nvlink_s"] > f["t_comm_network_s"], "nvlink", "bandwidth"),
    )
    binding = np.where(f["t_compute_s"] >= f["t_comm_s"], "compute", comm)
    return np.where(f["fits_memory"], binding, "memory").astype(object)


# ------------------------------------------------------------------ inverse: bandwidth for a target


def node_gbps_for_target(row: pd.Series, target_tflops: float) -> tuple[float, str]:
    """Smallest node bandwidth (Gbps) at which the configuration in `row` (already evaluated) reaches
    target_tflops; (inf, reason) when no bandwidth can. Closed form: t_step grows monotonically with
    t_comm, so invert step_time_s piecewise for the largest allowed t_comm, subtract latency and NVLink."""
    t_max = row["hw_flops_per_gpu"] / (target_tflops * 1e12)
    t_comp, overlap = row["t_compute_s"], row["overlap"]
    if t_max < t_comp:
        return np.inf, "compute"
    if row["nodes"] <= 1:  # no network: the step is what it is
        if row["achieved_tflops_per_gpu"] >= target_tflops * (1 - 1e-12):
            return 0.0, "single node: no inter-node traffic"
        return np.inf, "nvlink" if row["t_comm_nvlink_s"] > row["t_comm_latency_s"] else "latency"
    # t_comm <= t_comp branch: t_step = t_comp + (1-o) t_comm; else t_step = t_comm + (1-o) t_comp
    allowed = (t_max - t_comp) / (1 - overlap) if overlap < 1 else np.inf
    if allowed > t_comp:
        allowed = t_max - (1 - overlap) * t_comp
    allowed_bandwidth_s = allowed - row["t_comm_latency_s"]
    if allowed_bandwidth_s <= 0:
        return np.inf, "latency"
    if row["t_comm_nvlink_s"] > allowed_bandwidth_s:
        return np.inf, "nvlink"
    bytes_per_s = row["bytes_per_node_per_step"] / (row["eta_net"] * allowed_bandwidth_s)
    return bytes_per_s * 8 / 1e9, ""


def ceiling_tflops(row: pd.Series) -> float:
    """Achieved TFLOPs/GPU with unlimited node bandwidth (latency and NVLink still count)."""
    t_comm = row["t_comm_latency_s"] + row["t_comm_nvlink_s"]
    return row["hw_flops_per_gpu"] / step_time_s(row["t_compute_s"], t_comm, row["overlap"]) / 1e12
