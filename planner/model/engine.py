"""One serving replica's engine steps: prefill and decode per layer, per precision, with the KV cache
(docs/model.md section 10). Every function takes arrays, one entry per candidate replica.

A replica is g GPUs inside one scale-up domain, in one of two layouts:

  * tp: tensor parallel over g (vLLM / TensorRT-LLM default): every weight, expert and attention head is split
    g ways; grouped-query KV heads are split too (replicated once g exceeds them), an MLA latent is replicated
    on every rank. Two all-reduces of the batch's activations per layer.
  * ep (MoE only): data-parallel attention on each of the g GPUs (its own sequences and their KV cache, as
    SGLang and TensorRT-LLM serve DeepSeek-V3) and expert parallelism over g: the routed experts are split
    g ways, the rest (attention, dense layers, shared experts, the output head) is on every GPU. Each MoE
    layer dispatches every token to its top_k experts and combines the results (two all-to-alls).

A decode step runs, per GPU, the projections' and experts' GEMMs (bound by reading its weights, of a MoE layer
only the experts the batch routes to: of E experts with top_k picks per token, B tokens touch E (1 - (1 -
k/E)^B) of them, uniform routing; or by their 2 x active params FLOPs per token), then attention (bound by
reading its sequences' KV cache at their mean context, or by its FLOPs): separate kernels, so step time =
GEMMs + attention + communication + a fixed engine overhead per step. Bytes move at serve_hbm_efficiency x
HBM bandwidth, FLOPs at the decode efficiency of the precision's peak.

Prefill of one request of I tokens is compute-bound: 2 x active params x I plus causal attention (each pair
of the I tokens once: heads x (d_qk + d_v) x I^2 per layer) over the replica's g GPUs at the prefill
efficiency, plus the per-layer collectives on I tokens. Not modelled: speculative decoding, prefix caching,
pipeline parallelism and replicas spanning scale-up domains (a replica stays inside one).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from planner.assumptions import model as M
from planner.assumptions import serving as S
from planner.base.units import GIB
from planner.catalog.rows import ModelRow


@dataclass(frozen=True)
class Shape:
    """What the engine needs of a model row: sizes, attention shape (per-token KV and attention widths, MLA
    aware) and experts."""

    name: str
    params: float
    active_params: float
    routed_params: float  # every routed expert of every MoE layer
    routed_active: float  # the routed experts one token uses (top_k per MoE layer)
    layers: int
    moe_layers: int
    hidden: int
    heads: int
    kv_heads: int
    kv_width: float  # cached elements per token per layer (both K and V; an MLA latent once)
    decode_attention: float  # FLOPs per token per context token per layer in decode
    prefill_attention: float  # FLOPs per (query, key) pair per layer in prefill
    experts: int
    top_k: int
    mla: bool

    @classmethod
    def of(cls, row: ModelRow) -> Shape:
        head = row.head_dim or row.hidden / row.heads
        experts, top_k = row.experts or 0, row.top_k or 0
        moe_layers = row.layers - (row.dense_layers or 0) if row.is_moe else 0
        per_expert = 3.0 * row.hidden * (row.expert_ffn or 0)
        if row.kv_lora_rank is not None:  # MLA: decode attends in the latent (weights absorbed), prefill per head
            latent, rope = row.kv_lora_rank, row.rope_head_dim
            kv_width = latent + rope
            decode = 2.0 * row.heads * (2 * latent + rope)
            prefill = 2.0 * row.heads * (2 * head + rope) / 2  # causal: half of the I^2 pairs
        else:
            kv_heads = row.kv_heads or row.heads
            kv_width = 2.0 * kv_heads * head
            decode = 4.0 * row.heads * head
            prefill = 4.0 * row.heads * head / 2
        return cls(
            name=row.name,
            params=float(row.params),
            active_params=float(row.active_params),
            routed_params=moe_layers * experts * per_expert,
            routed_active=moe_layers * top_k * per_expert,
            layers=row.layers,
            moe_layers=moe_layers,
            hidden=row.hidden,
            heads=row.heads,
            kv_heads=row.kv_heads or row.heads,
            kv_width=float(kv_width),
            decode_attention=decode,
            prefill_attention=prefill,
            experts=experts,
            top_k=top_k,
            mla=row.kv_lora_rank is not None,
        )

    @classmethod
    def estimated(cls, params: float) -> Shape:
        """A dense model known by its size alone: GPT-3 proportions (hidden = hidden_per_layer x layers, 128-wide
        heads) and multi-head attention, the largest KV cache of that size, so its capacity errs low."""
        # the training model's estimate (imported here: planner serve never needs it, nor its imports)
        from planner.model.performance import estimated_heads, estimated_layers

        layers = int(estimated_layers(params))
        hidden = int(M.ASPECT_RATIO.value * layers)
        heads = int(estimated_heads(hidden))
        head = hidden / heads
        return cls(
            name=f"{params / 1e9:g}B (estimated shape)",
            params=float(params),
            active_params=float(params),
            routed_params=0.0,
            routed_active=0.0,
            layers=layers,
            moe_layers=0,
            hidden=hidden,
            heads=heads,
            kv_heads=heads,
            kv_width=2.0 * heads * head,
            decode_attention=4.0 * heads * head,
            prefill_attention=4.0 * heads * head / 2,
            experts=0,
            top_k=0,
            mla=False,
        )

    @property
    def moe(self) -> bool:
        return self.experts > 0


def layouts(shape: Shape, domain: int) -> list[tuple[str, int]]:
    """(layout, GPUs per replica) inside a scale-up domain of `domain` GPUs: tp over a divisor of the domain
    that splits the attention heads evenly; for a MoE model also ep over any divisor of 2 or more."""
    divisors = [g for g in range(1, domain + 1) if domain % g == 0]
    out = [("tp", g) for g in divisors if shape.heads % g == 0]
    if shape.moe:
        out += [("ep", g) for g in divisors if g >= 2]
    return out


@dataclass(frozen=True)
class Efficiency:
    """The engine's five fitted figures (planner/model/serving_validation.py fits them; the defaults are
    planner.assumptions.serving's)."""

    hbm: float = S.HBM_EFFICIENCY.value
    decode: float = S.DECODE_COMPUTE_EFFICIENCY.value
    prefill: float = S.PREFILL_COMPUTE_EFFICIENCY.value
    step_overhead_s: float = S.STEP_OVERHEAD_MS.value / 1e3
    collective_latency: float = 1.0  # x NCCL's LL latencies (custom all-reduce kernels, launch gaps)


DEFAULT = Efficiency()


@dataclass(frozen=True)
class Replicas:
    """Candidate replicas (arrays of one length): g GPUs each, the layout ("tp" or "ep"), the precision's bytes
    per weight and per KV element, and the GPU's HBM (GiB, GB/s), peak TFLOPs at the precision and scale-up
    GB/s per GPU (one direction)."""

    gpus: np.ndarray
    ep: np.ndarray  # bool: the ep layout
    weight_bytes: np.ndarray
    kv_bytes: np.ndarray
    hbm_gib: np.ndarray
    hbm_gb_per_s: np.ndarray
    peak_tflops: np.ndarray
    scale_up_gb_per_s: np.ndarray

    @classmethod
    def of(cls, frame) -> Replicas:
        """From a table with a row per replica: replica_gpus, layout, weight_bytes, kv_bytes, hbm_gib,
        hbm_gb_per_s, peak_tflops, scale_up_gb_per_s."""
        col = lambda c: frame[c].to_numpy(float)  # noqa: E731
        return cls(
            gpus=col("replica_gpus"),
            ep=(frame["layout"] == "ep").to_numpy(),
            weight_bytes=col("weight_bytes"),
            kv_bytes=col("kv_bytes"),
            hbm_gib=col("hbm_gib"),
            hbm_gb_per_s=col("hbm_gb_per_s"),
            peak_tflops=col("peak_tflops"),
            scale_up_gb_per_s=col("scale_up_gb_per_s"),
        )


def expert_slots(shape: Shape, r: Replicas) -> np.ndarray:
    """Routed experts' worth of weights per GPU per MoE layer: tp holds 1/g of every expert; ep whole experts,
    ceil(E/g) of them (an uneven split holds redundant copies, as SGLang's expert-parallel load balancer does)."""
    return np.where(r.ep, np.ceil(shape.experts / r.gpus), shape.experts / r.gpus)


def weights_per_gpu(shape: Shape, r: Replicas) -> np.ndarray:
    """Bytes of weights on each GPU of a replica."""
    rest = shape.params - shape.routed_params  # attention, dense layers, shared experts, embeddings and head
    shared = np.where(r.ep, rest, rest / r.gpus)  # ep: on every GPU
    return (shared + expert_slots(shape, r) * _expert_params(shape)) * r.weight_bytes


def _expert_params(shape: Shape) -> float:
    """Parameters of one routed expert in every MoE layer together."""
    return shape.routed_params / shape.experts if shape.moe else 0.0


def kv_bytes_per_token(shape: Shape, r: Replicas) -> np.ndarray:
    """KV-cache bytes one token of context takes on each GPU that holds it (tp: its head share, an MLA latent
    whole; ep: the whole token, on the one GPU whose sequence it is)."""
    width = np.where(
        r.ep | shape.mla,
        shape.kv_width,
        shape.kv_width * np.maximum(shape.kv_heads / r.gpus, 1.0) / shape.kv_heads,
    )
    return shape.layers * width * r.kv_bytes


def kv_tokens(shape: Shape, r: Replicas) -> np.ndarray:
    """Tokens of context the replica's KV cache holds: HBM left after the weights on each GPU (usable fraction
    less the framework reserve, as in training)."""
    usable = (M.USABLE_HBM_FRACTION.value * r.hbm_gib - M.FRAMEWORK_RESERVE_GIB.value) * GIB
    free = np.maximum(usable - weights_per_gpu(shape, r), 0.0)
    per_gpu = free / kv_bytes_per_token(shape, r)
    return np.floor(np.where(r.ep, per_gpu * r.gpus, per_gpu))


def token_budget(r: Replicas) -> np.ndarray:
    """Tokens per engine step over the replica: serve_token_budget per attention rank (one engine under tp, one
    per GPU under ep's data-parallel attention)."""
    return S.TOKEN_BUDGET.value * np.where(r.ep, r.gpus, 1.0)


def max_sequences(shape: Shape, r: Replicas, mean_context: float, cap=None) -> np.ndarray:
    """Sequences decoded together at most: the KV cache at the mean context, and the engine's cap (`cap`, or
    serve_max_sequences per attention rank: one engine under tp, one per GPU under ep)."""
    engines = np.where(r.ep, r.gpus, 1.0)
    limit = S.MAX_SEQUENCES.value * engines if cap is None else cap
    return np.minimum(np.floor(kv_tokens(shape, r) / mean_context), limit)


def touched_share(shape: Shape, tokens) -> np.ndarray:
    """Expected share of a MoE layer's routed experts that `tokens` tokens use (uniform routing, top_k each)."""
    tokens = np.asarray(tokens, float)
    if not shape.moe:
        return np.zeros_like(tokens)
    return 1.0 - (1.0 - shape.top_k / shape.experts) ** tokens


def decode_step_s(shape: Shape, r: Replicas, batch, context: float, eff: Efficiency = DEFAULT) -> dict[str, np.ndarray]:
    """One decode step of `batch` sequences at mean `context` tokens: its time and the parts of it."""
    g, b = r.gpus, np.asarray(batch, float)
    rest = shape.params - shape.routed_params
    experts = expert_slots(shape, r) * touched_share(shape, b) * _expert_params(shape)
    weights = (np.where(r.ep, rest, rest / g) + experts) * r.weight_bytes
    local = np.where(r.ep, b / g, b)  # sequences whose KV each GPU reads
    hbm = r.hbm_gb_per_s * 1e9 * eff.hbm
    flops = r.peak_tflops * 1e12 * eff.decode
    # the projections' and experts' GEMMs, then attention over the KV cache: separate kernels, one after the
    # other, each bound by its bytes or its FLOPs
    gemm = np.maximum(weights / hbm, 2.0 * shape.active_params * b / g / flops)
    attention_flops = shape.layers * shape.decode_attention * context * b / g
    attention = np.maximum(local * context * kv_bytes_per_token(shape, r) / hbm, attention_flops / flops)
    comm = _collectives_s(shape, r, b, eff)
    return {
        "step_s": gemm + attention + comm + eff.step_overhead_s,
        "gemm_s": gemm,
        "attention_s": attention,
        "comm_s": comm,
    }


def prefill_s(
    shape: Shape, r: Replicas, tokens, eff: Efficiency = DEFAULT, square: float = 1.0, alone: bool = False
) -> np.ndarray:
    """Replica time of one request's prefill of `tokens` input tokens (its compute spread over the g GPUs);
    `square`: E[I^2] / E[I]^2 when `tokens` is the mean of varying prompts (the mean of the quadratic term).
    `alone`: a step of its own (a prefill-only replica), which must also read every weight the GPU holds (a
    prompt routes to every expert); in a mixed step the decode tokens' step reads them already."""
    flops = 2.0 * shape.active_params * tokens + shape.layers * shape.prefill_attention * tokens**2 * square
    compute = flops / (r.gpus * r.peak_tflops * 1e12 * eff.prefill)
    if alone:
        compute = np.maximum(compute, weights_per_gpu(shape, r) / (r.hbm_gb_per_s * 1e9 * eff.hbm))
    return compute + _collectives_s(shape, r, np.broadcast_to(np.asarray(tokens, float), r.gpus.shape), eff)


def prefill_latency_s(
    shape: Shape, r: Replicas, tokens, eff: Efficiency = DEFAULT, square: float = 1.0, alone: bool = False
) -> np.ndarray:
    """How long one request's prefill takes from its start to its last token's logits: tp, the replica's time
    (prefill_s); ep, its attention and dense layers run on its own attention rank while its routed experts spread
    over the g GPUs, so it takes longer than the replica time it uses (other ranks prefill other requests)."""
    spread = prefill_s(shape, r, tokens, eff, square, alone)
    tokens = np.asarray(tokens, float)
    rest = 2.0 * (shape.active_params - shape.routed_active) * tokens + shape.layers * shape.prefill_attention * (
        tokens**2 * square
    )
    experts = 2.0 * shape.routed_active * tokens / r.gpus
    one_rank = (rest + experts) / (r.peak_tflops * 1e12 * eff.prefill)
    collectives = _collectives_s(shape, r, np.broadcast_to(tokens, r.gpus.shape), eff)
    return np.where(r.ep, np.maximum(one_rank + collectives, spread), spread)


def _collectives_s(shape: Shape, r: Replicas, tokens: np.ndarray, eff: Efficiency) -> np.ndarray:
    """tp: two all-reduces of the tokens' activations per layer (NCCL ring, LL latency, then the bytes over
    each GPU's scale-up link); ep: per MoE layer a dispatch (fp8) and a combine (bf16) all-to-all of each
    GPU's tokens x top_k copies, of which (g-1)/g leave the GPU, to every peer at once (one NVLink step of
    latency, not a ring). One GPU: none."""
    g = r.gpus
    scale = eff.collective_latency * 1e-6
    base, step = S.ALLREDUCE_BASE_US.value * scale, S.ALLREDUCE_STEP_US.value * scale
    rate = r.scale_up_gb_per_s * 1e9
    act = S.ACTIVATION_BYTES.value
    ring = base + 2 * (g - 1) * step
    allreduce = 2 * shape.layers * (ring + 2 * (g - 1) / g * tokens * shape.hidden * act / rate)
    sent = tokens / g * shape.top_k * shape.hidden * (S.EXPERT_DISPATCH_BYTES.value + act) * (g - 1) / g
    alltoall = shape.moe_layers * (2 * (base + step) + sent / rate)
    return np.where(g > 1, np.where(r.ep, alltoall, allreduce), 0.0)
