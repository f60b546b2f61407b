"""Every default constant of the performance model, in one place, each with its unit and source.

The model code (perf.py) takes the fitted ones through a Calibration object (eta_comp, hidden_half, eta_net,
overlap, latency_scale, step_overhead_s): the priors here are where the fit starts and where data are thin.
Reports print exactly what was assumed (planner.assumptions.all_constants). docs/model.md derives each term.
"""

from __future__ import annotations

from planner.assumptions.constant import Constant

NCCL_TUNING = "github:NVIDIA/nccl:src/graph/tuning.cc@5067397c (ncclTunerConstantsDefaults, ring, Simple protocol)"

# ---- collective latency: NCCL's own alpha model of a ring collective (docs/model.md section 2) ----
NCCL_BASE_LAT_US = Constant(
    "nccl_base_latency", 8.4, "us per collective", NCCL_TUNING + ": baseLatencies[Ring][Simple]"
)
NCCL_INTRA_STEP_US = Constant(
    "nccl_nvlink_step_latency", 3.4, "us per intra-node ring step", NCCL_TUNING + ": hwLatencies[NVLINK][Ring][Simple]"
)
NCCL_NET_STEP_US_BASE = Constant(
    "nccl_net_step_latency",
    14.0,
    "us per inter-node ring step",
    NCCL_TUNING + ": hwLatencies[NET][Ring][Simple] (net_ib reports no extra latency: props->latency = 0)",
)
# Fabric latency relative to NCCL's IB figure. NCCL's tuner does not tell RoCE or EFA apart; the measured
# half-bandwidth message sizes of all-gather on EFA, TCPX and RoCE are 1-2x what the tuner's alpha predicts
# (busbw measurements collected in docs/model.md section 2).
FABRIC_LATENCY_RATIO = {
    "ib": Constant("latency_ratio[ib]", 1.0, "x NCCL net step", NCCL_TUNING),
    "roce": Constant(
        "latency_ratio[roce]",
        1.2,
        "x NCCL net step",
        "estimate: Ethernet switch hops and DCQCN pacing (~2 us per step)",
    ),
    "efa": Constant(
        "latency_ratio[efa]",
        1.5,
        "x NCCL net step",
        "p5 all-gather half-bandwidth size 1.7-2.8 MiB per rank (github:crazyguitar/aws-gpu-communication-benchmark"
        "@fd167f9) vs ~1.6 MiB from the tuner's alpha",
    ),
    "tcpx": Constant(
        "latency_ratio[tcpx]",
        1.6,
        "x NCCL net step",
        "GCP A3 High all-gather half-bandwidth 2.6 MiB per rank (github:GoogleCloudPlatform/cluster-toolkit@1047080)",
    ),
    "tcp": Constant("latency_ratio[tcp]", 3.0, "x NCCL net step", "estimate: socket transport through host memory"),
    # Spectrum-X is RoCE on Spectrum-4 switches with SuperNIC-class NICs: adaptive routing and congestion control
    # spread load but do not shorten a switch hop, so a ring step costs what a RoCE one does.
    "spectrum-x": Constant(
        "latency_ratio[spectrum-x]",
        1.2,
        "x NCCL net step",
        "estimate: the RoCE value (an Ethernet hop; adaptive routing does not shorten it)",
    ),
}

# ---- how each framework cuts the model into collectives (docs/model.md section 1) ----
FSDP_COLLECTIVES_PER_LAYER = Constant(
    "fsdp_collectives_per_layer",
    3.0,
    "collectives per transformer block per micro-step",
    "PyTorch FSDP notes: one all-gather (forward), one all-gather (backward), one reduce-scatter per wrapped block",
)
DEEPSPEED_GATHERS_PER_LAYER = Constant(
    "deepspeed_gathers_per_layer",
    4.0,
    "all-gathers per transformer block per pass",
    "DeepSpeed ZeRO-3 gathers per nn.Linear (deepspeedai/DeepSpeed#5047); a GPT block has 4 (QKV, proj, fc1, fc2)",
)
DEEPSPEED_REDUCE_BUCKET = Constant(
    "deepspeed_reduce_bucket_size",
    5e8,
    "parameters per gradient reduce-scatter",
    "DeepSpeed zero config default reduce_bucket_size 5e8 (deepspeed/runtime/zero/config.py)",
)
ASPECT_RATIO = Constant(
    "hidden_per_layer",
    128.0,
    "hidden size / layers, used only when the architecture is unknown",
    "GPT-3 175B: 12288 / 96 = 128 (Brown et al. 2020, Table 2.1); P ~ 12 L h^2",
)

# ---- network efficiency: achieved fraction of the node's NIC line rate at large messages ----
BUSBW = "nccl-tests all-gather/reduce-scatter busbw at >= 3 nodes (docs/model.md section 2)"
ETA_NET_PRIOR = {
    "ib": Constant("eta_net[ib]", 0.88, "fraction of line rate", BUSBW + ": DGX A100/H100 0.95 all-reduce, 0.81 AG"),
    "roce": Constant("eta_net[roce]", 0.80, "fraction of line rate", BUSBW + ": GCP A3 Ultra RoCE AG 0.82"),
    "efa": Constant("eta_net[efa]", 0.80, "fraction of line rate", BUSBW + ": AWS p5 EFA AG 0.82, all-reduce 0.89"),
    "tcpx": Constant("eta_net[tcpx]", 0.71, "fraction of line rate", BUSBW + ": GCP A3 High GPUDirect-TCPX AG 0.71"),
    # NVIDIA positions Spectrum-X (Spectrum-4 + BlueField-3 SuperNIC / ConnectX-8, per-packet adaptive routing,
    # congestion control) against standard Ethernet: "1.6x better AI workload performance" and "95%+ of available
    # bandwidth" vs 50-60% for conventional Ethernet under incast (secondary sources only; the primary NVIDIA page
    # was not found). Taken at the InfiniBand prior, not the marketing figure, until calibrated.
    "spectrum-x": Constant(
        "eta_net[spectrum-x]",
        0.88,
        "fraction of line rate",
        "estimate: IB parity; NVIDIA's Spectrum-X claims (95%+ effective bandwidth, 1.6x standard Ethernet; "
        "secondary sources firstpasslab.com 2026-03, nvnexus.com) put it near InfiniBand",
    ),
    "tcp": Constant(
        "eta_net[tcp]", 0.45, "fraction of line rate", "estimate: NCCL socket transport copies through host memory"
    ),
}
FABRICS = tuple(ETA_NET_PRIOR)

# ---- compute: sustained fraction of peak dense bf16/fp16 for whole training steps at large width ----
# eta_comp(h) = eta_comp * h / (h + hidden_half): narrow models run their GEMMs far below peak.
MFU = "whole-step hardware utilisation of published runs (docs/model.md section 3)"
ETA_COMP = {
    "V100-32GB": Constant("eta_comp[V100-32GB]", 0.45, "fraction of peak", MFU + ": DeepSpeed #2928 fit 0.43"),
    "A100-40GB": Constant("eta_comp[A100-40GB]", 0.65, "fraction of peak", MFU + ": torchtitan A100 MFU 0.51-0.61"),
    "A100-80GB": Constant("eta_comp[A100-80GB]", 0.65, "fraction of peak", MFU + ": torchtitan A100 MFU 0.51-0.61"),
    "H100-SXM": Constant("eta_comp[H100-SXM]", 0.50, "fraction of peak", MFU + ": H100 0.35-0.57 (Megatron 0.41-0.49)"),
    "H100-PCIe": Constant("eta_comp[H100-PCIe]", 0.50, "fraction of peak", "estimate: the H100-SXM prior"),
    "H200": Constant("eta_comp[H200]", 0.52, "fraction of peak", MFU + ": KempnerForge H200 MFU 0.44-0.54"),
}
# A variant on the same die as a measured GPU (a PCIe board, fewer HBM stacks, an export part with less NVLink)
# sustains the same fraction of its own peak, so it takes that GPU's fitted eta_comp; its own peak and HBM
# bandwidth (catalog) still set its speed and its width term. Names as in catalogs/gpus.csv and
# docs/holdout/holdout_gpus.csv; any other GPU without measurements gets its prior, else ETA_COMP_DEFAULT.
SAME_DIE = {
    "H100-PCIe": "H100-SXM",  # GH100 with 114 SMs (SXM5: 132) at a lower clock: its catalog peak is already lower
    "H100-NVL": "H100-SXM",  # GH100 on a dual PCIe board
    "H800": "H100-SXM",  # GH100 with NVLink cut to 400 GB/s (China export part)
    "H100-64GB": "H100-SXM",  # MareNostrum 5's SXM5 with 4 HBM2e stacks
    "A800-80GB": "A100-80GB",  # GA100 with NVLink cut to 400 GB/s
    "A100-64GB": "A100-80GB",  # Leonardo's custom SXM4 with 4 HBM2e stacks
    "GB200": "B200",  # the B200 die at 1200 W in a Grace-Blackwell superchip: its catalog peak is already higher
    "MI325X": "MI300X",  # the MI300X's CDNA3 die (304 CU, 2.1 GHz) with 256 GB HBM3E
    # Blackwell Ultra keeps Blackwell's SM and its bf16 tensor-core rate per SM (NVIDIA Technical Blog 'Inside
    # NVIDIA Blackwell Ultra', 2025-08: the gains are NVFP4 and attention): without published training runs it
    # takes B200's fitted fraction of its own peak, not the default for unmeasured GPUs
    "B300": "B200",
    "GB300": "B200",
}
ETA_COMP_DEFAULT = Constant(
    "eta_comp[other]",
    0.45,
    "fraction of peak",
    "estimate for GPUs without measurements (B200, MI300X): the low end of measured Hopper runs",
)
WIDTH_K = Constant(
    "width_k",
    2.0,
    "hidden size at half efficiency per (peak FLOP/s / HBM B/s)",
    "docs/model.md section 3: a block's element-wise ops move ~120 h bytes per token (forward and backward) "
    "against 72 h^2 GEMM FLOPs, h_half = 1.7 eta I (k ~1.3); narrow GEMMs add more (A100 fp16 cuBLASLt 38% at "
    "1024^3, 82% at 16384^3, Azure AI-benchmarking-guide ND A100 v4)",
)
LOGITS_PASS_BYTES = Constant(
    "logits_pass_bytes",
    24.0,
    "HBM bytes per token per vocabulary entry per micro-step",
    "estimate: fp32 logits written (4), log-softmax read and written (8), loss read (4), gradient written and "
    "read by the output GEMM (8)",
)

ATTENTION_COST = Constant(
    "attention_cost",
    0.67,
    "x the time of dense FLOPs, per counted attention FLOP (12 L h s per token)",
    "causal masking halves the work FlashAttention does (Dao 2023, masked tiles skipped) and its kernels reach "
    "50-73% of peak against ~80% for GEMMs (FlashAttention-2, A100): 0.5 x 0.8 / 0.6",
)
FRAMEWORK_EFFICIENCY_PRIOR = {
    "fsdp": Constant(
        "framework_efficiency[fsdp]", 1.0, "x eta_comp", "reference: eta_comp is measured on PyTorch FSDP runs"
    ),
    "deepspeed": Constant(
        "framework_efficiency[deepspeed]",
        1.0,
        "x eta_comp",
        "prior: the same kernels; fitted to DeepSpeed runs (Megatron-DeepSpeed kernels, older fused ops)",
    ),
}

# ---- overlap of communication with compute, and a fixed per-micro-step cost ----
OVERLAP_PRIOR = {
    "deepspeed": Constant(
        "overlap[deepspeed]",
        0.3,
        "share of the shorter phase hidden",
        "DeepSpeed #2928 fit 0.27; ZeRO++ gains imply <= 22-36% of the ZeRO-3 step exposed",
    ),
    "fsdp": Constant(
        "overlap[fsdp]",
        0.8,
        "share of the shorter phase hidden",
        "PyTorch FSDP prefetches the next all-gather (BACKWARD_PRE); torchtitan 97% weak scaling 8 -> 128 H100",
    ),
}
FRAMEWORKS = tuple(OVERLAP_PRIOR)
STEP_OVERHEAD_PRIOR = {
    fw: Constant(
        f"step_overhead_s[{fw}]",
        0.02,
        "s per micro-step",
        "estimate: kernel launches, data loading and Python per micro-step (not measured directly; fitted)",
    )
    for fw in FRAMEWORKS
}

COLLECTIVE_OVERHEAD_PRIOR = {
    "deepspeed": Constant(
        "collective_overhead_s[deepspeed]",
        1e-4,
        "s per collective call",
        "estimate: ZeRO-3's Python hooks fetch and release parameters per nn.Linear; 'ZeRO3 launches too many "
        "all_gathers' (deepspeedai/DeepSpeed#5047); fitted",
    ),
    "fsdp": Constant(
        "collective_overhead_s[fsdp]",
        1e-4,
        "s per collective call",
        "estimate: FSDP's per-unit pre/post hooks and stream waits (one call per wrapped block); fitted",
    ),
}

# Host time per rank of the group and per gradient tensor: a Python loop over the world size.
RANK_OVERHEAD_PRIOR = {
    "deepspeed": Constant(
        "rank_overhead_s[deepspeed]",
        4e-6,
        "s per rank per gradient tensor",
        "measured: before each gradient bucket's reduce-scatter DeepSpeed ZeRO-3 slices every tensor of the bucket "
        "once per rank in Python and concatenates the slices (reduce_scatter_coalesced in "
        "runtime/comm/coalesced_collectives.py, called by stage3's __avg_scatter_grads, deepspeedai/DeepSpeed "
        "2022-2026): 2-5 us per rank and tensor at 256-1,024 ranks and 1-20 tensors, typically 3.5-4.3 "
        "(bench/bench_deepspeed_rank_loop.py, torch 2.13 on this project's CPU); fitted. Multi-node qgZ "
        "reduces its weight matrices by all-to-all (all_to_all_quant_reduce) and loops over its 1-D tensors "
        "only. Its all-gathers loop over the ranks too when one call gathers several tensors (a weight with "
        "its bias, prefetching): not counted",
    ),
    "fsdp": Constant(
        "rank_overhead_s[fsdp]",
        0.0,
        "s per rank per gradient tensor",
        "PyTorch FSDP reduces a flat buffer per unit in one call, without a Python loop per tensor (FSDP1 "
        "chunks the flat gradient per rank, ~1.4 us per rank per unit: not counted; FSDP2 one copy-in)",
    ),
}
TENSORS_PER_LAYER = Constant(
    "parameter_tensors_per_layer",
    10.0,
    "parameter tensors per transformer block",
    "a Llama block holds 9 (q, k, v, o, gate, up and down weights, two RMSNorm weights), a GPT block with "
    "biases 12 (four Linear weights and biases, two LayerNorms' weights and biases); the embedding, final "
    "norm and head add 3 per model",
)
VECTOR_TENSORS_PER_LAYER = Constant(
    "vector_tensors_per_layer",
    5.0,
    "1-D parameter tensors per transformer block",
    "a Llama block holds 2 (its RMSNorm weights), a GPT block with biases 8 (four biases, two LayerNorms' "
    "weights and biases); the final norm adds 1",
)

# ---- ZeRO++ quantisation kernels (memory-bound roofline) ----
ZEROPP_QWZ_BYTES = Constant(
    "qwz_kernel_bytes_per_param",
    6.0,
    "HBM bytes per parameter per micro-step",
    "estimate: dequantise each gathered weight twice (forward, backward): read int8 1 B + write bf16 2 B",
)
ZEROPP_QGZ_BYTES = Constant(
    "qgz_kernel_bytes_per_param",
    5.0,
    "HBM bytes per parameter per micro-step",
    "estimate: quantise the gradient (read 2 B, write 0.5 B) and dequantise-reduce the received shards (~2.5 B)",
)
KERNEL_HBM_EFFICIENCY = Constant(
    "quantisation_kernel_hbm_efficiency",
    0.5,
    "fraction of HBM bandwidth",
    "estimate: element-wise kernels with block scales reach about half of peak HBM bandwidth",
)

# ---- CPU / NVMe offload (ZeRO-Offload, ZeRO-Infinity) ----
CPU_ADAM_BYTES_PER_PARAM = Constant(
    "cpu_adam_host_bytes_per_param",
    180.0,
    "host DRAM bytes per parameter per optimizer step (effective)",
    "CPU-Adam is memory-bound on the host (fp32 weight, gradient, m, v read, three written: ~30 B at peak "
    "bandwidth): DeepSpeed CPU-Adam ran 11.6B in 8.2 s (deepspeedai/DeepSpeed#735, 1.4e9/s) on a DGX-2 class "
    "host of 256 GB/s peak DRAM: 180 B per parameter effective",
)
HOST_DRAM_GB_PER_S = Constant(
    "host_dram_gb_per_s_default",
    400.0,
    "GB/s per host",
    "estimate for hosts the catalog does not describe: 2 sockets x 8 DDR4-3200 / DDR5-4800 channels (410-614)",
)
OFFLOAD_GRAD_BYTES = Constant(
    "offload_grad_bytes",
    4.0,
    "bytes per parameter per micro-step, GPU to host",
    "DeepSpeed stage3.py: gradient partitions cast to fp32 and copied to pinned host memory",
)
OFFLOAD_PARAM_BYTES = Constant(
    "offload_param_bytes",
    4.0,
    "bytes per parameter per optimizer step, host to GPU",
    "DeepSpeed stage3.py: updated fp32 partitions copied back to the GPU",
)
NVME_OPTIMIZER_BYTES = Constant(
    "nvme_optimizer_bytes",
    24.0,
    "bytes per parameter per optimizer step",
    "ZeRO-Infinity: fp32 master, momentum and variance (12 B) read and written back",
)
NVME_GB_PER_S = Constant(
    "nvme_gb_per_s_per_node", 25.0, "GB/s per node", "estimate: 8 NVMe Gen4 drives at ~3-6 GB/s each, mixed read/write"
)
PCIE_HOST_EFFICIENCY = Constant(
    "pcie_host_efficiency",
    0.8,
    "fraction of the x16 raw rate",
    "H2D copies: 55.4 GB/s measured on H200 Gen5 x16 of 63 raw (github:stas00/ml-engineering network/README.md)",
)

# ---- memory model (docs/model.md section 4; Korthikanti et al. 2022, 'Reducing Activation Recomputation') ----
BYTES_MODEL_STATES = Constant(
    "bytes_per_param_states",
    16.0,
    "bytes per parameter, sharded over all GPUs",
    "ZeRO paper (Rajbhandari et al. 2020): 2 bf16 weights + 2 grads + 12 fp32 Adam states",
)
BYTES_STATES_OFFLOADED = Constant(
    "bytes_per_param_states_offloaded",
    4.0,
    "bytes per parameter on the GPU, sharded, with the optimizer offloaded",
    "ZeRO-Offload: bf16 weights (2) and gradients (2) stay on the GPU; fp32 master and Adam states on the host",
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
    "framework_reserve", 1.5, "GiB per GPU", "estimate: CUDA context (~0.5 GiB) plus NCCL buffers (~0.5-1 GiB)"
)
USABLE_HBM_FRACTION = Constant(
    "usable_hbm_fraction",
    0.92,
    "fraction of HBM",
    "estimate: allocator fragmentation; ZeRO++ ran 138B with hpZ on 384 V100-32GB (DeepSpeed ZeRO++ blog), which a "
    "0.90 fraction with a 2 GiB reserve would reject",
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
GPU_PCIE_GEN = {"V100-32GB": 3, "A100-40GB": 4, "A100-80GB": 4}  # the rest are PCIe 5 parts (datasheets)

# ---- inference (weight streaming, docs/model.md section 7) ----
DRAM_USABLE_FRACTION = Constant(
    "dram_usable_fraction", 0.90, "fraction of DRAM for weights", "estimate: OS, framework and pinned buffers take ~10%"
)
ACTIVATION_BYTES = Constant(
    "activation_bytes", 2.0, "bytes per activation element", "fp16/bf16 activations (inference all-reduces)"
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
