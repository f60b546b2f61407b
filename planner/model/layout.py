"""Where each parallel dimension puts its GPUs, and what the model and its states look like from one GPU
(docs/model.md section 8): tensor (tp), pipeline (pp, with vp virtual stages per rank), context (cp) and
expert (ep) parallelism, with data parallelism (dp) over the rest.

Ranks are laid out as Megatron-Core lays them out (megatron/core/parallel_state.py, order "tp-cp-ep-dp-pp"):
tensor-parallel ranks are neighbours, then context, then data, and pipeline stages are the outermost
dimension; the experts of a MoE layer are spread over `ep` neighbouring ranks (expert tensor parallelism 1),
so the experts' data-parallel group is the other dp*cp*tp/ep. A group of n ranks whose members sit `stride`
ranks apart has min(n, D / stride) members in each scale-up domain of D GPUs: that placement decides which of
its bytes cross the scale-out network (`placement`). Arrays broadcast, like the rest of the model.
"""

from __future__ import annotations

import numpy as np

from planner.assumptions import model as A


def dims(c: dict) -> dict:
    """tp, pp, vp, cp, ep and the data-parallel degree dp = gpus / (tp pp cp) of each configuration, as floats,
    mp = tp pp cp: the GPUs one copy of the model is split over, and pb: 1 where a pipeline counts the embedding
    and the loss as a layer each in its split (pp_balanced, pipeline_split), else 0."""
    d = {k: np.asarray(c[k], float) for k in ("tp", "pp", "vp", "cp", "ep")}
    d["mp"] = d["tp"] * d["pp"] * d["cp"]
    d["dp"] = np.asarray(c["gpus"], float) / d["mp"]
    balanced = np.asarray(c.get("pp_balanced", 0.0), float) > 0
    d["pb"] = np.where(balanced & (d["pp"] > 1), 1.0, 0.0)
    return d


def placement(n, stride, domain) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A group of n ranks `stride` apart over scale-up domains of `domain` GPUs: (members per domain, domains
    the group spans, distinct groups in each domain). One rank of the group per domain when stride >= domain."""
    n, stride, domain = (np.asarray(x, float) for x in (n, stride, domain))
    members = np.clip(np.floor(domain / np.maximum(stride, 1.0)), 1.0, np.maximum(n, 1.0))
    return members, np.maximum(1.0, np.floor(n / members)), domain / members  # whole domains, as gpus // domain


def moe_shape(c: dict, hidden, ffn, gated) -> dict:
    """Routed-expert parameters, the parameters one token uses (active), and the mean MLP width one token's
    matmuls see per layer (f_active): a dense model's are its own (expert params 0, active = params). A MoE
    model's routed experts are gated MLPs of width expert_ffn in every layer after the first dense_layers;
    a token uses top_k of them and the shared experts (counted in the dense part, width expert_ffn each)."""
    h = np.asarray(hidden, float)
    L = np.asarray(c["layers"], float)
    experts = np.nan_to_num(np.asarray(c["experts"], float))
    top_k = np.nan_to_num(np.asarray(c["top_k"], float))
    width = np.nan_to_num(np.asarray(c["expert_ffn"], float))
    shared = np.nan_to_num(np.asarray(c["shared_experts"], float))
    dense = np.nan_to_num(np.asarray(c["dense_layers"], float))
    moe_layers = np.where(experts > 0, np.maximum(L - dense, 0.0), 0.0)
    per_expert = 3.0 * h * width
    expert_params = moe_layers * experts * per_expert
    params = np.asarray(c["params"], float)
    active = params - expert_params + moe_layers * top_k * per_expert
    moe_width = (top_k + shared) * width
    f_active = np.where(experts > 0, (dense * np.asarray(ffn, float) + moe_layers * moe_width) / L, ffn)
    return {
        "expert_params": expert_params,
        "active_params": active,
        "f_active": f_active,
        "gated": np.where(experts > 0, True, gated),
        "moe_layers": moe_layers,
        "top_k": top_k,
        "moe": experts > 0,
        "expert_width": np.where(experts > 0, width, np.nan),
    }


def local_params(params, expert_params, d: dict) -> tuple[np.ndarray, np.ndarray]:
    """Parameters held by one GPU before data-parallel sharding: (dense / (tp pp), routed experts / (ep pp))."""
    dense = np.asarray(params, float) - expert_params
    return dense / (d["tp"] * d["pp"]), expert_params / (d["ep"] * d["pp"])


def pipeline_split(layers, head_layers, d: dict) -> tuple[np.ndarray, np.ndarray]:
    """The pipeline's slowest stage: (its transformer layers, 1 where it also runs the output layer and loss),
    for `head_layers`, the output layer's work in layers. The pipeline runs at its slowest stage.

    Plain split: ceil(L / (pp vp)) layers per virtual stage, vp of them per rank (an uneven split costs its
    imbalance), and the last rank adds the output layer. Balanced (pb, Megatron-Core's
    account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split, Llama 3's "we reduce one
    Transformer layer each from the first and the last stages", arXiv:2407.21783 sec. 3.3.2): the embedding and
    the loss each take a layer's place, u = (L + 2) / (pp vp) per virtual stage, so middle ranks run u vp layers
    and the last u vp - 1 layers and the loss. Without a pipeline: every layer and the loss."""
    L, head = np.asarray(layers, float), np.asarray(head_layers, float)
    chunks = d["pp"] * d["vp"]
    plain = np.ceil(L / chunks - 1e-9) * d["vp"]
    units = np.ceil((L + 2.0) / chunks - 1e-9) * d["vp"]
    head_heavier = head > 1.0  # the last rank (one layer fewer, and the loss) is then the slowest
    balanced = np.asarray(d.get("pb", 0.0)) > 0
    stage = np.where(balanced, np.where(head_heavier, units - 1.0, units), plain)
    with_head = np.where(balanced, head_heavier.astype(float, copy=False), 1.0)
    return stage, np.broadcast_to(with_head, np.shape(stage)).astype(float, copy=False)


def balanced_split_legal(layers: int, pp: int, vp: int) -> bool:
    """Megatron-Core's rule for the balanced split (transformer_config.py): a pipeline, and L + 2 dividing into
    pp ranks and each rank's share into vp virtual stages; a plain split takes any layer count."""
    return pp > 1 and (layers + 2) % (pp * vp) == 0


def bubble(d: dict, micro_batches) -> np.ndarray:
    """Idle share of a pipeline step, (pp - 1) / (vp m) of the ideal time for m micro-batches (1F1B,
    Narayanan et al. SC21 sec. 2.2; interleaving divides it by the vp virtual stages per rank)."""
    m = np.maximum(np.asarray(micro_batches, float), 1.0)
    return (d["pp"] - 1.0) / (d["vp"] * m)


def held_layers(layers, d: dict, micro_batches) -> np.ndarray:
    """Layers' worth of one micro-batch's activations the most loaded pipeline rank holds at its peak, as
    Megatron-Core's schedules run (megatron/core/pipeline_parallel/schedules.py, get_pp_rank_microbatches): rank r
    runs W_r virtual-stage forwards before its first backward and holds W_r + 1 at the peak, in groups of pp
    micro-batches chunk by chunk: 1F1B min(m, pp - r), interleaved min(m vp, 2 (pp - 1 - r) + (vp - 1) pp + 1),
    which for rank 0 and m > pp is Korthikanti et al.'s (1 + (pp-1)/(pp vp)) pp micro-batches and for m = pp all
    of them. Plain split: rank 0 holds the most. Balanced: rank 0's first chunk holds the embedding in a layer's
    place, so rank 1 (two forwards fewer, every chunk whole; when pp = 2 also the last rank, whose last chunk
    holds the loss) can hold more; the larger of the two is the peak (checked against a simulation of the
    schedule over pp 2-16, vp 1-8, m pp-4pp)."""
    L = np.asarray(layers, float)
    m = np.maximum(np.asarray(micro_batches, float), 1.0)
    pp, vp, pb = d["pp"], d["vp"], np.asarray(d.get("pb", 0.0), float)
    chunks = pp * vp
    per_chunk = np.where(pb > 0, np.ceil((L + 2.0) / chunks - 1e-9), L / chunks)

    def warmup(rank):
        interleaved = np.minimum(m * vp, 2.0 * (pp - 1.0 - rank) + (vp - 1.0) * pp + 1.0)
        return np.where(vp > 1, interleaved, np.minimum(m, pp - rank))

    def forwards_of_chunk(w, chunk):  # among the first w forwards, those of virtual stage `chunk`
        return np.where(vp > 1, np.floor(w / chunks) * pp + np.clip(np.mod(w, chunks) - chunk * pp, 0.0, pp), w)

    w0, w1 = warmup(0.0), warmup(1.0)
    rank0 = w0 * per_chunk - pb * forwards_of_chunk(w0, 0.0)
    rank1 = w1 * per_chunk - np.where(pp == 2, pb * forwards_of_chunk(w1, vp - 1.0), 0.0)
    return np.where(pp > 1, np.maximum(rank0, np.where(pb > 0, rank1, 0.0)), rank0)


def states_bytes_per_param(sharding, offload, shard, grad_bytes=4.0) -> np.ndarray:
    """Bytes of model states per parameter a GPU holds, over the `shard` GPUs the states are split over:
    ZeRO-3 / FSDP (full, hybrid) 16 / shard (4 with the optimizer offloaded); ZeRO-2 (zero2) 2 + 16 / shard
    with fp32 gradients, 2 + 14 / shard with bf16; Megatron's distributed optimizer (zero1) with fp32 gradients
    6 + 12 / shard, with bf16 gradients 4 + 16 / shard (an fp32 copy of the gradient shard joins the master
    weights and Adam moments); DDP (none) 18 or 20 (Megatron-LM docs/source/api-guide/dist_optimizer.md table)."""
    sharding, shard = np.asarray(sharding).astype(str, copy=False), np.asarray(shard, float)
    sharded = np.where(np.asarray(offload).astype(str, copy=False) == "none", A.BYTES_MODEL_STATES.value,
                       A.BYTES_STATES_OFFLOADED.value) / shard  # fmt: skip
    fp32_grads = np.asarray(grad_bytes, float) >= 4
    kept = np.where(fp32_grads, A.BYTES_ZERO1_KEPT.value, A.BYTES_ZERO1_KEPT.value - 2.0)
    split = np.where(fp32_grads, A.BYTES_ZERO1_SHARDED.value, A.BYTES_ZERO1_SHARDED.value + 4.0)
    zero2 = A.BYTES_ZERO2_KEPT.value + (A.BYTES_ZERO1_SHARDED.value + np.where(fp32_grads, 4.0, 2.0)) / shard
    return np.select(
        [sharding == "zero1", sharding == "zero2", sharding == "none"],
        [kept + split / shard, zero2, kept + split],
        sharded,
    )


# ---------------------------------------------------------------- the layouts the planner searches

POWERS = (1, 2, 4, 8, 16, 32, 64, 128)
# context parallelism is searched from 8k-token sequences (4k tokens per rank at least): NVIDIA's published H100
# recipes for Llama 3.1 405B at 8k run CP 2 (TP 8 x PP 8 x VP 8 x CP 2: Megatron-Bridge perf_recipes/llama/h100/
# llama31.py @067f987d; NeMo scripts/performance/recommended_model_configs/model_configs_h100.csv @8cfedd72;
# measured 55% MFU on 512-2,048 GPUs in NVIDIA/dgxc-benchmarking llama3.1/README.md @741c8860; MLPerf v5.0 DGX-H100)
CP_MIN_SEQ = 8192
MIN_LAYERS_PER_STAGE = 2


def search_space(work, max_domain: int, pipelines: bool) -> list[dict]:
    """The legal (tp, pp, vp, cp, ep) of a training job (a Training), each a dict, the data-parallel layout
    first: tp a power of two dividing the heads and KV heads within the largest scale-up domain (the planner
    keeps TP inside one); pp a power of two leaving MIN_LAYERS_PER_STAGE layers per stage, with vp 1, 2, 4 or 8
    while each virtual stage keeps a layer (uneven stages cost their imbalance: pipeline_split), only when `pipelines`
    (a known global batch fixes the micro-batches a pipeline fills), each also split balanced (pipeline_split)
    where Megatron-Core allows it; cp from CP_MIN_SEQ-token sequences; ep a
    power of two dividing a MoE model's experts. Which of them fit a GPU count (gpus = tp pp cp dp, ep within
    dp cp tp) is the table's test, per node count."""
    layers = int(work.layers) if work.layers == work.layers else 1
    heads = int(work.heads) if work.heads == work.heads else 1
    kv = int(work.kv_heads) if work.kv_heads == work.kv_heads else heads
    experts = int(work.experts) if work.experts == work.experts and work.experts > 0 else 1
    tps = [t for t in POWERS if t <= max_domain and heads % t == 0 and kv % t == 0]  # per domain: tp_fits
    pps = [p for p in POWERS if p == 1 or (pipelines and layers // p >= MIN_LAYERS_PER_STAGE)]
    cps = [c for c in POWERS if c == 1 or (work.seq_len >= CP_MIN_SEQ and work.seq_len // c >= 4096)]
    eps = [e for e in POWERS if experts % e == 0]
    out = []
    for tp in tps:
        for pp in pps:
            splits = [(1, 0)] + [(v, 0) for v in (2, 4, 8) if pp > 1 and layers >= pp * v]
            splits += [(v, 1) for v in (1, 2, 4, 8) if balanced_split_legal(layers, pp, v)]
            for vp, balanced in splits:
                for cp in cps:
                    out.extend(
                        {"tp": tp, "pp": pp, "vp": vp, "cp": cp, "ep": ep, "pp_balanced": balanced} for ep in eps
                    )
    return out


def legal(d: dict, gpus, micro_batch, global_batch: int | None, shard_group: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Whether each configuration's layout fits its GPU count and batch, and its micro-batches per pipeline
    per optimizer step m: gpus a multiple of tp pp cp, and of `shard_group` when given (hybrid sharding's
    explicit group: whole replicas of it, as a device mesh needs); ep dividing dp cp tp; with a global batch,
    m = batch / (dp micro_batch) whole, at least pp (1F1B fills the pipeline) and a multiple of pp when
    interleaved (Megatron's rule); without one, m = 1 and no pipeline. Where m is not whole it is returned
    unrounded (at least 1)."""
    gpus, micro_batch = np.asarray(gpus, float), np.asarray(micro_batch, float)
    dp = gpus / d["mp"]
    ok = (np.mod(gpus, d["mp"]) == 0) & (np.mod(dp * d["cp"] * d["tp"], d["ep"]) == 0)
    if shard_group:
        ok &= np.mod(gpus, shard_group) == 0
    if global_batch is None:
        return ok & (d["pp"] == 1), np.ones_like(gpus)
    with np.errstate(divide="ignore", invalid="ignore"):
        m = global_batch / (dp * micro_batch)
    whole = np.isfinite(m) & (np.abs(m - np.round(m)) < 1e-9) & (m >= 1)
    # m itself stays continuous where it is not whole, so figures are smooth in the GPU count (the node bounds
    # bisect on them); only legal configurations are ever priced
    m = np.where(whole, np.round(m), np.clip(np.nan_to_num(m, nan=1.0, posinf=1.0), 1.0, None))
    filled = (d["pp"] == 1) | ((m >= d["pp"]) & ((d["vp"] == 1) | (np.mod(m, d["pp"]) == 0)))
    return ok & whole & filled, m


def complexity(d: dict) -> np.ndarray:
    """The ordering of 'simpler' among layouts: model-parallel GPUs tp pp cp ep, then virtual stages, then a
    plain pipeline split before a balanced one."""
    balanced = np.asarray(d.get("pb", d.get("pp_balanced", 0.0)), float) > 0
    return np.asarray(d["tp"], float) * d["pp"] * d["cp"] * d["ep"] * 16 + np.asarray(d["vp"], float) + 0.5 * balanced


def choose(groups, tokens_per_s, ok, d: dict, fallback_first: bool = False) -> np.ndarray:
    """The layout each group of candidates (one hardware configuration at one size) takes: among its `ok`
    candidates (legal, fitting), the simplest (complexity) whose throughput is within LAYOUT_SIMPLICITY_MARGIN of
    the fastest; the index of the chosen row per group, in the order of np.unique(groups), -1 where none is ok
    (with `fallback_first`, the group's first row: what renting and the fleet report a size by when nothing
    runs there). The one rule of buying, renting and predicting."""
    groups, tokens, ok = np.asarray(groups), np.asarray(tokens_per_s, float), np.asarray(ok, bool)
    keys, inverse = np.unique(groups, return_inverse=True)
    best = np.full(len(keys), -np.inf)
    np.maximum.at(best, inverse[ok], tokens[ok])
    near = ok & (tokens >= best[inverse] * (1 - A.LAYOUT_SIMPLICITY_MARGIN.value))
    order = np.lexsort((-tokens, complexity(d), inverse))  # by group, simplest first, then fastest
    chosen = np.full(len(keys), -1)
    for i in order[near[order]][::-1]:  # the first in order wins: walk backwards, overwrite
        chosen[inverse[i]] = i
    if fallback_first:
        chosen = np.where(chosen >= 0, chosen, np.unique(groups, return_index=True)[1])
    return chosen


def layout_name(row) -> str:
    """e.g. "TP 8 x PP 16 (VP 4) x CP 1 x EP 1 over DP 128" from a row of the model's figures (or
    "data parallel over DP n")."""
    get = row.get if hasattr(row, "get") else row.__getitem__
    dims = {k: int(get(k)) for k in ("tp", "pp", "vp", "cp", "ep")}
    dp = int(round(float(get("dp"))))
    if dims["tp"] * dims["pp"] * dims["cp"] * dims["ep"] == 1:
        return f"data parallel over DP {dp}"
    balanced = dims["pp"] > 1 and bool(get("pp_balanced") if "pp_balanced" in row else 0)
    inside = [f"VP {dims['vp']}"] * (dims["vp"] > 1) + ["balanced"] * balanced
    vp = f" ({', '.join(inside)})" if inside else ""
    return f"TP {dims['tp']} x PP {dims['pp']}{vp} x CP {dims['cp']} x EP {dims['ep']} over DP {dp}"


def model_problem(work) -> str:
    """Why a training's own layout cannot hold its model ("" when it can): expert parallelism needs routed experts
    to spread, and every pipeline stage (every virtual stage) needs a layer."""
    p = work.parallelism
    if p.ep > 1 and not work.is_moe:
        return f"ep {p.ep}: expert parallelism needs a MoE model (experts in models.csv); use ep 1"
    if p.ep > 1 and int(work.experts) % p.ep:
        return f"ep {p.ep} does not divide the model's {int(work.experts)} experts; use a divisor"
    heads = int(work.heads) if work.heads == work.heads else None
    kv = int(work.kv_heads) if work.kv_heads == work.kv_heads else heads
    if heads and p.tp > 1 and (heads % p.tp or (kv and kv % p.tp)):
        return f"tp {p.tp} does not divide the model's {heads} heads and {kv} KV heads; use a divisor"
    layers = int(work.layers) if work.layers == work.layers else None
    if layers is not None and p.pp * p.vp > layers and not p.pp_balanced:
        return f"pp {p.pp} x vp {p.vp} stages for {layers} layers: every (virtual) stage needs a layer"
    if layers is not None and p.pp_balanced and not balanced_split_legal(layers, p.pp, p.vp):
        return (
            f"pp {p.pp} x vp {p.vp} with pp_balanced: the {layers} layers + embedding + loss do not divide into "
            "that many virtual stages (Megatron-Core's rule); change pp or vp, or drop pp_balanced"
        )
    return ""


def tp_fits(tp, domain) -> np.ndarray:
    """Tensor-parallel groups tile the scale-up domain: tp divides it (a group never straddles two domains)."""
    tp, domain = np.asarray(tp), np.asarray(domain)
    return (tp <= domain) & (np.mod(domain, np.maximum(tp, 1)) == 0)
