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
from planner.model import layout, network
from planner.model.calibration import Calibration
from planner.model.parallelism import LOW_PRECISIONS, SCALED_PRECISIONS

# ------------------------------------------------------------------ traffic (docs/model.md section 1)


def bytes_per_param_per_step(qwz=False, hpz=False, qgz=False, grad_bytes=2.0, weight_bytes=2.0):
    """Cross-node bytes per parameter per micro-step, before the ring factor.

    Forward all-gather of the weights (weight_bytes: 2 for bf16; less where FSDP2 gathers fp8 weights), backward
    all-gather (the same), gradient reduce-scatter (grad_bytes: 2 for bf16/fp16, 4 for fp32). ZeRO++ (Wang et
    al. 2023):
      qwZ: weights all-gathered as int8 with block scales, 1 B/param, in every cross-node all-gather;
      hpZ: a secondary weight copy inside each node serves the backward all-gather, 0 B across nodes;
      qgZ: gradients reduced as int4 through a hierarchical all-to-all, 0.5 B/param across nodes.
    All three: 1 + 0 + 0.5 = 1.5 B/param, the paper's "4x less" than 6.
    """
    weight = np.where(qwz, 1.0, weight_bytes)
    forward = weight
    backward = np.where(hpz, 0.0, weight)
    gradient = np.where(qgz, 0.5, grad_bytes)
    return forward + backward + gradient


def cross_domain_bytes(
    params, gpus, scale_up_gpus, qwz=False, hpz=False, qgz=False, grad_bytes=2.0, hierarchical=False, weight_bytes=2.0
):
    """V_domain = P * (b_fwd + b_bwd + b_grad) * ring factor: bytes each scale-up domain sends (and receives)
    over its NICs per micro-step, for parameters sharded over `gpus` neighbouring GPUs (every GPU of the job, or
    a hybrid shard group): `_ring_bytes` of a group with stride 1. Note it is about the whole model per
    collective, NOT 6P/N: in a ring every domain forwards (n-1)/n of each collective's bytes."""
    per_param = bytes_per_param_per_step(qwz, hpz, qgz, grad_bytes, weight_bytes)
    return _ring_bytes(np.asarray(params, float) * per_param, 0.0, gpus, 1.0, scale_up_gpus, hierarchical)[0]


def replica_bytes_per_domain(params, gpus, shard_gpus, scale_up_gpus, grad_bytes=2.0):
    """Hybrid sharding (HSDP): after the reduce-scatter inside each shard group, the gradient shards are
    all-reduced across the R = gpus / shard_gpus replicas, 2 (R-1)/R of each GPU's P/shard_gpus gradients (a
    ring all-reduce is a reduce-scatter and an all-gather). Bytes over a domain's NICs per micro-step: its
    GPUs' shards, or none when the replicas all sit in one domain. 0 with full sharding (one replica)."""
    gpus, group, domain = (np.asarray(x, float) for x in (gpus, shard_gpus, scale_up_gpus))
    replicas = gpus / group
    per_gpu = 2.0 * np.asarray(params, float) / group * grad_bytes * (replicas - 1) / replicas
    crosses = (replicas > 1) & (gpus > domain)
    return np.where(crosses, per_gpu * np.minimum(domain, gpus), 0.0)


def scale_up_bytes_per_param(qwz=False, hpz=False, qgz=False, grad_bytes=2.0, weight_bytes=2.0):
    """Bytes per parameter per micro-step a sharded collective moves over the scale-up links (NVLink), before
    the ring's (n-1)/n: hpZ's backward gather stays inside the domain at bf16 (2 B/param); qgZ quantises its
    intra-domain stage too (int4, 0.5 B/param)."""
    weight = np.where(qwz, 1.0, weight_bytes)
    return weight + np.where(hpz, 2.0, weight) + np.where(qgz, 0.5, grad_bytes)


def gathered_weight_bytes(params, layers, hidden, ffn, kv_share, gated, lowp_share, fp8_allgather, framework):
    """Bytes per parameter of the weight all-gathers: bf16 (2), but FSDP2 with fp8 all-gather (torchao's
    enable_fsdp_float8_all_gather, tensorwise scaling) gathers the low-precision linear weights as fp8 (1 B)."""
    linear = np.asarray(layers, float) * linear_flops_per_token(hidden, ffn, kv_share, gated) / 2.0  # params
    share = np.minimum(1.0, linear / np.asarray(params, float)) * lowp_share
    on = np.asarray(fp8_allgather, bool) & (np.asarray(framework) == "fsdp")
    return 2.0 - np.where(on, share, 0.0)


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


ESTIMATED_HEAD_WIDTH = 128  # GPT-3's attention heads (Brown et al. 2020, table 2.1: d_head 128 from 6.7B up)


def estimated_heads(hidden):
    """Attention heads of a model known by its hidden size alone: 128-wide heads, at least one."""
    return np.maximum(1, np.round(np.asarray(hidden, float) / ESTIMATED_HEAD_WIDTH))


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
    selective checkpointing; per-op checkpointing saves the attention output): FlashAttention runs the causal
    half of it at its own rate (calibration.attention_efficiency)."""
    per_token = 12.0 * np.asarray(layers, float) * hidden * seq_len
    recompute = np.where(
        np.isin(checkpointing, ["full", "selective"]), 4.0 * np.asarray(layers, float) * hidden * seq_len, 0
    )
    return (per_token + recompute) * np.asarray(tokens, float)


def recompute_flops_per_gpu(params, tokens, layers, hidden, seq_len, checkpointing):
    """FLOPs re-run by activation checkpointing: full re-runs the forward, (2 P + 4 L h s) T; selective re-runs
    only the attention core (Korthikanti et al. 2022), 4 L h s T; op (torchtitan's per-op policy) every second
    matmul, P T; none, nothing."""
    attention = 4.0 * np.asarray(layers, float) * hidden * seq_len * np.asarray(tokens, float)
    matmuls = 2.0 * np.asarray(params, float) * np.asarray(tokens, float)
    modes = [checkpointing == "full", checkpointing == "selective", checkpointing == "op"]
    return np.select(modes, [matmuls + attention, attention, 0.5 * matmuls], 0.0)


def hardware_flops_per_gpu(model_flops, checkpointing=True):
    """Activation checkpointing re-runs the forward pass: 8/6 of the model FLOPs (without the attention
    detail of recompute_flops_per_gpu; kept for reports that only know F_model)."""
    full = _checkpointing(checkpointing) == "full"
    return np.asarray(model_flops, float) * np.where(full, 8.0 / 6.0, 1.0)


# ---- the operations of a transformer block (docs/model.md section 3): what each costs, not its MFU ----


def block_shape(params, layers, hidden, heads, vocab, ffn_hidden, kv_heads):
    """(FFN width f, KV share r = kv_heads / heads, gated MLP) of each configuration. A known FFN width is
    gated (SwiGLU, three matrices) when that reproduces the parameter count better than a plain MLP (two);
    an unknown one is the GPT block's 4h, plain."""
    h, L = np.asarray(hidden, float), np.asarray(layers, float)
    r = np.nan_to_num(np.asarray(kv_heads, float) / np.asarray(heads, float), nan=1.0)
    f_given = np.asarray(ffn_hidden, float)
    f = np.where(np.isnan(f_given), 4.0 * h, f_given)
    embedding = 2.0 * np.nan_to_num(np.asarray(vocab, float)) * h
    attention = h * h * (2.0 + 2.0 * r)
    gated_p, plain_p = L * (attention + 3.0 * h * f) + embedding, L * (attention + 2.0 * h * f) + embedding
    p = np.asarray(params, float)
    gated = ~np.isnan(f_given) & (np.abs(gated_p - p) < np.abs(plain_p - p))
    return f, r, gated


def linear_flops_per_token(hidden, ffn, kv_share, gated, q_share=1.0):
    """Forward FLOPs of one block's linear layers per token: QKV 2 h q (1 + 2r), the attention output 2 q h
    (q = q_share x h: the heads' total width, h unless a model's heads are wider, as Qwen3's and GPT-OSS's), the
    MLP 2 h f per matrix (three gated, two plain)."""
    h = np.asarray(hidden, float)
    attention = 2.0 * h * h * np.asarray(q_share, float) * (2.0 + 2.0 * np.asarray(kv_share, float))
    return attention + 2.0 * h * np.asarray(ffn, float) * np.where(gated, 3.0, 2.0)


def lowp_share(hidden, ffn, kv_share, gated, precision, q_share=1.0):
    """Share of a block's linear FLOPs that runs in low precision: torchao's filter keeps small GEMMs in bf16
    (rowwise: N <= 2048 or K <= 1024 or (N <= 4096 and K <= 2048); tensorwise and fp4: K <= 4096 and N <= 1024),
    each layer as (N outputs, K inputs); NVFP4 recipes keep the last blocks in bf16 (FP4_BF16_TAIL)."""
    h, f, r = np.asarray(hidden, float), np.asarray(ffn, float), np.asarray(kv_share, float)
    up = np.where(gated, 2.0, 1.0)  # gate and up projections, each N = f
    q = h * np.asarray(q_share, float)
    layers = [(q * (1 + 2 * r), h, 1.0), (h, q, 1.0), (f, h, up), (h, f, 1.0)]  # (N, K, copies)
    rowwise = np.isin(precision, SCALED_PRECISIONS)
    low = np.isin(precision, LOW_PRECISIONS)
    total = kept = 0.0
    for n, k, copies in layers:
        flops = 2.0 * n * k * copies
        skip = np.where(rowwise, (n <= 2048) | (k <= 1024) | ((n <= 4096) & (k <= 2048)), (k <= 4096) & (n <= 1024))
        total, kept = total + flops, kept + np.where(skip, 0.0, flops)
    tail = np.where(np.asarray(precision) == "fp4", 1.0 - A.FP4_BF16_TAIL.value, 1.0)  # NVFP4's bf16 last blocks
    return np.where(low, kept / total * tail, 0.0)


def block_inputs_per_token(hidden, ffn):
    """Elements entering a block's linear layers per token (3h + f): what low-precision recipes cast."""
    return 3.0 * np.asarray(hidden, float) + np.asarray(ffn, float)


def elementwise_bytes_per_token(hidden, ffn, kv_share, gated, stack):
    """HBM bytes of one block's element-wise ops per token, forward and backward (assumptions
    ELEMENTWISE_OP_BYTES): a Llama-shaped (gated) block runs two RMSNorms, rotary on q and k, two residual adds,
    SiLU and the gate product; a GPT-shaped one two LayerNorms, two residual adds and GELU; both transpose the
    attention heads. The backward pass moves ELEMENTWISE_BACKWARD_RATIO times the forward's bytes."""
    h, f, r = np.asarray(hidden, float), np.asarray(ffn, float), np.asarray(kv_share, float)
    compiled = np.asarray(stack) == "compile"

    def op(name):
        eager, fused = A.ELEMENTWISE_OP_BYTES[(name, "eager")].value, A.ELEMENTWISE_OP_BYTES[(name, "compile")].value
        return np.where(compiled, fused, eager)

    common = 2.0 * op("residual") * h + op("layout") * h
    llama = 2.0 * op("rmsnorm") * h + op("rotary") * h * (1.0 + r) + op("swiglu") * f
    gpt = 2.0 * op("layernorm") * h + op("gelu") * f
    forward = common + np.where(gated, llama, gpt)
    return forward * (1.0 + A.ELEMENTWISE_BACKWARD_RATIO.value)


def width_efficiency(hidden, peak_flops, hbm_bytes_per_s, width_k):
    """h / (h + h_half) of a GEMM whose narrow dimension is the hidden size h, h_half = width_k x the GPU's
    balance point peak FLOP/s / HBM B/s (a roofline): narrow models run their GEMMs below the ceiling."""
    hidden = np.asarray(hidden, float)
    hidden_half = width_k * np.asarray(peak_flops, float) / np.asarray(hbm_bytes_per_s, float)
    return hidden / (hidden + np.nan_to_num(hidden_half))


def attention_width(c: dict) -> np.ndarray:
    """The width the attention scores are computed at, per token: the hidden size, or heads x head_dim where a
    model gives a head width (Qwen3, GPT-OSS: wider than hidden / heads); for MLA (DeepSeek, Kimi) the mean of
    the query-key width (head_dim + rope_head_dim) and the value width (head_dim), per head."""
    head = c["head_dim"].astype(float, copy=False)
    rope = np.nan_to_num(c["rope_head_dim"].astype(float, copy=False))
    return np.where(
        np.isnan(head),
        c["hidden"].astype(float, copy=False),
        c["heads"].astype(float, copy=False) * (head + rope / 2.0),
    )


def q_share(c: dict) -> np.ndarray:
    """The heads' total width over the hidden size, for the QKV and output projections: heads x head_dim / h where
    a head width is given, 1 for MLA (its low-rank projections are counted as MHA's, an approximation)."""
    head = c["head_dim"].astype(float, copy=False)
    mla = ~np.isnan(c["rope_head_dim"].astype(float, copy=False))
    share = c["heads"].astype(float, copy=False) * head / c["hidden"].astype(float, copy=False)
    return np.where(np.isnan(head) | mla, 1.0, share)


def gemm_width(hidden, tp, moe: dict) -> np.ndarray:
    """The narrow GEMM dimension the width roll-off sees on one tensor-parallel rank: hidden / tp (the
    attention output's and the split MLP's inner dimension), and a MoE model's expert width when narrower.
    Without TP the hidden size, as width_efficiency was fitted. (Pricing each of the block's four GEMMs at its
    own narrow dimension instead, min(hidden, its split dimension), was tried: 10.9% leave-one-publication-out
    median over the database against 7.7% for this, and 9.8% against 3.7% on Korthikanti et al.'s eight
    points: docs/model.md section 8.)"""
    width = np.asarray(hidden, float) / np.asarray(tp, float)
    expert = np.nan_to_num(np.asarray(moe["expert_width"], float), nan=np.inf)
    return np.minimum(width, expert)


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
    *,
    sharding="full",
    layout_dims: dict | None = None,
    grad_accum=1,
    expert_params=0.0,
    expert_shard=None,
    grad_bytes=4.0,
    act_bytes_per_sbh=None,
):
    """Peak bytes per GPU, in GiB (`gpus`: the GPUs the states are sharded over; `layout_dims`: tp, pp, vp, cp,
    ep of planner.model.layout.dims, default all 1): this GPU's model states by sharding (less with the optimizer
    offloaded; the routed experts' over `expert_shard`) + the hpZ secondary copy + activations (by checkpointing
    mode, split over tp x cp by sequence and context parallelism, over the pipeline's in-flight micro-batches)
    + live gathered weights (ZeRO-3 / FSDP) + logits + framework reserve. Compare with usable HBM."""
    params, gpus = np.asarray(params, float), np.asarray(gpus, float)
    d = layout_dims or {**dict.fromkeys(("tp", "pp", "vp", "cp", "ep"), 1.0), "pb": 0.0}
    b, s, h, L = micro_batch, seq_len, np.asarray(hidden, float), np.asarray(layers, float)
    checkpointing = _checkpointing(checkpointing)
    dense, experts = layout.local_params(params, np.asarray(expert_params, float), d)
    expert_shard = gpus if expert_shard is None else np.asarray(expert_shard, float)
    states = dense * layout.states_bytes_per_param(sharding, offload, gpus, grad_bytes)
    states = states + experts * layout.states_bytes_per_param(sharding, offload, expert_shard, grad_bytes)
    states = states + np.where(hpz, 2.0 * params / scale_up_gpus, 0.0)  # hpZ: a bf16 copy per domain
    split = d["tp"] * d["cp"]  # sequence parallelism splits a layer's activations over tp, context over cp
    held = layout.held_layers(L, d, grad_accum)  # layers' worth of stored activations
    per_sbh = A.ACT_WORKING_BYTES.value if act_bytes_per_sbh is None else np.asarray(act_bytes_per_sbh, float)
    layer_work = per_sbh * b * s * h / split
    scores = np.where(flash_attention, 0.0, A.ACT_ATTN_SCORES.value * heads * s**2 * b / split)
    op_saved = A.ACT_OP_SAC_SHARE.value * layer_work
    activations = np.select(
        [checkpointing == "full", checkpointing == "selective", checkpointing == "op"],
        [2.0 * b * s * h / split * held + layer_work + scores, held * layer_work, held * op_saved + layer_work],
        held * (layer_work + scores),
    )  # selective recomputes the scores; op saves half the matmul outputs and recomputes one layer's rest
    gathered = np.isin(
        np.asarray(sharding).astype(str, copy=False), ("full", "hybrid")
    )  # ZeRO-3 / FSDP gather each block
    live = np.where(gathered, 2.0 * np.minimum(2.0 * (dense + experts) * d["pp"] / L, A.MAX_LIVE_PARAMS.value), 0.0)
    logits = np.nan_to_num(A.LOGIT_BYTES.value * b * s * np.asarray(vocab, float) / split)
    return (states + activations + live + logits) / GIB + A.FRAMEWORK_RESERVE_GIB.value


def activation_bytes_per_sbh(c: dict, moe: dict, kv_share) -> np.ndarray:
    """Bytes one layer stores for its backward per token and hidden unit, counted as Korthikanti et al. 2022 count
    GPT's 34 (sec. 4.1) but from this model's shape: two norm inputs (4), attention's input, Q, K, V and output
    (2 + 2q + 4qr + 2q with FlashAttention, q the heads' width over h, r the KV heads' share), the MLP's input and
    its hidden activations (gated: gate, up and their product, 6f/h; plain: 4f/h), a MoE layer's top-k permuted
    copies of its input; no dropout masks. Without a shape: Korthikanti's 34."""
    q, r = q_share(c), np.asarray(kv_share, float)
    h = c["hidden"].astype(float, copy=False)
    f = np.asarray(moe["f_active"], float)
    mlp = 2.0 + np.where(moe["gated"], 6.0, 4.0) * f / h
    mlp = mlp + 2.0 * moe["top_k"] * moe["moe_layers"] / c["layers"].astype(float, copy=False)
    counted = 4.0 + 2.0 + 4.0 * q + 4.0 * q * r + mlp
    return np.where(np.isfinite(counted), counted, A.ACT_WORKING_BYTES.value)


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
    "ffn_hidden": np.nan,
    "kv_heads": np.nan,
    "architecture": "other",
    "peak_fp8_tflops": np.nan,
    "peak_fp4_tflops": np.nan,
    "stack": "eager",
    "precision": "bf16",
    "fp8_allgather": False,
    "sharding": "full",
    "shard_gpus": 0,
    "checkpointing": "full",
    "flash_attention": True,
    "attention_kernel": "flash",
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
    "tp": 1,
    "pp": 1,
    "vp": 1,
    "cp": 1,
    "ep": 1,
    "tp_overlap": False,
    "pp_balanced": False,
    "experts": np.nan,
    "top_k": np.nan,
    "expert_ffn": np.nan,
    "shared_experts": 0,
    "dense_layers": 0,
    "head_dim": np.nan,
    "rope_head_dim": np.nan,
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


KEYS = ("framework", "fabric", "gpu", "architecture", "stack", "precision")  # the columns looked up per value


def decompose(columns: dict, rows: int | None = None) -> dict:
    """Everything about the configurations that does not depend on the calibration: FLOPs, bytes per tier,
    collective counts and their unscaled latency, kernel and offload times, memory, the pipeline's bubble.
    (Fitting evaluates this once and `combine` many times.) Per-GPU figures are those of one micro-batch of
    one pipeline on this GPU: its 1/(tp pp cp) share of the micro-batch's work (the last stage's vocabulary
    work whole, as the pipeline runs at its slowest stage)."""
    rows = rows if rows is not None else max(np.size(v) for v in columns.values())
    coded: dict[str, tuple] = {}  # the text columns' factorisations, as _typed finds them
    c = {k: _typed(k, _broadcast(columns.get(k, OPTIONAL.get(k)), rows), coded) for k in (*REQUIRED, *OPTIONAL)}
    _fill_architecture(c)
    c["checkpointing"] = _checkpointing(c["checkpointing"])
    tiers = network.tiers(c)
    d = layout.dims(c)
    f, r, gated = block_shape(c["params"], c["layers"], c["hidden"], c["heads"], c["vocab"], c["ffn_hidden"],
                              c["kv_heads"])  # fmt: skip
    moe = layout.moe_shape(c, c["hidden"], f, gated)
    d["stage_layers"], d["head_share"] = layout.pipeline_split(c["layers"], _head_layers(c, moe, r), d)
    tokens = c["micro_batch"] * c["seq_len"] / d["mp"]  # this GPU's share of one micro-batch
    active = moe["active_params"]
    width = attention_width(c)
    f_model = model_flops_per_gpu(active, tokens, c["layers"], width, c["seq_len"])
    recompute = recompute_flops_per_gpu(active, tokens, c["layers"], width, c["seq_len"], c["checkpointing"])
    quant = {k: c[k].astype(bool, copy=False) for k in ("qwz", "hpz", "qgz")}
    offload = c["offload"].astype(str, copy=False)
    shard, expert_shard = shard_group(c, d)
    local = layout.local_params(c["params"], moe["expert_params"], d)
    ops = _operations(c, tokens, (shard, expert_shard), d, (moe["f_active"], r, moe["gated"]), local, moe)
    offload_args = (c["params"], shard, c["gpus_per_host"], offload, c["grad_accum"])
    flash = c["flash_attention"].astype(bool, copy=False) & (c["attention_kernel"].astype(str, copy=False) != "unfused")
    memory = memory_per_gpu_gib(
        c["params"], shard, c["scale_up_gpus"], c["micro_batch"], c["seq_len"], c["layers"], c["hidden"],
        c["heads"], c["vocab"], c["checkpointing"], flash, quant["hpz"], offload,
        sharding=c["sharding"].astype(str, copy=False), layout_dims=d, grad_accum=c["grad_accum"],
        expert_params=moe["expert_params"], expert_shard=expert_shard,
        grad_bytes=c["grad_bytes"].astype(float, copy=False), act_bytes_per_sbh=activation_bytes_per_sbh(c, moe, r),
    )  # fmt: skip
    # the slowest stage's loss over its tp x cp share of the micro-batch (where it runs the loss: pipeline_split)
    head_tokens = tokens * d["pp"] * d["head_share"]
    imbalance = d["stage_layers"] * d["pp"] / c["layers"]  # slowest stage / mean stage
    keys = {k: c[k].astype(str, copy=False) for k in KEYS}
    return {
        "columns": c,
        "keys": keys,
        "coded": {k: coded[k] if k in coded else pd.factorize(v) for k, v in keys.items()},  # once, not per lookup
        **ops,
        "layout": d,
        "bubble": layout.bubble(d, c["grad_accum"]),
        "domains": tiers.scale_out.size,
        "tokens_per_gpu": tokens,
        "model_flops_per_gpu": f_model,
        "hw_flops_per_gpu": f_model + recompute,
        "attention_flops_per_gpu": attention_flops_per_gpu(tokens, c["layers"], width, c["seq_len"], c["checkpointing"])
        * imbalance,
        "t_kernel_s": zeropp_kernel_s(c["params"], quant["qwz"], quant["qgz"], c["hbm_gb_per_s"])
        + vocabulary_s(head_tokens, c["vocab"], c["hbm_gb_per_s"]),
        "t_offload_s": offload_s(*offload_args, c["host_gbps"], c["host_dram_gb_per_s"]),
        "t_cpu_adam_ref_s": offload_s(*offload_args, np.inf, c["host_dram_gb_per_s"]),  # CPU-Adam alone
        **_traffic(c, tiers, quant, ops["weight_bytes"], (shard, expert_shard), d, local, moe),
        "memory_per_gpu_gib": memory,
        "usable_hbm_gib": usable_hbm_gib(c["hbm_gib"]),
    }


def combine(parts: dict, cal: Calibration, confidence: float | None = None) -> dict:
    """The step time and every figure from the calibration-independent parts and a calibration."""
    c, keys = parts["columns"], parts["coded"]
    framework, fabric = keys["framework"], keys["fabric"]
    peak = c["peak_tflops"].astype(float, copy=False) * 1e12
    f_hw, f_model, tokens = parts["hw_flops_per_gpu"], parts["model_flops_per_gpu"], parts["tokens_per_gpu"]
    times = compute_times(parts, cal)
    t_comp = times["t_compute_s"]
    eta_comp = f_hw / (peak * t_comp)  # the whole step's sustained fraction of peak, for reports
    eta_net = _per_value(fabric, cal.eta_net_for)
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
    t_tp = tensor_parallel_s(parts, eta_net, cal)
    t_moe_host = parts["moe_layer_passes"] * cal.moe_layer_overhead_s  # dropless MoE's syncs and launches
    t_micro = step_time_s(t_comp, t_comm, overlap) + t_tp + t_moe_host
    t_bubble = np.where(parts["bubble"] > 0, t_micro * parts["bubble"], 0.0)  # no inf x 0 where nothing idles
    t_point = t_micro + t_bubble + t_offload + overhead
    arch = keys["architecture"]
    factor = _confidence_factor(cal, arch, framework, fabric, confidence)
    low, high, range_group = _range(cal, arch, framework, fabric)
    t_step = t_point / factor
    gpus = c["gpus"]
    figures = {
        **times,
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
        "shard_gpus": parts["shard_gpus"],  # the GPUs a parameter is sharded over (n, or the hybrid group)
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
        "t_comm_exposed_s": np.maximum(0.0, t_point - t_bubble - t_offload - overhead - t_comp),
        "t_comm_tp_s": t_tp,
        "t_moe_host_s": t_moe_host,
        "t_bubble_s": t_bubble,
        "bubble": parts["bubble"],
        "tp_bytes_per_domain_per_step": parts["tp_bytes_per_domain_per_step"],
        "tp_bytes_per_gpu_nvlink_per_step": parts["tp_bytes_per_gpu_nvlink_per_step"],
        **{k: c[k] for k in ("tp", "pp", "vp", "cp", "ep")},
        "pp_balanced": parts["layout"]["pb"],
        "dp": parts["layout"]["dp"],
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


def tensor_parallel_s(parts: dict, eta_net, cal: Calibration) -> np.ndarray:
    """The exposed time of tensor- and expert-parallel communication per micro-step: the slower of its
    scale-up and network transfers plus its latency, less the share TP overlap hides (TP_OVERLAP_HIDDEN)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        net = np.where(parts["tp_bytes_per_domain_per_step"] > 0, parts["t_tp_network_line_s"] / eta_net, 0.0)
    t = np.maximum(net, parts["t_tp_nvlink_s"]) + parts["t_tp_latency_unscaled_s"] * cal.latency_scale
    hidden = np.where(parts["columns"]["tp_overlap"].astype(bool, copy=False), A.TP_OVERLAP_HIDDEN.value, 0.0)
    return t * (1.0 - hidden)


def _operations(c: dict, tokens, shards, d: dict, shape, local, moe: dict) -> dict:
    """A micro-step's operations per GPU, before any rate (docs/model.md section 3): the block GEMMs' FLOPs
    (forward, backward twice, the forward again under full checkpointing, half of it under op; a MoE layer's
    at the width of the experts a token uses), their low-precision share and that precision's peak, the logits
    GEMM (on the last pipeline stage), the element-wise bytes (their forward again when checkpointing recomputes
    it; MoE adds the token permutations) and the inputs low-precision recipes cast, the bytes per parameter of
    the weight gathers, the narrow GEMM dimension (hidden / tp; a MoE's expert width when narrower), the
    optimizer's local parameters (`shards`: the GPUs a dense and an expert parameter's states are sharded over;
    each optimizer step is shared by grad_accum micro-steps), and the passes over the blocks the host
    dispatches (this stage's layers)."""
    f, r, gated = shape
    full, op = c["checkpointing"] == "full", c["checkpointing"] == "op"
    passes = 3.0 + full + 0.5 * op  # forward, backward (2x), and the recomputed forward (op: half its matmuls)
    qs = q_share(c)
    per_token = linear_flops_per_token(c["hidden"], f, r, gated, qs)
    inputs = np.asarray(tokens, float) * c["layers"] * block_inputs_per_token(c["hidden"], f)
    elementwise = elementwise_bytes_per_token(c["hidden"], f, r, gated, c["stack"].astype(str, copy=False))
    permute = moe["moe_layers"] / c["layers"] * moe["top_k"] * c["hidden"] * A.MOE_PERMUTE_BYTES.value
    recomputed = np.isin(c["checkpointing"], ["full", "selective", "op"])  # all re-run the element-wise forward
    precision = c["precision"].astype(str, copy=False)
    share = lowp_share(c["hidden"], f, r, gated, precision, qs)
    peak_low = np.where(
        precision == "fp4",
        c["peak_fp4_tflops"].astype(float, copy=False),
        c["peak_fp8_tflops"].astype(float, copy=False),
    )
    share = np.where(np.isnan(peak_low), 0.0, share)  # no low-precision tensor cores: everything runs in bf16
    fp8_gather, framework = c["fp8_allgather"].astype(bool, copy=False), c["framework"].astype(str, copy=False)
    weight_bytes = gathered_weight_bytes(c["params"], c["layers"], c["hidden"], f, r, gated, share, fp8_gather,
                                         framework)  # fmt: skip
    width = gemm_width(c["hidden"], d["tp"], moe)
    dense, experts = local
    shard, expert_shard = shards
    replicated = np.asarray(c["sharding"]).astype(str, copy=False) == "none"
    optimizer = np.where(replicated, dense + experts, dense / shard + experts / expert_shard)
    layers = d["stage_layers"] * d["pp"]  # the slowest stage's, as if every stage had them
    expert_flops = (
        moe["moe_layers"]
        / c["layers"]
        * moe["top_k"]
        * 6.0
        * c["hidden"]
        * np.nan_to_num(c["expert_ffn"].astype(float, copy=False))
    )  # per token per layer, forward: the routed experts' gated MLPs
    return {
        "expert_share": np.where(moe["moe"], np.minimum(1.0, expert_flops / per_token), 0.0),
        "gemm_linear_flops": np.asarray(tokens, float) * layers * per_token * passes,
        "lowp_share": share,
        "lowp_peak_flops": peak_low * 1e12,
        "weight_bytes": weight_bytes,
        "gemm_width": width,
        "gemm_logits_flops": np.asarray(tokens, float) * d["pp"] * d["head_share"] * _logits_flops_per_token(c),
        "elementwise_bytes": np.asarray(tokens, float) * layers * (elementwise + permute) * (1.0 + recomputed / 3.0),
        "cast_inputs": inputs * layers / c["layers"] * passes * share,
        "optimizer_params": optimizer / np.maximum(c["grad_accum"].astype(float, copy=False), 1),
        "block_passes": layers / d["pp"] * passes,
        # unfused attention: score elements per GPU (heads / tp of s x s per sequence; a recomputed forward adds
        # its 13 of UNFUSED_SCORE_BYTES' 30)
        "score_elements": np.asarray(tokens, float)
        * layers
        * c["heads"]
        * c["seq_len"]
        * (1.0 + np.isin(c["checkpointing"], ["full", "selective"]) * 13.0 / 30.0),
        "moe_layer_passes": moe["moe_layers"] / c["layers"] * layers / d["pp"] * passes,
    }


def _logits_flops_per_token(c: dict) -> np.ndarray:
    """The output layer's GEMM per token, forward and backward: 6 h V."""
    return 6.0 * c["hidden"] * np.nan_to_num(c["vocab"].astype(float, copy=False))


def _head_layers(c: dict, moe: dict, kv_share) -> np.ndarray:
    """The output layer's GEMMs in units of one block's linear GEMMs (with the block's recomputed forward):
    where it exceeds one layer a balanced pipeline's last rank is its slowest (layout.pipeline_split)."""
    passes = 3.0 + (c["checkpointing"] == "full") + 0.5 * (c["checkpointing"] == "op")
    block = linear_flops_per_token(c["hidden"], moe["f_active"], kv_share, moe["gated"], q_share(c)) * passes
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.nan_to_num(_logits_flops_per_token(c) / block, nan=0.0)


def shard_group(c: dict, d: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """GPUs a dense parameter's states are sharded over, and a routed expert's: the data- and context-parallel
    ranks dp x cp (every GPU without a layout) or the hybrid group (default: the scale-up domain); the experts'
    over the expert-data-parallel ranks dp x cp x tp / ep."""
    d = d or layout.dims(c)
    ranks = d["dp"] * d["cp"]
    group = np.where(
        c["shard_gpus"].astype(float, copy=False) > 0, c["shard_gpus"].astype(float, copy=False), c["scale_up_gpus"]
    )
    dense = np.where(c["sharding"].astype(str, copy=False) == "hybrid", np.minimum(group, ranks), ranks).astype(
        float, copy=False
    )
    return dense, np.maximum(1.0, ranks * d["tp"] / d["ep"])


def compute_times(parts: dict, cal: Calibration) -> dict:
    """The compute phase of a micro-step and its parts (docs/model.md section 3): the block and logits GEMMs at
    the architecture's efficiency (the low-precision share at its own peak), the causal attention core at
    FlashAttention's, element-wise ops, casts and the optimizer at the architecture's share of HBM bandwidth, and
    the host's kernel dispatch when it is slower than the GPU (eager PyTorch on small work)."""
    c, keys, coded = parts["columns"], parts["keys"], parts["coded"]
    arch, stack, precision = coded["architecture"], coded["stack"], keys["precision"]
    peak = c["peak_tflops"].astype(float, copy=False) * 1e12
    hbm_peak = c["hbm_gb_per_s"].astype(float, copy=False) * 1e9
    ceiling = _per_value(arch, cal.gemm_efficiency_for) * _per_value(coded["framework"], cal.framework_efficiency_for)
    eta = ceiling * width_efficiency(parts["gemm_width"], peak, hbm_peak, cal.width_k)
    fp4 = precision == "fp4"
    peak_low = parts["lowp_peak_flops"]
    ratio = _per_value(arch, cal.lowp_ratio_for) * np.where(fp4, A.FP4_EFFICIENCY_RATIO.value, 1.0)
    ratio = ratio * np.where(precision == "fp8-rowwise", A.ROWWISE_GEMM_FACTOR.value, 1.0)
    share = parts["lowp_share"]
    linear = parts["gemm_linear_flops"]
    moe = 1.0 + parts["expert_share"] * (1.0 / cal.moe_gemm_ratio - 1.0)  # experts' GEMMs at their own rate
    with np.errstate(divide="ignore", invalid="ignore"):
        t_low = np.nan_to_num(linear * share * moe / (peak_low * eta * ratio))
    t_gemm = (linear * (1 - share) * moe + parts["gemm_logits_flops"]) / (peak * eta) + t_low
    attention = _per_value(arch, cal.attention_efficiency_for)
    kernel = c["attention_kernel"].astype(str, copy=False)
    kernel_ratio = np.select(
        [kernel == "triton", kernel == "fa3"], [cal.triton_attention_ratio, cal.fa3_attention_ratio], 1.0
    )
    attention = np.minimum(1.0, attention * kernel_ratio)
    cp = parts["layout"]["cp"]
    ring = 1.0 + cal.cp_attention_penalty * (cp - 1.0) / cp  # ring attention's blocks and imbalance
    t_attention = parts["attention_flops_per_gpu"] * A.CAUSAL_SHARE.value * ring / (peak * attention)
    unfused = kernel == "unfused"  # the full s x s scores as two batched GEMMs, and their soft-max through HBM
    hbm_unfused = hbm_peak * _per_value(arch, lambda a: A.by_architecture(A.HBM_EFFICIENCY, a))
    t_unfused = parts["attention_flops_per_gpu"] / (peak * eta) + np.nan_to_num(
        parts["score_elements"] * A.UNFUSED_SCORE_BYTES.value / hbm_unfused
    )
    t_attention = np.where(unfused, t_unfused, t_attention)
    hbm = hbm_peak * _per_value(arch, lambda a: A.by_architecture(A.HBM_EFFICIENCY, a))
    hbm = np.where(np.isnan(hbm), np.inf, hbm)  # an unknown HBM bandwidth counts nothing (as vocabulary_s)
    t_elementwise = parts["elementwise_bytes"] / hbm  # counted, not fitted (docs/model.md section 3)
    scaled = np.isin(precision, (*SCALED_PRECISIONS, "fp4"))
    cast_bytes = cal.cast_bytes * np.where(scaled, A.SCALED_CAST_FACTOR.value, 1.0)
    t_cast = parts["cast_inputs"] * np.where(share > 0, cast_bytes, 0.0) / hbm
    t_optimizer = parts["optimizer_params"] * np.where(c["offload"].astype(str, copy=False) == "none", 1.0, 0.0)
    t_optimizer = t_optimizer * A.OPTIMIZER_BYTES.value / hbm
    t_gpu = t_gemm + t_attention + t_elementwise + t_cast + t_optimizer + parts["t_kernel_s"]
    kernels = _per_value(stack, lambda s: A.KERNELS_PER_LAYER[s].value)
    t_dispatch = parts["block_passes"] * kernels * A.DISPATCH_US.value * 1e-6
    return {
        "t_compute_s": np.maximum(t_gpu, t_dispatch),
        "t_gemm_s": t_gemm,
        "t_attention_s": t_attention,
        "t_elementwise_s": t_elementwise + t_cast,
        "t_optimizer_s": t_optimizer,
        "t_dispatch_s": t_dispatch,
        "gemm_efficiency": eta,
        "attention_efficiency": attention,
        "lowp_share": share,
    }


def _traffic(c: dict, tiers: network.Tiers, quant: dict, weight_bytes, shards, d: dict, local, moe: dict) -> dict:
    """Bytes over each tier (a domain's NICs, a GPU's scale-up links) per micro-step, their time at line rate,
    and the latency of every collective (NCCL's alpha, before the calibration's latency_scale), in two phases:

      data, context and pipeline traffic, which the framework overlaps with compute: the parameters gathered
      and gradients reduced over the data-parallel ranks (ZeRO-3 / FSDP every micro-step; Megatron's
      distributed optimizer or DDP once per optimizer step, shared by its grad_accum micro-steps; hybrid
      groups then all-reduce across replicas), ring attention's K/V blocks, pipeline sends;
      tensor- and expert-parallel traffic, which sits on the critical path of every layer (less the share
      TP overlap hides: combine).

    Each group's placement (planner.model.layout.placement) says which bytes leave the domain."""
    up, out = tiers.scale_up, tiers.scale_out
    domain = up.size
    grad_bytes = c["grad_bytes"].astype(float, copy=False)
    shard, expert_shard = shards
    sharding = c["sharding"].astype(str, copy=False)
    sharded = np.isin(sharding, ("full", "hybrid"))
    micro = np.maximum(c["grad_accum"].astype(float, copy=False), 1.0)
    hierarchical = c["hierarchical"].astype(bool, copy=False)
    gathers = bytes_per_param_per_step(**quant, grad_bytes=grad_bytes, weight_bytes=weight_bytes)
    once = np.where(sharding == "zero1", grad_bytes + 2.0, 2.0 * grad_bytes) / micro  # per optimizer step
    once = np.where(sharding == "zero2", grad_bytes + 2.0 / micro, once)  # gradients every micro-step
    per_param = np.where(sharded, gathers, once)
    inside = scale_up_bytes_per_param(**quant, grad_bytes=grad_bytes, weight_bytes=weight_bytes)
    up_per_param = np.where(sharded, inside, once)
    dense, experts = local
    dp_out, dp_up, dp_spans = _ring_bytes(dense * per_param, dense * up_per_param, shard, d["tp"], domain,
                                          hierarchical)  # fmt: skip
    ex_out, ex_up, _ = _ring_bytes(experts * per_param, experts * up_per_param, expert_shard, d["ep"], domain,
                                   hierarchical)  # fmt: skip
    replica = replica_bytes_per_domain(c["params"], c["gpus"], shard, domain, grad_bytes)
    dp_out = dp_out + ex_out + np.where(sharding == "hybrid", replica, 0.0)
    mp = _model_parallel_traffic(c, tiers, d, moe)
    v_domain = dp_out + mp["cp_out"] + mp["pp_out"]
    v_gpu = dp_up + ex_up + mp["cp_up"] + mp["pp_up"]
    framework = c["framework"].astype(str, copy=False)
    stage_layers = c["layers"] / d["pp"]
    bucket = np.maximum(A.MEGATRON_BUCKET_PARAMS.value, 1e6 * shard)  # Megatron: max(40M, 1M x dp)
    buckets = np.ceil((dense + experts) / bucket)
    per_step = buckets * np.select([sharding == "zero1", sharding == "zero2"], [2.0 / micro, 1.0 + 1.0 / micro],
                                   1.0 / micro)  # fmt: skip
    collectives = np.where(sharded, collectives_per_step(framework, stage_layers, dense + experts), per_step)
    replicas = c["gpus"] / shard
    all_reduces = np.where(replicas > 1, c["layers"] + 1.0, 0.0) * (sharding == "hybrid")  # one per FSDP unit
    replica_domains = np.minimum(replicas, out.size)
    passes = np.where(sharding == "none", 2, 1)  # DDP all-reduces (two passes over the ring)
    latency = collectives * network.ring_latency_s(shard, dp_spans, out.step_latency_us, passes)
    latency = latency + all_reduces * network.ring_latency_s(replicas, replica_domains, out.step_latency_us, 2)
    return {
        "bytes_per_domain_per_step": v_domain,
        "bytes_per_gpu_nvlink_per_step": v_gpu,
        "collectives_per_step": collectives + all_reduces,
        "shard_gpus": shard,
        "t_network_line_s": network.transfer_s(v_domain, out.bytes_per_s),
        "t_comm_nvlink_s": network.transfer_s(v_gpu, up.bytes_per_s * A.ETA_NVLINK.value),  # unknown: never binding
        "t_latency_unscaled_s": latency + mp["overlapped_latency_s"],
        "tp_bytes_per_domain_per_step": mp["mp_out"],
        "tp_bytes_per_gpu_nvlink_per_step": mp["mp_up"],
        "t_tp_network_line_s": network.transfer_s(mp["mp_out"], out.bytes_per_s),
        "t_tp_nvlink_s": network.transfer_s(mp["mp_up"], up.bytes_per_s * A.ETA_NVLINK.value),
        "t_tp_latency_unscaled_s": mp["critical_latency_s"],
        # DeepSpeed slices every gradient tensor once per rank before reducing it (multi-domain qgZ all-to-alls
        # its weight matrices and loops over the vectors only)
        "rank_tensors_per_step": gradient_tensors(c["layers"], quant["qgz"] & (out.size > 1))
        * np.where(c["gpus"] > 1, c["gpus"], 0),
    }


def _ring_bytes(out_bytes, up_bytes, n, stride, domain, hierarchical=False):
    """A ring collective over a group of n ranks `stride` apart, each contributing `out_bytes` (its bytes at
    the network's dtype) and `up_bytes` (inside the domain): bytes over a domain's NICs (one ring segment per
    group in the domain, (n-1)/n of each collective's bytes, or (N-1)/N hierarchically over N domains),
    bytes over each GPU's scale-up links (when neighbours share its domain), and the domains the group spans."""
    members, spans, groups = layout.placement(n, stride, domain)
    n = np.asarray(n, float)
    crossing = groups * np.asarray(out_bytes, float) * network.ring_factor(n, spans, hierarchical)
    shares_domain = (members > 1) | (np.asarray(stride, float) <= 1)
    inside = np.where(shares_domain & (n > 1), np.asarray(up_bytes, float) * (n - 1) / np.maximum(n, 1), 0.0)
    return crossing, inside, spans


def _model_parallel_traffic(c: dict, tiers: network.Tiers, d: dict, moe: dict) -> dict:
    """Bytes per micro-step of tensor, context, pipeline and expert parallelism (docs/model.md section 8):

      TP (sequence parallel): TP_COLLECTIVES_PER_LAYER_PASS all-gathers / reduce-scatters of a layer's b s/cp h
        bf16 activations per pass (forward, backward, and the forward again under full recompute), (tp-1)/tp
        of each per rank, over this stage's layers;
      CP (ring attention): each rank passes its K and V blocks (b s/cp h kv_heads/heads / tp each) cp-1 times
        forward and twice that backward (the K/V blocks and their gradients);
      PP: each micro-batch's b s/(cp tp) h activations forward and their gradient backward, at each of the vp
        virtual stage boundaries;
      EP: EP_ALL_TO_ALLS_PER_LAYER_PASS all-to-alls per MoE layer and pass of top_k copies of each token's
        hidden state, (ep-1)/ep to other ranks, of which the share outside the domain crosses the NICs.

    Latency: NCCL's ring model per call (an all-to-all priced as one ring pass; a send as a two-rank ring)."""
    up, out = tiers.scale_up, tiers.scale_out
    domain = up.size
    b, s, h = (
        c["micro_batch"].astype(float, copy=False),
        c["seq_len"].astype(float, copy=False),
        c["hidden"].astype(float, copy=False),
    )
    tp, pp, vp, cp, ep = d["tp"], d["pp"], d["vp"], d["cp"], d["ep"]
    stage_layers = d["stage_layers"]
    passes = 2.0 + (c["checkpointing"] == "full")
    act = b * s / cp * h * A.ACTIVATION_P2P_BYTES.value  # one layer's activations on a TP group
    calls_tp = np.where(tp > 1, A.TP_COLLECTIVES_PER_LAYER_PASS.value * passes * stage_layers, 0.0)
    tp_members, tp_spans, _ = layout.placement(tp, 1, domain)
    tp_ring = calls_tp * act * (tp - 1) / tp
    tp_out = np.where(tp_spans > 1, domain * tp_ring / tp_members, 0.0)  # a TP group larger than a domain
    kv_share = np.nan_to_num(c["kv_heads"].astype(float, copy=False) / c["heads"].astype(float, copy=False), nan=1.0)
    kv_block = 2.0 * b * s / cp * h * q_share(c) * kv_share / tp * A.ACTIVATION_P2P_BYTES.value
    cp_calls = np.where(cp > 1, (cp - 1) * (3.0 + (c["checkpointing"] == "full")) * stage_layers, 0.0)
    cp_per_rank = cp_calls * kv_block
    cp_members, cp_spans, cp_groups = layout.placement(cp, tp, domain)
    cp_out = np.where(cp_spans > 1, cp_groups * cp_per_rank, 0.0)
    cp_up = np.where(cp_members > 1, cp_per_rank, 0.0)
    sends = np.where(pp > 1, 2.0 * vp, 0.0)
    pp_per_rank = sends * b * s / (cp * tp) * h * A.ACTIVATION_P2P_BYTES.value
    pp_stride = tp * cp * d["dp"]
    pp_members, pp_spans, pp_groups = layout.placement(pp, pp_stride, domain)
    pp_out = np.where(pp_spans > 1, pp_groups * pp_per_rank, 0.0)  # each group's boundary out of the domain
    pp_up = np.where(pp_members > 1, pp_per_rank, 0.0)
    calls_ep = np.where((ep > 1) & moe["moe"], A.EP_ALL_TO_ALLS_PER_LAYER_PASS.value * passes, 0.0)
    calls_ep = calls_ep * moe["moe_layers"] / pp
    ep_total = calls_ep * b * s / (cp * tp) * moe["top_k"] * h * A.ACTIVATION_P2P_BYTES.value
    ep_members, ep_spans, _ = layout.placement(ep, 1, domain)
    ep_out = domain * ep_total * (ep - ep_members) / ep
    ep_up = ep_total * (ep_members - 1) / ep
    step = out.step_latency_us
    latency_tp = calls_tp * network.ring_latency_s(tp, tp_spans, step)
    latency_ep = calls_ep * network.ring_latency_s(ep, ep_spans, step)
    latency_cp = cp_calls * network.ring_latency_s(2.0, np.where(cp_spans > 1, 2.0, 1.0), step)
    latency_pp = sends * network.ring_latency_s(2.0, np.where(pp_spans > 1, 2.0, 1.0), step)
    return {
        "mp_out": tp_out + ep_out,
        "mp_up": tp_ring + ep_up,
        "cp_out": cp_out,
        "cp_up": cp_up,
        "pp_out": pp_out,
        "pp_up": pp_up,
        "critical_latency_s": latency_tp + latency_ep,
        "overlapped_latency_s": latency_cp + latency_pp,
    }


TEXT_COLUMNS = ("framework", "fabric", "gpu", "architecture", "stack", "precision", "sharding", "offload",
                "attention_kernel")  # fmt: skip


def _typed(name: str, array: np.ndarray, coded: dict) -> np.ndarray:
    """A column in the dtype the model reads it as, converted once (text as str; numbers a table holds as
    objects, None for missing, as float), so that the model's many astype calls copy nothing. A text column
    held as objects is converted by its distinct values (a few per table), and that factorisation (codes, the
    values as str) kept in `coded`: the per-value lookups need it, and factorising a str array costs more."""
    if name in TEXT_COLUMNS and array.dtype == object:
        codes, uniques = pd.factorize(array, use_na_sentinel=False)
        if not len(uniques):
            return array.astype(str)
        values = np.array([str(u) for u in uniques], dtype=object)
        coded[name] = (codes, values)
        return values.astype(str)[codes]
    if name in TEXT_COLUMNS:
        return array.astype(str, copy=False)
    if array.dtype == object and name != "checkpointing" and not isinstance(OPTIONAL.get(name), bool):
        try:
            return array.astype(float)
        except (TypeError, ValueError):
            return array
    return array


def _broadcast(value, rows: int) -> np.ndarray:
    array = np.asarray(value)
    if array.ndim:
        return array
    return np.full(rows, array.item(), dtype=array.dtype if array.dtype != object else object)


def _per_value(keys, lookup) -> np.ndarray:
    """lookup(key) for each entry, computed once per distinct key (gpu names, fabrics, frameworks); `keys` an
    array or its pd.factorize (codes, uniques), as decompose keeps them."""
    codes, unique = keys if isinstance(keys, tuple) else pd.factorize(np.asarray(keys, dtype=object).ravel())
    return np.array([lookup(str(k)) for k in unique], dtype=float)[codes]


def _checkpointing(values) -> np.ndarray:
    """Checkpointing as "full" / "selective" / "op" / "none" (True and False from older tables: full / none)."""
    array = np.asarray(values)
    if array.dtype.kind == "U":  # already text (decompose converted it)
        return array
    array = array.astype(object, copy=False)
    if not array.ndim:
        return _checkpointing(array.reshape(1)).reshape(())
    codes, uniques = pd.factorize(array.ravel(), use_na_sentinel=False)  # mapped per distinct value
    mapped = np.array(["full" if u == True else "none" if u == False else u for u in uniques])  # noqa: E712
    return mapped.astype(str)[codes].reshape(array.shape) if len(uniques) else array.astype(str)


def _groups(*columns) -> tuple[np.ndarray, list[tuple]]:
    """Each entry's group index and the distinct groups (tuples of the columns' values), by factorising each
    column and combining the codes (far cheaper than a MultiIndex)."""
    coded = [c if isinstance(c, tuple) else None for c in columns]  # already factorised (decompose's "coded")
    arrays = [np.atleast_1d(np.asarray(c, dtype=object)) for c, k in zip(columns, coded, strict=True) if k is None]
    arrays = iter(np.broadcast_arrays(*arrays)) if arrays else iter(())
    codes, uniques = zip(*(k if k is not None else pd.factorize(next(arrays)) for k in coded), strict=True)
    sizes = [max(len(u), 1) for u in uniques]
    keys, inverse = np.unique(np.ravel_multi_index(codes, sizes), return_inverse=True)
    indices = zip(*np.unravel_index(keys, sizes), strict=True)
    groups = [tuple(u[i] for u, i in zip(uniques, index, strict=True)) for index in indices]
    return inverse.reshape(-1), groups


def _per_group(arch, framework, fabric, lookup) -> np.ndarray:
    """lookup(architecture, framework, fabric) per entry, computed once per distinct combination."""
    inverse, groups = _groups(arch, framework, fabric)
    return np.array([lookup(*key) for key in groups], dtype=float)[inverse]


def _confidence_factor(cal: Calibration, arch, framework, fabric, confidence) -> np.ndarray:
    if confidence is None:
        return np.ones(len(arch[0] if isinstance(arch, tuple) else arch))
    return _per_group(arch, framework, fabric, lambda a, w, f: cal.pessimistic_factor(a, w, f, confidence))


def _range(cal: Calibration, arch, framework, fabric) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Measured / predicted at p10 and p90 for each entry, and the validation group they come from
    (calibration.uncertainty: architecture|framework|fabric, architecture|framework, framework or all; an
    architecture the fit never saw: the leave-one-architecture-out residuals)."""
    inverse, groups = _groups(arch, framework, fabric)
    ranges = [cal.range_factors(*key) for key in groups]
    factors = np.array([r[:2] for r in ranges], dtype=float).reshape(-1, 2)[inverse]
    return factors[:, 0], factors[:, 1], np.array([r[2] for r in ranges], dtype=object)[inverse]


def _fill_architecture(c: dict) -> None:
    """Unknown layers/hidden/heads are estimated from P (GPT-3 proportions: h = 128 L, P ~ 12 L h^2), so
    attention FLOPs, latency and memory are always counted; unknown HBM and host bandwidths come from the
    GPU (the column's default), an unknown host size is one scale-up domain."""
    layers = c["layers"].astype(float, copy=False)
    c["layers"] = np.where(np.isnan(layers), estimated_layers(c["params"]), layers)
    hidden = c["hidden"].astype(float, copy=False)
    c["hidden"] = np.where(np.isnan(hidden), c["layers"] * A.ASPECT_RATIO.value, hidden)
    heads = c["heads"].astype(float, copy=False)
    c["heads"] = np.where(np.isnan(heads), estimated_heads(c["hidden"]), heads)
    c["vocab"] = c["vocab"].astype(float, copy=False)
    host = c["host_gbps"].astype(float, copy=False)
    default_host = _per_value(
        c["gpu"].astype(str, copy=False), lambda g: A.PCIE_X16_GBPS[A.GPU_PCIE_GEN.get(g, 5)].value
    )
    c["host_gbps"] = np.where(np.isnan(host), default_host, host)
    dram = c["host_dram_gb_per_s"].astype(float, copy=False)
    c["host_dram_gb_per_s"] = np.where(np.isnan(dram), A.HOST_DRAM_GB_PER_S.value, dram)
    per_host = c["gpus_per_host"].astype(float, copy=False)
    c["gpus_per_host"] = np.where(np.isnan(per_host), c["scale_up_gpus"], per_host)  # a host is a domain
    c["hbm_gb_per_s"] = c["hbm_gb_per_s"].astype(float, copy=False)


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
