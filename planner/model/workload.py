"""What is trained or served, and on which configuration.

The one builder of the table `perf.evaluate` reads (`perf_frame`), and the one set of feasibility tests a
configuration must pass (target TFLOPs/GPU, memory, throughput, a whole gradient accumulation), used alike
by buying (candidates), renting (cloud) and the explanations of why nothing fits.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from planner.assumptions import model as A
from planner.base.errors import ScenarioError, UsageError
from planner.base.units import SECONDS_PER_DAY
from planner.catalog.load import Catalog
from planner.hardware import pcie
from planner.hardware.topology import domain_gbps
from planner.model import layout
from planner.model.parallelism import LAYOUT, Parallelism

# Relative slack on floors (target, throughput): a configuration that meets one to 1e-9 meets it.
TARGET_TOLERANCE = 1e-9
THROUGHPUT_TOLERANCE = 1e-12


# a Mixture-of-Experts model's shape (catalogs/models.csv): routed experts per MoE layer, experts per token, each
# expert's FFN width, always-on shared experts, leading dense layers; NaN / 0 for a dense model
MOE_FIELDS = ("experts", "top_k", "expert_ffn", "shared_experts", "dense_layers")
# heads wider than hidden / heads (Qwen3, GPT-OSS) and MLA's rotary width (DeepSeek, Kimi): NaN when not given
HEAD_FIELDS = ("head_dim", "rope_head_dim")


@dataclass(frozen=True)
class Training:
    """What is trained and how, per GPU: the model (params, and the architecture when known), the
    micro-batch and gradient accumulation, and how the GPUs are used (parallelism, handed on whole). NaN
    architecture fields mean "unknown" (estimated from P)."""

    params: float
    micro_batch: float
    seq_len: int
    layers: float = np.nan
    hidden: float = np.nan
    heads: float = np.nan
    vocab: float = np.nan
    ffn_hidden: float = np.nan
    kv_heads: float = np.nan
    experts: float = np.nan
    top_k: float = np.nan
    expert_ffn: float = np.nan
    shared_experts: float = 0.0
    dense_layers: float = 0.0
    head_dim: float = np.nan
    rope_head_dim: float = np.nan
    parallelism: Parallelism = Parallelism()
    grad_accum: int = 1
    model_name: str | None = None
    global_batch: int | None = None  # sequences per optimizer step, when known: a pipeline's micro-batches follow
    searches_recompute: bool = False  # the planner chooses the activation-recompute mode per candidate

    @property
    def framework(self) -> str:
        return self.parallelism.framework

    @property
    def offload(self) -> str:
        return self.parallelism.offload

    def with_micro_batch(self, micro_batch: float) -> Training:
        return dataclasses.replace(self, micro_batch=micro_batch)

    def with_zeropp(self, on: bool) -> Training:
        return dataclasses.replace(self, parallelism=self.parallelism.with_zeropp(on))

    def with_parallelism(self, parallelism: Parallelism) -> Training:
        return dataclasses.replace(self, parallelism=parallelism)

    @property
    def is_moe(self) -> bool:
        return bool(self.experts == self.experts and self.experts > 0)  # NaN: dense

    def perf_columns(self) -> dict:
        """The columns perf.evaluate reads that describe the training (not the cluster)."""
        shape = {"params": self.params, "micro_batch": self.micro_batch, "seq_len": self.seq_len}
        architecture = {"layers": self.layers, "hidden": self.hidden, "heads": self.heads, "vocab": self.vocab}
        architecture |= {"ffn_hidden": self.ffn_hidden, "kv_heads": self.kv_heads}
        architecture |= {k: getattr(self, k) for k in (*MOE_FIELDS, *HEAD_FIELDS)}
        return {**shape, **architecture, **self.parallelism.columns(), "grad_accum": self.grad_accum}


def training(
    catalog: Catalog,
    *,
    params: float | None = None,
    model: str | None = None,
    micro_batch: float | None = None,
    seq_len: int | None = None,
    tokens_per_gpu: float | None = None,
    parallelism: Parallelism | None = None,
    grad_accum: int = 1,
    global_batch: int | None = None,
    **architecture,
) -> Training:
    """Resolve --model/--params and --micro-batch/--seq-len/--tokens-per-gpu into a Training (`architecture`:
    layers, hidden, heads, vocab of a model given by its parameter count)."""
    if (params is None) == (model is None):
        raise UsageError("give exactly one of --params (e.g. 176B) or --model (a name from models.csv)")
    arch: dict = {}
    if model is not None:
        row = catalog.model(model)
        params = row.params
        arch = {"layers": row.layers, "hidden": row.hidden, "heads": row.heads, "vocab": row.vocab}
        arch |= {"ffn_hidden": row.ffn_hidden or np.nan, "kv_heads": row.kv_heads or np.nan}
        arch |= {k: float(v) for k in (*MOE_FIELDS, *HEAD_FIELDS) if (v := getattr(row, k, None)) is not None}
        arch["model_name"] = row.name
        seq_len = seq_len or row.seq_len
    if params <= 0:
        raise UsageError(f"--params must be positive, got {params:g}")
    if tokens_per_gpu is not None:
        if micro_batch is not None:
            raise UsageError("give --tokens-per-gpu or --micro-batch, not both")
        if tokens_per_gpu <= 0:
            raise UsageError(f"--tokens-per-gpu must be positive, got {tokens_per_gpu:g}")
        seq_len = min(seq_len or tokens_per_gpu, tokens_per_gpu)
        micro_batch = tokens_per_gpu / seq_len
    if micro_batch is None:
        raise UsageError("give --micro-batch (sequences per GPU per micro-step) or --tokens-per-gpu")
    if seq_len is None:
        raise UsageError("give --seq-len (or --tokens-per-gpu, or --model for its seq_len)")
    if micro_batch <= 0 or seq_len <= 0:
        raise UsageError("--micro-batch and --seq-len must be positive")
    return Training(
        params=params,
        micro_batch=micro_batch,
        seq_len=int(seq_len),
        **{**architecture, **arch},
        parallelism=parallelism or Parallelism(),
        grad_accum=grad_accum,
        global_batch=global_batch,
    )


def scenario_training(catalog: Catalog, scenario) -> Training:
    """The scenario's workload at micro-batch 1 (each candidate sets its own micro-batch)."""
    w = scenario.workload
    if w.model is None and w.seq_len is None:
        raise ScenarioError(
            "workload.seq_len is required with workload.params (with workload.model the model's "
            "own seq_len is the default)"
        )
    work = training(
        catalog,
        params=w.params,
        model=w.model,
        micro_batch=1,
        seq_len=w.seq_len,
        parallelism=Parallelism.of_workload(w),
        global_batch=w.global_batch,
    )
    return dataclasses.replace(work, searches_recompute=w.checkpointing == "search")


@dataclass(frozen=True)
class Serving:
    """What is served: weight bytes (params x bytes per weight), the architecture, the decode batch."""

    weights_bytes: float
    params: float
    layers: int
    hidden: int
    batch: int = 1


# ---------------------------------------------------------------- the table perf.evaluate reads


@dataclass(frozen=True)
class Cluster:
    """A named cluster (predict, bandwidth): GPUs in nodes of gpus_per_node, each node's scale-out Gbps, the
    fabric, and the scale-up domain (default: a node is one domain; a domain of whole nodes describes e.g. an
    NVL72 as 4-GPU trays) with its bandwidth per GPU (default: a catalog server's of this GPU and domain)."""

    gpu: str
    gpus: int
    gpus_per_node: int
    node_gbps: float
    fabric: str
    scale_up_gb_per_s: float | None = None
    scale_up_gpus: int | None = None

    @property
    def domain(self) -> int:
        return self.scale_up_gpus or self.gpus_per_node


def check_cluster(cluster: Cluster) -> None:
    if cluster.gpus < 1 or cluster.gpus_per_node < 1:
        raise UsageError("--gpus and --gpus-per-node must be at least 1")
    if cluster.gpus % cluster.gpus_per_node:
        raise UsageError(
            f"--gpus {cluster.gpus} is not a multiple of --gpus-per-node {cluster.gpus_per_node}: give whole nodes"
        )
    node, domain = cluster.gpus_per_node, cluster.domain
    if (node % domain and domain % node) or cluster.gpus % domain:
        raise UsageError(
            f"--scale-up-gpus {domain}: give whole NVLink domains of whole nodes (e.g. 72 for an NVL72 of "
            f"4-GPU nodes) or nodes of whole domains, within --gpus {cluster.gpus}"
        )
    if not cluster.node_gbps > 0:
        raise UsageError(f"node bandwidth must be positive, got {cluster.node_gbps:g} Gbps")
    if cluster.fabric not in A.FABRICS:
        raise UsageError(f"--fabric {cluster.fabric!r} is not one of {', '.join(A.FABRICS)}")


def like_catalog(catalog: Catalog, gpu: str, scale_up_gpus: int, gpus_per_host: int) -> dict:
    """What a rented or hypothetical cluster is modelled with where its own description stops, so that buying
    and renting are modelled alike: the scale-up bandwidth of a catalog server with this GPU and domain size,
    and the PCIe rate (x16, GPU to host) and DRAM bandwidth of one with this GPU and host size; the most of
    each, NaN when none (the model's defaults)."""
    servers = [s for s in catalog.items("servers") if s.gpu == gpu]
    in_domain = [s.scale_up_gb_per_s for s in servers if s.scale_up_domain == scale_up_gpus]
    hosts = [s for s in servers if s.gpus_per_host == gpus_per_host]
    dram = [s.dram_gb_per_s for s in hosts if s.dram_gb_per_s]
    return {
        "scale_up_gb_per_s": max(in_domain) if in_domain else np.nan,
        "host_gbps": max(pcie.host_link_gb_per_s(s) for s in hosts) * 8 if hosts else np.nan,
        "host_dram_gb_per_s": max(dram) if dram else np.nan,
    }


def gpu_columns(catalog: Catalog, gpu: str) -> dict:
    return catalog.gpu(gpu).perf_columns()


def perf_frame(work: Training, clusters: Mapping[str, object] | pd.DataFrame) -> pd.DataFrame:
    """The one builder of the table perf.evaluate reads: the training's columns beside per-row cluster
    columns (gpu, peak_tflops, hbm_gib, gpus, the topology's scale_up_gpus, scale_up_gb_per_s, scale_out_gbps
    and gpus_per_host, fabric, host figures, and micro_batch where rows differ in it)."""
    frame = pd.DataFrame(clusters).reset_index(drop=True)
    shared = {name: value for name, value in work.perf_columns().items() if name not in frame.columns}
    return pd.concat([frame, pd.DataFrame(shared, index=frame.index)], axis=1)  # one block, not column by column


def cluster_record(catalog: Catalog, work: Training, cluster: Cluster) -> dict:
    """One row of the table perf.evaluate reads, for a named cluster (a node is one host)."""
    check_cluster(cluster)
    gpu = gpu_columns(catalog, cluster.gpu)
    like = like_catalog(catalog, gpu["gpu"], cluster.domain, cluster.gpus_per_node)
    if cluster.scale_up_gb_per_s is not None:
        like["scale_up_gb_per_s"] = cluster.scale_up_gb_per_s
    return {
        **work.perf_columns(),
        **gpu,
        "gpus": cluster.gpus,
        "gpus_per_node": cluster.gpus_per_node,
        "node_gbps": cluster.node_gbps,
        "scale_up_gpus": cluster.domain,
        "scale_out_gbps": float(domain_gbps(cluster.node_gbps, cluster.gpus_per_node, cluster.domain)),
        "gpus_per_host": cluster.gpus_per_node,
        "fabric": cluster.fabric,
        **like,
    }


def cluster_frame(catalog: Catalog, work: Training, clusters: list[Cluster]) -> pd.DataFrame:
    """One row per cluster (predict, bandwidth)."""
    return pd.DataFrame.from_records([cluster_record(catalog, work, c) for c in clusters])


# ---------------------------------------------------------------- requirements and feasibility


@dataclass(frozen=True)
class Requirements:
    """What every configuration must meet, from the scenario: a per-GPU floor, a throughput floor (from a
    deadline or a rate), a fixed GPU count, a global batch (whole gradient accumulation)."""

    target_tflops: float = 0.0
    tokens_per_s: float | None = None
    gpus: int | None = None
    global_batch: int | None = None
    tokens: float | None = None
    confidence: float | None = None  # met with this probability (perf.evaluate's pessimistic outcome)
    # a deadline met in calendar days: each configuration's tokens/s counts at its own goodput (reliability.py),
    # from these settings and the spares it buys; None: no deadline, or a goodput the scenario gives (in the need)
    reliability: object | None = None
    spares: object | None = None  # the scenario's spares section: the spare nodes each configuration buys
    # hybrid sharding over groups of workload.shard_gpus: a GPU count must hold whole replicas of a group (0: no
    # such rule; the default group, the scale-up domain, divides every count)
    shard_group: int = 0

    @classmethod
    def of(cls, scenario) -> Requirements:
        r = scenario.requirement
        need, rel = r.min_tokens_per_s, None
        if r.tokens is not None:  # a deadline, met in effective time: less the margin, times goodput
            given = scenario.reliability.goodput
            need = r.tokens / (r.days * (1 - r.schedule_margin) * SECONDS_PER_DAY * (given or 1))
            rel = scenario.reliability if given is None else None
        target = scenario.target_tflops or 0.0
        batch, spares = scenario.workload.global_batch, scenario.spares
        group = hybrid_group(scenario.workload)
        return cls(target, need, r.gpus, batch, r.tokens, scenario.confidence, rel, spares, group)

    def training_days(self, tokens_per_s):
        return None if self.tokens is None else self.tokens / tokens_per_s / SECONDS_PER_DAY


def meets_target(evaluated: Mapping, req: Requirements) -> np.ndarray:
    return np.asarray(evaluated["achieved_tflops_per_gpu"]) >= req.target_tflops - TARGET_TOLERANCE


def fits_memory(evaluated: Mapping) -> np.ndarray:
    return np.asarray(evaluated["fits_memory"], dtype=bool)


def fast_enough(evaluated: Mapping, req: Requirements, goodput=None) -> np.ndarray:
    """Meets the throughput need (at each row's `goodput`, when given: the calendar time that trains)."""
    tokens_per_s = np.asarray(evaluated["tokens_per_s"]) * (1.0 if goodput is None else np.asarray(goodput))
    if req.tokens_per_s is None:
        return np.ones(tokens_per_s.shape, dtype=bool)
    return tokens_per_s >= req.tokens_per_s * (1 - THROUGHPUT_TOLERANCE)


def hybrid_group(workload) -> int:
    """The explicit shard group of a workload's hybrid sharding (0: full sharding, or the default group)."""
    hybrid = getattr(workload, "sharding", None) == "hybrid"
    return int(getattr(workload, "shard_gpus", None) or 0) if hybrid else 0


def whole_grad_accum(gpus, micro_batch, req: Requirements, evaluated: Mapping) -> np.ndarray:
    """micro_batch x data-parallel ranks divides the global batch (grad_accum a whole number >= 1), and the
    evaluated figures' layout (tp, pp, vp, cp, ep) keeps its own rules (planner.model.layout.legal: whole ranks,
    a filled pipeline); for data parallelism that is micro_batch x GPUs dividing the global batch."""
    d = layout.dims({**{k: evaluated[k] for k in LAYOUT}, "gpus": gpus})
    return layout.legal(d, gpus, micro_batch, req.global_batch, req.shard_group)[0]


def feasible(evaluated: Mapping, req: Requirements) -> np.ndarray:
    """Every requirement at once (the fixed GPU count is the caller's range, not a test here)."""
    ok = fits_memory(evaluated) & meets_target(evaluated, req) & fast_enough(evaluated, req)
    return ok & whole_grad_accum(evaluated["gpus"], evaluated["micro_batch"], req, evaluated)
