"""The throughput and memory model of sharded data parallelism (DeepSpeed ZeRO-3 / ZeRO++, PyTorch FSDP), as
derived in docs/model.md: traffic (section 1), time (section 2), compute (section 3), memory (section 4).

Pure, vectorised functions: every argument may be a scalar or a numpy array, and broadcasts. `evaluate(frame)`
applies the whole model to a table of configurations (one row each); `evaluate_arrays` is the same on a dict
of arrays (the fast path the planner's node bounds bisect on).

Units are in the names: *_s seconds, *_bytes bytes, *_gbps Gbit/s, *_gib GiB, *_tflops 1e12 FLOP/s.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from planner.assumptions import model as A
from planner.base.units import GIB
from planner.model import network
from planner.model.calibration import Calibration

# ------------------------------------------------------------------ traffic (docs/model.md section 1)


def bytes_per_param_per_step(qwz=False, hpz=False, qgz=False, grad_bytes=2.0):
    """Cross-node bytes per parameter per micro-step, before the ring factor.

    Forward all-gather of bf16 weights (2 B/param), backward all-gather (2), gradient reduce-scatter
    (grad_bytes: 2 for bf16/fp16, 4 for fp32). ZeRO++ (Wang et al. 2023):
      qwZ: weights all-gathered as int8 with block scales, 1 B/param, in every cross-node all-gather;
      hpZ: a secondary weight copy inside each node serves the backward all-gather, 0 B across nodes;
      qgZ: gradients reduced as int4 through a hierarchical all-to-all, 0.5 B/param across nodes.
    All three: 1 + 0 + 0.5 = 1.5 B/param, the paper's "4x less" than 6.
    """
    weight = np.where(qwz, 1.0, 2.0)
    forward = weight
    backward = np.where(hpz, 0.0, weight)
    gradient = np.where(qgz, 0.5, grad_bytes)
    return forward + backward + gradient


def cross_domain_bytes(
    params, gpus, scale_up_gpus, qwz=False, hpz=False, qgz=False, grad_bytes=2.0, hierarchical=False
):
    """V_domain = P * (b_fwd + b_bwd + b_grad) * ring factor: bytes each scale-up domain sends (and receives)
    over its NICs per micro-step. Note it is about the whole model per collective, NOT 6P/N: in a ring every
    domain forwards (n-1)/n of each collective's bytes."""
    domains = np.asarray(gpus) // np.asarray(scale_up_gpus)
    per_param = bytes_per_param_per_step(qwz, hpz, qgz, grad_bytes)
    return np.asarray(params, float) * per_param * network.ring_factor(gpus, domains, hierarchical)


def scale_up_bytes_per_gpu(params, gpus, qwz=False, hpz=False, qgz=False, grad_bytes=2.0):
    """Bytes each GPU moves over the scale-up links (NVLink) per micro-step: in a flat ring every GPU forwards
    (n-1)/n of each collective, at the collective's dtype. hpZ's backward gather stays inside the domain at
    bf16 (2 B/param); qgZ quantises its intra-domain stage too (int4, 0.5 B/param)."""
    gpus = np.asarray(gpus, float)
    weight = np.where(qwz, 1.0, 2.0)
    per_param = weight + np.where(hpz, 2.0, weight) + np.where(qgz, 0.5, grad_bytes)
    return np.asarray(params, float) * per_param * (gpus - 1) / gpus


def collectives_per_step(framework, layers, params):
    """Collective calls per micro-step. FSDP: one all-gather forward, one backward and one reduce-scatter
    per wrapped block, plus the root group (embeddings, head). DeepSpeed ZeRO-3: an all-gather per
    nn.Linear in each pass, and the gradients reduce-scattered in buckets of reduce_bucket_size."""
    layers, params = np.asarray(layers, float), np.asarray(params, float)
    fsdp = A.FSDP_COLLECTIVES_PER_LAYER.value * (layers + 1)
    deepspeed = 2 * A.DEEPSPEED_GATHERS_PER_LAYER.value * layers + np.ceil(params / A.DEEPSPEED_REDUCE_BUCKET.value)
    return np.where(np.asarray(framework) == "fsdp", fsdp, deepspeed)


def gradient_tensors(layers, vectors_only=False):
    """Parameter tensors of the model, each one gradient: a block's (assumptions.TENSORS_PER_LAYER) plus the
    embedding, the final norm and the head; with vectors_only, the 1-D ones (norms, biases) alone."""
    layers = np.asarray(layers, float)
    every = layers * A.TENSORS_PER_LAYER.value + 3
    return np.where(vectors_only, layers * A.VECTOR_TENSORS_PER_LAYER.value + 1, every)


# ------------------------------------------------------------------ time (docs/model.md section 2)


def estimated_layers(params):
    """Layers of a GPT-shaped model of P params with hidden = 128 * layers (P ~ 12 L h^2)."""
    ratio = A.ASPECT_RATIO.value
    return np.maximum(1, np.round((np.asarray(params, float) / (12 * ratio**2)) ** (1 / 3)))


def step_time_s(t_compute_s, t_comm_s, overlap):
    """max(t_comp, t_comm) + (1 - overlap) * min(t_comp, t_comm): overlap is the share of the shorter phase
    hidden behind the longer (0: none, 1: perfect prefetching)."""
    return np.maximum(t_compute_s, t_comm_s) + (1 - overlap) * np.minimum(t_compute_s, t_comm_s)


# ------------------------------------------------------------------ compute (docs/model.md section 3)


def model_flops_per_gpu(params, tokens, layers, hidden, seq_len):
    """F_model = (6 P + 12 L h s) T: dense matmuls and attention scores, forward and backward."""
    per_token = 6.0 * np.asarray(params, float) + 12.0 * np.asarray(layers, float) * hidden * seq_len
    return per_token * np.asarray(tokens, float)


def attention_flops_per_gpu(tokens, layers, hidden, seq_len, checkpointing):
    """The attention-score share of the hardware FLOPs, as counted (12 L h s T, plus 4 L h s T re-run by full or
    selective checkpointing): flash-attention kernels run it at their own rate (calibration.attention_cost)."""
    per_token = 12.0 * np.asarray(layers, float) * hidden * seq_len
    recompute = np.where(
        np.isin(checkpointing, ["full", "selective"]), 4.0 * np.asarray(layers, float) * hidden * seq_len, 0
    )
    return (per_token + recompute) * np.asarray(tokens, float)


def recompute_flops_per_gpu(params, tokens, layers, hidden, seq_len, checkpointing):
    """FLOPs re-run by activation checkpointing: full re-runs the forward, (2 P + 4 L h s) T; selective re-runs
    only the attention core (Korthikanti et al. 2022), 4 L h s T; none, nothing."""
    attention = 4.0 * np.asarray(layers, float) * hidden * seq_len * np.asarray(tokens, float)
    forward = 2.0 * np.asarray(params, float) * np.asarray(tokens, float) + attention
    return np.select([checkpointing == "full", checkpointing == "selective"], [forward, attention], 0.0)


def hardware_flops_per_gpu(model_flops, checkpointing=True):
    """Activation checkpointing re-runs the forward pass: 8/6 of the model FLOPs (without the attention
    detail of recompute_flops_per_gpu; kept for reports that only know F_model)."""
    full = _checkpointing(checkpointing) == "full"
    return np.asarray(model_flops, float) * np.where(full, 8.0 / 6.0, 1.0)


def compute_efficiency(eta_ceiling, hidden, peak_flops, hbm_bytes_per_s, width_k):
    """Sustained fraction of peak: the GPU's ceiling times h / (h + h_half). The memory-bound share of a layer
    (norms, activations, softmax: bytes ~ tokens x h) against its GEMMs (FLOPs ~ tokens x h^2) falls as 1/h,
    scaled by the GPU's balance peak/bandwidth, so h_half = width_k x peak FLOP/s / HBM bytes/s (a roofline)."""
    hidden = np.asarray(hidden, float)
    hidden_half = width_k * np.asarray(peak_flops, float) / np.asarray(hbm_bytes_per_s, float)
    return eta_ceiling * hidden / (hidden + np.nan_to_num(hidden_half))


def vocabulary_s(tokens, vocab, hbm_gb_per_s):
    """The loss over the vocabulary per micro-step: fp32 logits written, soft-maxed, read and their gradient
    written and read again, memory-bound (LOGITS_PASS_BYTES per token per vocabulary entry). Small models
    spend a visible share of the step here; an unknown vocabulary counts nothing."""
    bytes_ = np.asarray(tokens, float) * np.nan_to_num(np.asarray(vocab, float)) * A.LOGITS_PASS_BYTES.value
    return np.nan_to_num(bytes_ / (np.asarray(hbm_gb_per_s, float) * 1e9))


def zeropp_kernel_s(params, qwz, qgz, hbm_gb_per_s):
    """Quantisation kernels of ZeRO++ per micro-step: memory-bound, over the whole model on every GPU."""
    per_param = np.where(qwz, A.ZEROPP_QWZ_BYTES.value, 0.0) + np.where(qgz, A.ZEROPP_QGZ_BYTES.value, 0.0)
    rate = np.asarray(hbm_gb_per_s, float) * 1e9 * A.KERNEL_HBM_EFFICIENCY.value
    return np.nan_to_num(np.asarray(params, float) * per_param / rate)


def offload_s(params, gpus, gpus_per_host, offload, grad_accum, host_gbps, host_dram_gb_per_s, adam_bytes=None):
    """Optimizer offload per micro-step: fp32 gradients to the host every micro-step; per optimizer step
    (shared by grad_accum micro-steps) the updated partitions back, CPU-Adam over the host's share at the
    host's DRAM bandwidth (memory-bound: adam_bytes per parameter), and for NVMe the optimizer states read
    and written on the host's drives."""
    params, gpus = np.asarray(params, float), np.asarray(gpus, float)
    shard = params / gpus
    host = np.asarray(host_gbps, float) * 1e9 / 8 * A.PCIE_HOST_EFFICIENCY.value
    host_params = shard * np.asarray(gpus_per_host, float)
    per_micro = A.OFFLOAD_GRAD_BYTES.value * shard / host
    adam_bytes = adam_bytes or A.CPU_ADAM_BYTES_PER_PARAM.value
    adam_s = host_params * adam_bytes / (np.asarray(host_dram_gb_per_s, float) * 1e9)
    per_step = A.OFFLOAD_PARAM_BYTES.value * shard / host + adam_s
    nvme = np.where(offload == "nvme", host_params * A.NVME_OPTIMIZER_BYTES.value / (A.NVME_GB_PER_S.value * 1e9), 0.0)
    total = per_micro + (per_step + nvme) / np.maximum(np.asarray(grad_accum, float), 1)
    return np.where(offload == "none", 0.0, total)


# ------------------------------------------------------------------ memory (docs/model.md section 4)


def memory_per_gpu_gib(
    params,
    gpus,
    scale_up_gpus,
    micro_batch,
    seq_len,
    layers,
    hidden,
    heads,
    vocab,
    checkpointing="full",
    flash_attention=True,
    hpz=False,
    offload="none",
):
    """Peak bytes per GPU, in GiB: sharded model states (less with the optimizer offloaded) + the hpZ
    secondary copy + activations (by checkpointing mode) + live gathered weights + logits + framework
    reserve. Compare with usable HBM (usable_hbm_fraction * HBM)."""
    params, gpus = np.asarray(params, float), np.asarray(gpus, float)
    b, s, h, L = micro_batch, seq_len, np.asarray(hidden, float), np.asarray(layers, float)
    checkpointing = _checkpointing(checkpointing)
    per_param = np.where(np.asarray(offload) == "none", A.BYTES_MODEL_STATES.value, A.BYTES_STATES_OFFLOADED.value)
    states = per_param * params / gpus + np.where(hpz, 2.0 * params / scale_up_gpus, 0.0)  # hpZ: bf16 copy
    layer_work = A.ACT_WORKING_BYTES.value * b * s * h
    scores = np.where(flash_attention, 0.0, A.ACT_ATTN_SCORES.value * heads * s**2 * b)
    activations = np.select(
        [checkpointing == "full", checkpointing == "selective"],
        [2.0 * b * s * h * L + layer_work + scores, L * layer_work],  # selective recomputes the scores
        L * (layer_work + scores),
    )
    live = 2.0 * np.minimum(2.0 * params / L, A.MAX_LIVE_PARAMS.value)
    logits = np.nan_to_num(A.LOGIT_BYTES.value * b * s * np.asarray(vocab, float))
    return (states + activations + live + logits) / GIB + A.FRAMEWORK_RESERVE_GIB.value


def usable_hbm_gib(hbm_gib):
    return A.USABLE_HBM_FRACTION.value * np.asarray(hbm_gib, float)


# ------------------------------------------------------------------ the whole model over a table

# The table's columns: the training's (planner.model.workload.Training.perf_columns) and the cluster's, whose
# topology is read as tiers (planner.model.network.tiers): GPUs per scale-up domain and their scale-up
# bandwidth per GPU, scale-out Gbps per domain, GPUs per host (the host's PCIe and DRAM serve offload).
REQUIRED = (
    "params",
    "gpus",
    "scale_up_gpus",
    "micro_batch",
    "seq_len",
    "scale_out_gbps",
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
    "checkpointing": "full",
    "flash_attention": True,
    "qwz": False,
    "hpz": False,
    "qgz": False,
    "grad_bytes": 2.0,
    "hierarchical": False,
    "scale_up_gb_per_s": np.nan,
    "gpus_per_host": np.nan,
    "framework": "deepspeed",
    "offload": "none",
    "grad_accum": 1,
    "hbm_gb_per_s": np.nan,
    "host_gbps": np.nan,
    "host_dram_gb_per_s": np.nan,
}


def evaluate(
    frame: pd.DataFrame, calibration: Calibration | None = None, confidence: float | None = None
) -> pd.DataFrame:
    """Add the model's figures to a table with one configuration per row (columns REQUIRED, and any of
    OPTIONAL). Returns a new frame; the input is not modified."""
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise ValueError(f"evaluate() needs columns {missing}")
    columns = {c: frame[c].to_numpy() for c in frame.columns}
    figures = pd.DataFrame(evaluate_arrays(columns, calibration, len(frame), confidence), index=frame.index)
    # one block of new columns (inserting ~60 columns one at a time cost cloud and fleet tenths of a second)
    filled = [c for c in figures.columns if c in frame.columns]  # estimated architecture, defaults
    out = frame.copy()
    out[filled] = figures[filled]
    return pd.concat([out, figures.drop(columns=filled)], axis=1)


def evaluate_arrays(
    columns: dict, calibration: Calibration | None = None, rows: int | None = None, confidence: float | None = None
) -> dict:
    """The model over arrays (one entry per configuration; scalars broadcast). With a confidence (e.g. 0.9)
    the step time is that of the pessimistic outcome reached with that probability (calibration.uncertainty);
    tokens_per_s_point keeps the point prediction. Returns the input columns (architecture filled in) and
    every figure."""
    return combine(decompose(columns, rows), calibration or Calibration.default(), confidence)


def decompose(columns: dict, rows: int | None = None) -> dict:
    """Everything about the configurations that does not depend on the calibration: FLOPs, bytes, collective
    counts and their unscaled latency, kernel and offload times, memory. (Fitting evaluates this once and
    `combine` many times.)"""
    rows = rows if rows is not None else max(np.size(v) for v in columns.values())
    c = {k: _broadcast(columns.get(k, OPTIONAL.get(k)), rows) for k in (*REQUIRED, *OPTIONAL)}
    _fill_architecture(c)
    c["checkpointing"] = _checkpointing(c["checkpointing"])
    tiers = network.tiers(c)
    domains = tiers.scale_out.size
    tokens = c["micro_batch"] * c["seq_len"]
    f_model = model_flops_per_gpu(c["params"], tokens, c["layers"], c["hidden"], c["seq_len"])
    recompute = recompute_flops_per_gpu(c["params"], tokens, c["layers"], c["hidden"], c["seq_len"], c["checkpointing"])
    quant = {k: c[k].astype(bool) for k in ("qwz", "hpz", "qgz")}
    offload = c["offload"].astype(str)
    offload_args = (c["params"], c["gpus"], c["gpus_per_host"], offload, c["grad_accum"])
    memory = memory_per_gpu_gib(
        c["params"], c["gpus"], c["scale_up_gpus"], c["micro_batch"], c["seq_len"], c["layers"], c["hidden"],
        c["heads"], c["vocab"], c["checkpointing"], c["flash_attention"].astype(bool), quant["hpz"], offload,
    )  # fmt: skip
    return {
        "columns": c,
        "keys": {k: c[k].astype(str) for k in ("framework", "fabric", "gpu")},
        "domains": domains,
        "tokens_per_gpu": tokens,
        "model_flops_per_gpu": f_model,
        "hw_flops_per_gpu": f_model + recompute,
        "attention_flops_per_gpu": attention_flops_per_gpu(
            tokens, c["layers"], c["hidden"], c["seq_len"], c["checkpointing"]
        ),
        "t_kernel_s": zeropp_kernel_s(c["params"], quant["qwz"], quant["qgz"], c["hbm_gb_per_s"])
        + vocabulary_s(tokens, c["vocab"], c["hbm_gb_per_s"]),
        "t_offload_s": offload_s(*offload_args, c["host_gbps"], c["host_dram_gb_per_s"]),
        "t_cpu_adam_ref_s": offload_s(*offload_args, np.inf, c["host_dram_gb_per_s"]),  # CPU-Adam alone
        **_traffic(c, tiers, quant),
        "memory_per_gpu_gib": memory,
        "usable_hbm_gib": usable_hbm_gib(c["hbm_gib"]),
    }


def combine(parts: dict, cal: Calibration, confidence: float | None = None) -> dict:
    """The step time and every figure from the calibration-independent parts and a calibration."""
    c, keys = parts["columns"], parts["keys"]
    gpu, framework, fabric = keys["gpu"], keys["framework"], keys["fabric"]
    peak = c["peak_tflops"].astype(float) * 1e12
    hbm = c["hbm_gb_per_s"].astype(float) * 1e9
    ceiling = _per_value(gpu, cal.eta_comp_for) * _per_value(framework, cal.framework_efficiency_for)
    eta_comp = compute_efficiency(ceiling, c["hidden"], peak, hbm, cal.width_k)
    eta_net = _per_value(fabric, cal.eta_net_for)
    f_hw, f_model, tokens = parts["hw_flops_per_gpu"], parts["model_flops_per_gpu"], parts["tokens_per_gpu"]
    f_attention = parts["attention_flops_per_gpu"]
    t_comp = (f_hw - f_attention + cal.attention_cost * f_attention) / (peak * eta_comp) + parts["t_kernel_s"]
    with np.errstate(divide="ignore", invalid="ignore"):
        t_net = np.where(parts["domains"] > 1, parts["t_network_line_s"] / eta_net, 0.0)
    t_bandwidth = np.maximum(t_net, parts["t_comm_nvlink_s"])
    per_call = _per_value(framework, cal.collective_overhead_for)  # host-side cost of each gather or reduce
    per_rank = _per_value(framework, cal.rank_overhead_for)  # and per rank and gradient tensor
    t_rank_loop = parts["rank_tensors_per_step"] * per_rank
    t_host = parts["collectives_per_step"] * per_call + t_rank_loop
    t_latency = parts["t_latency_unscaled_s"] * cal.latency_scale + t_host
    t_comm = t_bandwidth + t_latency
    overlap = _per_value(framework, cal.overlap_for)
    overhead = _per_value(framework, cal.step_overhead_for)
    # offload = PCIe copies + CPU-Adam at the reference rate, rescaled to the calibration's CPU-Adam rate
    adam = parts["t_cpu_adam_ref_s"] * (cal.cpu_adam_bytes_per_param / A.CPU_ADAM_BYTES_PER_PARAM.value)
    t_offload = parts["t_offload_s"] - parts["t_cpu_adam_ref_s"] + adam
    t_point = step_time_s(t_comp, t_comm, overlap) + t_offload + overhead
    factor = _confidence_factor(cal, gpu, framework, fabric, confidence)
    low, high, range_group = _range(cal, gpu, framework, fabric)
    t_step = t_point / factor
    gpus = c["gpus"]
    figures = {
        "domains": parts["domains"],
        "tokens_per_gpu": tokens,
        "model_flops_per_gpu": f_model,
        "hw_flops_per_gpu": f_hw,
        "eta_comp": eta_comp,
        "eta_net": eta_net,
        "overlap": overlap,
        "bytes_per_domain_per_step": parts["bytes_per_domain_per_step"],
        "bytes_per_gpu_nvlink_per_step": parts["bytes_per_gpu_nvlink_per_step"],
        "collectives_per_step": parts["collectives_per_step"],
        "t_comm_network_s": t_net,
        "t_comm_nvlink_s": parts["t_comm_nvlink_s"],
        "t_comm_bandwidth_s": t_bandwidth,
        "t_comm_latency_s": t_latency,
        "t_comm_host_s": t_host,
        "t_comm_rank_loop_s": t_rank_loop,
        "t_comm_s": t_comm,
        "t_compute_s": t_comp,
        "t_offload_s": t_offload,
        "t_overhead_s": overhead,
        "t_step_s": t_step,
        "t_comm_exposed_s": np.maximum(0.0, t_point - t_offload - overhead - t_comp),
        "achieved_tflops_per_gpu": f_hw / t_step / 1e12,
        "mfu": f_model / t_step / peak,
        "tokens_per_s": tokens * gpus / t_step,
        "tokens_per_s_point": tokens * gpus / t_point,
        "tokens_per_s_p10": tokens * gpus / t_point * low,
        "tokens_per_s_p90": tokens * gpus / t_point * high,
        "range_group": range_group,
        "confidence_factor": factor,
        "memory_per_gpu_gib": parts["memory_per_gpu_gib"],
        "usable_hbm_gib": parts["usable_hbm_gib"],
        "fits_memory": parts["memory_per_gpu_gib"] <= parts["usable_hbm_gib"],
    }
    figures["binding"] = _binding(figures)
    filled = ("layers", "hidden", "heads", "checkpointing", "hbm_gb_per_s", "gpus_per_host", "host_gbps")
    filled += ("host_dram_gb_per_s",)
    return {**{k: c[k] for k in filled}, **figures}


def _traffic(c: dict, tiers: network.Tiers, quant: dict) -> dict:
    """Bytes over each tier (a domain's NICs, a GPU's scale-up links), their time at line rate, and the latency
    of every collective (NCCL's alpha, before the calibration's latency_scale)."""
    up, out = tiers.scale_up, tiers.scale_out
    grad_bytes = c["grad_bytes"].astype(float)
    v_domain = cross_domain_bytes(
        c["params"], c["gpus"], up.size, **quant, grad_bytes=grad_bytes, hierarchical=c["hierarchical"].astype(bool)
    )
    v_gpu = scale_up_bytes_per_gpu(c["params"], c["gpus"], **quant, grad_bytes=grad_bytes)
    t_line = network.transfer_s(v_domain, out.bytes_per_s)
    t_scale_up = network.transfer_s(v_gpu, up.bytes_per_s * A.ETA_NVLINK.value)  # unknown: never binding
    collectives = collectives_per_step(c["framework"].astype(str), c["layers"], c["params"])
    return {
        "bytes_per_domain_per_step": v_domain,
        "bytes_per_gpu_nvlink_per_step": v_gpu,
        "collectives_per_step": collectives,
        "t_network_line_s": t_line,
        "t_comm_nvlink_s": t_scale_up,
        "t_latency_unscaled_s": collectives * network.ring_latency_s(c["gpus"], out.size, out.step_latency_us),
        # DeepSpeed slices every gradient tensor once per rank before reducing it (multi-domain qgZ all-to-alls
        # its weight matrices and loops over the vectors only)
        "rank_tensors_per_step": gradient_tensors(c["layers"], quant["qgz"] & (out.size > 1))
        * np.where(c["gpus"] > 1, c["gpus"], 0),
    }


def _broadcast(value, rows: int) -> np.ndarray:
    array = np.asarray(value)
    if array.ndim:
        return array
    return np.full(rows, array.item(), dtype=array.dtype if array.dtype != object else object)


def _per_value(keys: np.ndarray, lookup) -> np.ndarray:
    """lookup(key) for each entry, computed once per distinct key (gpu names, fabrics, frameworks)."""
    codes, unique = pd.factorize(np.asarray(keys, dtype=object).ravel())
    return np.array([lookup(str(k)) for k in unique], dtype=float)[codes]


def _checkpointing(values) -> np.ndarray:
    """Checkpointing as "full" / "selective" / "none" (True and False from older tables mean full / none)."""
    array = np.asarray(values, dtype=object)
    mapped = np.where(array == True, "full", np.where(array == False, "none", array))  # noqa: E712
    return mapped.astype(str) if mapped.ndim else np.asarray(str(mapped))


def _groups(*columns) -> tuple[np.ndarray, list[tuple]]:
    """Each entry's group index and the distinct groups (tuples of the columns' values), by factorising each
    column and combining the codes (far cheaper than a MultiIndex)."""
    arrays = np.broadcast_arrays(*(np.atleast_1d(np.asarray(c, dtype=object)) for c in columns))
    codes, uniques = zip(*(pd.factorize(a) for a in arrays), strict=True)
    sizes = [max(len(u), 1) for u in uniques]
    keys, inverse = np.unique(np.ravel_multi_index(codes, sizes), return_inverse=True)
    indices = zip(*np.unravel_index(keys, sizes), strict=True)
    groups = [tuple(u[i] for u, i in zip(uniques, index, strict=True)) for index in indices]
    return inverse.reshape(-1), groups


def _per_group(gpu, framework, fabric, lookup) -> np.ndarray:
    """lookup(gpu, framework, fabric) per entry, computed once per distinct combination."""
    inverse, groups = _groups(gpu, framework, fabric)
    return np.array([lookup(*key) for key in groups], dtype=float)[inverse]


def _confidence_factor(cal: Calibration, gpu, framework, fabric, confidence) -> np.ndarray:
    if confidence is None:
        return np.ones(len(gpu))
    return _per_group(gpu, framework, fabric, lambda g, w, f: cal.pessimistic_factor(g, w, f, confidence))


def _range(cal: Calibration, gpu, framework, fabric) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Measured / predicted at p10 and p90 for each entry, and the validation group they come from
    (calibration.uncertainty: gpu|framework|fabric, gpu|framework, framework or all)."""
    inverse, groups = _groups(gpu, framework, fabric)
    ranges = [cal.range_factors(*key) for key in groups]
    factors = np.array([r[:2] for r in ranges], dtype=float).reshape(-1, 2)[inverse]
    return factors[:, 0], factors[:, 1], np.array([r[2] for r in ranges], dtype=object)[inverse]


def _fill_architecture(c: dict) -> None:
    """Unknown layers/hidden/heads are estimated from P (GPT-3 proportions: h = 128 L, P ~ 12 L h^2), so
    attention FLOPs, latency and memory are always counted; unknown HBM and host bandwidths come from the
    GPU (the column's default), an unknown host size is one scale-up domain."""
    layers = c["layers"].astype(float)
    c["layers"] = np.where(np.isnan(layers), estimated_layers(c["params"]), layers)
    hidden = c["hidden"].astype(float)
    c["hidden"] = np.where(np.isnan(hidden), c["layers"] * A.ASPECT_RATIO.value, hidden)
    heads = c["heads"].astype(float)
    c["heads"] = np.where(np.isnan(heads), np.maximum(1, np.round(c["hidden"] / 128)), heads)
    c["vocab"] = c["vocab"].astype(float)
    host = c["host_gbps"].astype(float)
    default_host = _per_value(c["gpu"].astype(str), lambda g: A.PCIE_X16_GBPS[A.GPU_PCIE_GEN.get(g, 5)].value)
    c["host_gbps"] = np.where(np.isnan(host), default_host, host)
    dram = c["host_dram_gb_per_s"].astype(float)
    c["host_dram_gb_per_s"] = np.where(np.isnan(dram), A.HOST_DRAM_GB_PER_S.value, dram)
    per_host = c["gpus_per_host"].astype(float)
    c["gpus_per_host"] = np.where(np.isnan(per_host), c["scale_up_gpus"], per_host)  # a host is a domain
    c["hbm_gb_per_s"] = c["hbm_gb_per_s"].astype(float)


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


def domain_gbps_for_target(row: pd.Series, target_tflops: float) -> tuple[float, str]:
    """Smallest scale-out bandwidth per scale-up domain (Gbps) at which the configuration in `row` (already
    evaluated) reaches target_tflops; (inf, reason) when no bandwidth can. Closed form: t_step grows
    monotonically with t_comm, so invert step_time_s piecewise for the largest allowed t_comm, subtract latency
    and NVLink."""
    factor = row.get("confidence_factor", 1.0)
    fixed = row["t_offload_s"] + row["t_overhead_s"]
    t_max = row["hw_flops_per_gpu"] / (target_tflops * 1e12) * factor - fixed
    t_comp, overlap = row["t_compute_s"], row["overlap"]
    if t_max < t_comp:
        return np.inf, "compute"
    if row["domains"] <= 1:  # no network: the step is what it is
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
    bytes_per_s = row["bytes_per_domain_per_step"] / (row["eta_net"] * allowed_bandwidth_s)
    return bytes_per_s * 8 / 1e9, ""


def ceiling_tflops(row: pd.Series) -> float:
    """Achieved TFLOPs/GPU with unlimited node bandwidth (latency and NVLink still count)."""
    t_comm = row["t_comm_latency_s"] + row["t_comm_nvlink_s"]
    t_step = step_time_s(row["t_compute_s"], t_comm, row["overlap"]) + row["t_offload_s"] + row["t_overhead_s"]
    return row["hw_flops_per_gpu"] / (t_step / row.get("confidence_factor", 1.0)) / 1e12
