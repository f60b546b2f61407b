"""Every default constant of the performance model, in one place, each with its unit and source.

The model code (perf.py) takes these through a Calibration object, so a user's calibration file
(`planner calibrate`) replaces the fitted ones and reports print exactly what was assumed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Constant:
    name: str
    value: float
    unit: str
    source: str


NCCL_TUNING = "NVIDIA/nccl src/graph/tuning.cc (ring, simple protocol latency model)"

# ---- collective latency (NCCL's own cost model) ----
NCCL_BASE_LAT_US = Constant("nccl_base_latency", 8.4, "us per collective", NCCL_TUNING + ": baseLat[Ring][Simple]")
NCCL_INTRA_STEP_US = Constant(
    "nccl_nvlink_step_latency", 3.4, "us per intra-node ring step", NCCL_TUNING + ": hwLat[NVLINK][Ring][Simple]"
)
NCCL_NET_STEP_US = {
    "ib": Constant(
        "nccl_net_step_latency_ib", 9.6, "us per inter-node ring step", NCCL_TUNING + ": hwLat[NET][Ring][Simple]"
    ),
    # NCCL does not distinguish RoCE; Ethernet switch hops (~0.5-1 us cut-through vs ~0.1-0.2 us on
    # Quantum-class IB) plus RoCE NIC/congestion-control pacing add roughly 2 us per hop.
    "roce": Constant(
        "nccl_net_step_latency_roce",
        11.6,
        "us per inter-node ring step",
        "estimate: IB value + 2 us (Ethernet switch and RoCE NIC hop latency vs InfiniBand)",
    ),
}

# ---- collectives per micro-step ----
COLLECTIVES_PER_LAYER = Constant(
    "collectives_per_layer",
    3.0,
    "collective calls per transformer layer per micro-step",
    "docs/model.md section 1: forward all-gather, backward all-gather, gradient reduce-scatter per layer",
)
ASPECT_RATIO = Constant(
    "hidden_per_layer",
    128.0,
    "hidden size / layers, used only when the architecture is unknown",
    "GPT-3 175B: 12288 / 96 = 128 (Brown et al. 2020, Table 2.1); P ~ 12 L h^2",
)

# ---- network efficiency (achieved fraction of NIC line rate), starting points before calibration ----
ETA_NET_PRIOR = {
    "ib": Constant("eta_net_ib", 0.90, "fraction of line rate", "docs/model.md section 2 (NCCL busbw, IB NDR 92-96%)"),
    "roce": Constant(
        "eta_net_roce", 0.80, "fraction of line rate", "docs/model.md section 2 (NCCL busbw, RoCE 8x100G ~75%)"
    ),
    "efa": Constant(
        "eta_net_efa",
        0.75,
        "fraction of line rate",
        "estimate: EFA (SRD) with aws-ofi-nccl below RoCE's 0.80 (multipath spraying, no RDMA verbs)",
    ),
    "tcpx": Constant(
        "eta_net_tcpx",
        0.65,
        "fraction of line rate",
        "estimate: GPUDirect-TCPX/TCPXO, TCP with device memory, below RDMA fabrics",
    ),
    "tcp": Constant(
        "eta_net_tcp",
        0.45,
        "fraction of line rate",
        "estimate: NCCL socket transport over host TCP (copies through host memory)",
    ),
}

# ---- compute efficiency: sustained fraction of peak dense bf16/fp16 for training GEMMs ----
# V100's value is fitted to DeepSpeed issue #2928 (see planner/calibration.py); others are docs/model.md's
# ranges (low end, so plans are not optimistic) until calibrated against the user's own runs.
ETA_COMP = {
    "V100-32GB": Constant(
        "eta_comp[V100-32GB]",
        0.425,
        "fraction of peak",
        "docs/model.md section 2: V100 ~0.40-0.45 (prior; the shipped calibration replaces it with the #2928 fit)",
    ),
    "A100-40GB": Constant(
        "eta_comp[A100-40GB]", 0.75, "fraction of peak", "docs/model.md section 2: A100 ~0.75-0.85 (low end)"
    ),
    "A100-80GB": Constant(
        "eta_comp[A100-80GB]", 0.75, "fraction of peak", "docs/model.md section 2: A100 ~0.75-0.85 (low end)"
    ),
    "H100-SXM": Constant(
        "eta_comp[H100-SXM]", 0.65, "fraction of peak", "docs/model.md section 2: H100 ~0.65-0.80 (low end)"
    ),
    "H100-PCIe": Constant(
        "eta_comp[H100-PCIe]", 0.65, "fraction of peak", "docs/model.md section 2: H100 ~0.65-0.80 (low end)"
    ),
    "H200": Constant("eta_comp[H200]", 0.65, "fraction of peak", "estimate: same Hopper die as H100-SXM"),
}
ETA_COMP_DEFAULT = Constant(
    "eta_comp[other]",
    0.55,
    "fraction of peak",
    "estimate for GPUs without a measured value (B200, MI300X, ...): below every measured "
    "range so plans err on the side of more hardware; calibrate with your own runs",
)

OVERLAP_PRIOR = Constant(
    "overlap",
    0.0,
    "share of the shorter phase hidden",
    "docs/model.md section 2: fits of published V100 DeepSpeed ZeRO-3 data give overlap ~ 0",
)

# ---- memory model (docs/model.md section 4; Korthikanti et al. 2022, 'Reducing Activation Recomputation') ----
BYTES_MODEL_STATES = Constant(
    "bytes_per_param_states",
    16.0,
    "bytes per parameter, sharded over all GPUs",
    "ZeRO paper (Rajbhandari et al. 2020): 2 bf16 weights + 2 grads + 12 fp32 Adam states",
)
ACT_WORKING_BYTES = Constant(
    "activation_bytes_per_sbh",
    34.0,
    "bytes per (token x hidden) for one live layer",
    "Korthikanti et al. 2022, eq. 1: s*b*h*(34 + 5*a*s/h)",
)
ACT_ATTN_SCORES = Constant(
    "attention_score_bytes",
    5.0,
    "bytes per (head x seq^2 x micro-batch), no flash attention",
    "Korthikanti et al. 2022, eq. 1 (the 5*a*s^2*b term)",
)
MAX_LIVE_PARAMS = Constant(
    "max_live_parameters",
    1e9,
    "parameters gathered at once (bf16)",
    "DeepSpeed default stage3_max_live_parameters = 1e9",
)
LOGIT_BYTES = Constant(
    "logit_bytes",
    4.0,
    "bytes per (token x vocab) for fp32 logits of the loss",
    "planner assumption: the loss materialises fp32 logits for the micro-batch",
)
FRAMEWORK_RESERVE_GIB = Constant(
    "framework_reserve", 2.0, "GiB per GPU", "estimate: CUDA context (~0.5-1 GiB) plus NCCL buffers (~0.5-1 GiB)"
)
USABLE_HBM_FRACTION = Constant(
    "usable_hbm_fraction", 0.90, "fraction of HBM", "estimate: allocator fragmentation leaves ~10% of HBM unusable"
)

ETA_NVLINK = Constant(
    "eta_nvlink",
    0.80,
    "fraction of NVLink/NVSwitch per-direction bandwidth",
    "estimate: nccl-tests all-gather busbw on NVSwitch systems reaches ~80% of the per-GPU link rate",
)

# PCIe x16 throughput per direction (Gbit/s): lanes x GT/s x encoding efficiency. A NIC cannot move more
# than its host slot does, which caps e.g. a 400G NIC in a PCIe 3.0 server (DGX-2) at ~126 Gbps.
PCIE_X16_GBPS = {
    3: Constant("pcie3_x16", 16 * 8 * 128 / 130, "Gbit/s per direction", "PCI-SIG PCIe 3.0: 8 GT/s, 128b/130b"),
    4: Constant("pcie4_x16", 16 * 16 * 128 / 130, "Gbit/s per direction", "PCI-SIG PCIe 4.0: 16 GT/s, 128b/130b"),
    5: Constant("pcie5_x16", 16 * 32 * 128 / 130, "Gbit/s per direction", "PCI-SIG PCIe 5.0: 32 GT/s, 128b/130b"),
    6: Constant(
        "pcie6_x16", 16 * 64 * 242 / 256, "Gbit/s per direction", "PCI-SIG PCIe 6.0: 64 GT/s PAM4, 242B/256B FLIT"
    ),
}

# ---- inference (weight streaming, docs/model.md section 7) ----
DRAM_USABLE_FRACTION = Constant(
    "dram_usable_fraction", 0.90, "fraction of DRAM for weights", "estimate: OS, framework and pinned buffers take ~10%"
)
ACTIVATION_BYTES = Constant(
    "activation_bytes", 2.0, "bytes per activation element", "fp16/bf16 activations (inference all-reduces)"
)


def all_constants() -> list[Constant]:
    """For reports (the Assumptions sheet, `--json` output)."""
    singles = [
        NCCL_BASE_LAT_US,
        NCCL_INTRA_STEP_US,
        COLLECTIVES_PER_LAYER,
        ASPECT_RATIO,
        ETA_COMP_DEFAULT,
        OVERLAP_PRIOR,
        BYTES_MODEL_STATES,
        ACT_WORKING_BYTES,
        ACT_ATTN_SCORES,
        MAX_LIVE_PARAMS,
        LOGIT_BYTES,
        FRAMEWORK_RESERVE_GIB,
        USABLE_HBM_FRACTION,
        ETA_NVLINK,
        DRAM_USABLE_FRACTION,
        ACTIVATION_BYTES,
    ]
    return (
        singles
        + list(PCIE_X16_GBPS.values())
        + list(NCCL_NET_STEP_US.values())
        + list(ETA_NET_PRIOR.values())
        + list(ETA_COMP.values())
    )


# ---- serving capacity of `planner fleet` (decode throughput per GPU; docs/fleet.md section 4) ----
# Decode reads every weight (and the batch's KV cache) from HBM once per generated token step, so it is
# bound by HBM bandwidth until the batch is large enough to be bound by compute.
DECODE_HBM_EFFICIENCY = Constant(
    "decode_hbm_efficiency",
    0.70,
    "fraction of peak HBM bandwidth achieved by decode",
    "estimate: memory-bound decode GEMVs in vLLM / TensorRT-LLM reach ~60-80% of peak HBM bandwidth",
)
DECODE_COMPUTE_EFFICIENCY = Constant(
    "decode_compute_efficiency",
    0.50,
    "fraction of peak dense bf16 TFLOPs at large decode batches",
    "estimate: below the training eta_comp priors (small GEMMs, attention over the KV cache)",
)
KV_CACHE_BYTES = Constant("kv_cache_bytes", 2.0, "bytes per cached K or V element", "bf16/fp16 KV cache")
