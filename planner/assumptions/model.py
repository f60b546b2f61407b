"""Every default constant of the performance model, in one place, each with its unit and source.

The model code (planner/model/performance.py) takes the fitted ones through a Calibration object (the GEMM and
FlashAttention efficiencies per GPU architecture, width_k, eta_net, overlap, latency_scale, overheads): the priors
here are where the fit starts and where data are thin.
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

# ---- compute: per architecture, not per GPU SKU (docs/model.md section 3) ----
# A step is its operations: GEMMs (the linear layers and the logits) at a sustained fraction of the GPU's dense
# peak for their precision, the attention core at FlashAttention's rate, element-wise ops (norms, activations,
# residuals, rotary, casts) and the optimizer at HBM bandwidth, and, in eager PyTorch, the host's kernel
# dispatch when it is slower than the GPU. Efficiency belongs to the architecture (the tensor cores and the
# kernels written for them), so GPUs on one architecture share it (H100 and H200: the same GH100 compute) and
# differ by their peaks and HBM. The fitted GEMM efficiency starts from these priors: the maximum achievable
# matmul FLOPS of a brute-force shape search (MAMF) over the dense peak, which a training step's shapes and
# launches run below.
MAMF = "github:stas00/ml-engineering compute/accelerator/README.md@744d01e18b795126 (MAMF table)"
GEMM_EFFICIENCY_PRIOR = {
    "volta": Constant(
        "gemm_efficiency[volta]",
        0.75,
        "fraction of dense peak",
        "estimate: no MAMF published; DeepSpeed #2928's fitted whole-step 0.43 on V100 implies >= 0.6 for its GEMMs",
    ),
    "ampere": Constant("gemm_efficiency[ampere]", 0.87, "fraction of dense peak", MAMF + ": A100 SXM 271.2 of 312"),
    "hopper": Constant(
        "gemm_efficiency[hopper]",
        0.80,
        "fraction of dense peak",
        MAMF + ": H100 SXM 794.5 of 989 ('H200 is the same'); GH200 0.84",
    ),
    "blackwell": Constant(
        "gemm_efficiency[blackwell]",
        0.78,
        "fraction of dense peak",
        MAMF + ": B200 1745 of 2250; GB200 1822 of 2500 (0.73)",
    ),
    "blackwell-ultra": Constant(
        "gemm_efficiency[blackwell-ultra]", 0.79, "fraction of dense peak", MAMF + ": B300 1769 of 2250"
    ),
    "rubin": Constant(
        "gemm_efficiency[rubin]",
        0.75,
        "fraction of dense peak",
        "estimate: announced, no measurement; Blackwell's, rounded down",
    ),
    "cdna3": Constant(
        "gemm_efficiency[cdna3]",
        0.54,
        "fraction of dense peak",
        "AMD ROCm blog 'Measuring max "
        "achievable FLOPs part 2' (2025-02-28): MI300X BF16 708 of 1307 (clock-limited under dense "
        "MFMA load); MAMF 668 (0.51), MI325X 785 (0.60)",
    ),
    "cdna4": Constant(
        "gemm_efficiency[cdna4]", 0.68, "fraction of dense peak", MAMF + ": MI355X 1565 of 2300 (ROCm 7.0.2)"
    ),
    "gaudi3": Constant("gemm_efficiency[gaudi3]", 0.60, "fraction of dense peak", "estimate: no MAMF published"),
    "other": Constant(
        "gemm_efficiency[other]",
        0.60,
        "fraction of dense peak",
        "estimate for a GPU row without an architecture: below every measured one but CDNA3",
    ),
}
# An architecture without measurements of its own that keeps a measured one's compute units takes that one's
# fitted efficiencies (scaled by their GEMM priors); its range stays that of an unmeasured architecture.
# Blackwell Ultra: Blackwell's SM and bf16 tensor-core rate per SM, the gains are NVFP4 and the softmax's SFU rate
# (NVIDIA Technical Blog 'Inside NVIDIA Blackwell Ultra', 2025-08).
ARCHITECTURE_FAMILY = {"blackwell-ultra": "blackwell"}


def by_architecture(table: dict, architecture: str) -> float:
    """A per-architecture prior's value for `architecture`, else the table's "other" entry."""
    return (table.get(architecture) or table["other"]).value


# Low-precision GEMMs reach a different share of their (higher) peak: MAMF fp8 / fp8 peak over MAMF bf16 / bf16
# peak, by architecture (H100 1402.6 of 1979 against 794.5 of 989: 0.88; B200 3432.5 of 4500 against 1745 of
# 2250: 0.98; MI300X AMD MAF fp8 1273 of 2615 against bf16 708 of 1307: 0.90).
LOWP_EFFICIENCY_RATIO = {
    "hopper": Constant("fp8_efficiency_ratio[hopper]", 0.88, "x the bf16 GEMM efficiency", MAMF + ": H100 FP8"),
    "blackwell": Constant("fp8_efficiency_ratio[blackwell]", 0.98, "x the bf16 GEMM efficiency", MAMF + ": B200 FP8"),
    "blackwell-ultra": Constant(
        "fp8_efficiency_ratio[blackwell-ultra]", 0.95, "x the bf16 GEMM efficiency", MAMF + ": B300 FP8 3353 of 4500"
    ),
    "cdna3": Constant("fp8_efficiency_ratio[cdna3]", 0.90, "x the bf16 GEMM efficiency", "AMD ROCm blog MAF part 2"),
    "other": Constant(
        "fp8_efficiency_ratio[other]", 0.90, "x the bf16 GEMM efficiency", "estimate: Hopper's and CDNA3's"
    ),
}
FP4_EFFICIENCY_RATIO = Constant(
    "fp4_efficiency_ratio",
    0.75,
    "x the fp8 GEMM efficiency",
    "estimate: no FP4 MAMF published; torchtitan NVFP4 Llama3-8B on 4 Blackwell GPUs 30,040 vs MXFP8 28,084 tokens/s "
    "per GPU (1.07x for twice the peak: nvfp4.md@b5bcd76)",
)
FP4_BF16_TAIL = Constant(
    "fp4_bf16_tail",
    0.15,
    "share of the blocks kept in bf16 by an NVFP4 recipe",
    "NVIDIA, 'Pretraining Large Language Models with NVFP4' (arXiv:2509.25149): the last ~15% of the linear layers "
    "stay in BF16 for stability; torchtitan's NVFP4 recipe keeps the last ~15% of decoder blocks and the head in "
    "bf16 (torchtitan/components/quantization/nvfp4.md@73aed7f6)",
)
ROWWISE_GEMM_FACTOR = Constant(
    "fp8_rowwise_gemm_factor",
    0.85,
    "x the fp8 GEMM efficiency",
    "estimate: rowwise-scaled FP8 GEMMs run slower than tensorwise on Hopper (torchao float8 README: rowwise "
    "+10% vs tensorwise +25% end to end on Llama3-8B, 8 H100)",
)
# Which linear layers run in low precision: torchao's auto-filter keeps small GEMMs in bf16 (the casts cost
# more than they save): rowwise skips N <= 2048 or K <= 1024 or (N <= 4096 and K <= 2048); tensorwise
# skips K <= 4096 and N <= 1024 (github:pytorch/ao torchao/float8/float8_linear_utils.py@36027d82). The
# output layer (logits) stays in bf16, as torchtitan's float8 converter excludes it.
HBM_EFFICIENCY = {
    "volta": Constant(
        "hbm_efficiency[volta]",
        0.85,
        "fraction of peak HBM bandwidth",
        "estimate: STREAM-class kernels on V100 reach ~80-90% (BabelStream results)",
    ),
    "ampere": Constant(
        "hbm_efficiency[ampere]",
        0.88,
        "fraction of peak HBM bandwidth",
        "estimate: A100 BabelStream ~1.7-1.8 of 2.0 TB/s",
    ),
    "hopper": Constant(
        "hbm_efficiency[hopper]",
        0.87,
        "fraction of peak HBM bandwidth",
        "Voltage Park H100 benchmark (github:aigatech/vpbenchmarking): device-to-device 2,903 of 3,350 GB/s",
    ),
    "blackwell": Constant(
        "hbm_efficiency[blackwell]", 0.85, "fraction of peak HBM bandwidth", "estimate: Hopper's, rounded down"
    ),
    "blackwell-ultra": Constant(
        "hbm_efficiency[blackwell-ultra]", 0.85, "fraction of peak HBM bandwidth", "estimate: Blackwell's"
    ),
    "cdna3": Constant(
        "hbm_efficiency[cdna3]",
        0.77,
        "fraction of peak HBM bandwidth",
        "Azure ND MI300X v5 stream ~4.1 of 5.3 TB/s (samuel-bohman/AI-benchmarking-guide)",
    ),
    "other": Constant("hbm_efficiency[other]", 0.80, "fraction of peak HBM bandwidth", "estimate"),
}
# Element-wise HBM traffic of a transformer block: bytes per element per forward pass of each op, in bf16, counted
# kernel by kernel (docs/model.md section 3). A block is Llama-shaped (RMSNorm, rotary, SwiGLU) when its FFN is
# gated, else GPT-shaped (LayerNorm, GELU, learned or ALiBi positions). Eager PyTorch runs each op as its own
# kernels: RMSNorm as written in Llama's reference code (upcast to fp32, square, mean, scale, downcast, weight:
# 36 B per element; F.rms_norm composes the same kernels), rotary as rotate_half (multiply, slice, negate,
# concatenate, multiply, add: 20 B per element of q and k), residual adds (read two, write one: 6 B), SiLU and
# the gate product (10 B per FFN element); LayerNorm and GELU are single kernels in eager PyTorch already (4 B).
# torch.compile (Inductor) fuses each chain into one read and one write. The backward pass moves about twice the
# forward's bytes (the saved input and the incoming gradient read, the gradient written).
COUNTED = "counted kernel by kernel for bf16 activations (docs/model.md section 3)"
ELEMENTWISE_OP_BYTES = {
    (op, stack): Constant(f"elementwise_bytes[{op},{stack}]", value, "HBM bytes per element per forward pass", COUNTED)
    for op, stack, value in (
        ("rmsnorm", "eager", 36.0), ("rmsnorm", "compile", 4.0),
        ("layernorm", "eager", 4.0), ("layernorm", "compile", 4.0),
        ("rotary", "eager", 20.0), ("rotary", "compile", 4.0),
        ("residual", "eager", 6.0), ("residual", "compile", 4.0),
        ("swiglu", "eager", 10.0), ("swiglu", "compile", 6.0),
        ("gelu", "eager", 4.0), ("gelu", "compile", 4.0),
        ("layout", "eager", 4.0), ("layout", "compile", 4.0),  # attention's head transposes, per element of h
    )
}  # fmt: skip
ELEMENTWISE_BACKWARD_RATIO = Constant(
    "elementwise_backward_ratio",
    2.0,
    "x the forward pass's element-wise bytes",
    "an element-wise op's backward reads its saved input and the incoming gradient and writes the gradient: about "
    "twice the forward's read and write",
)
# FlashAttention's sustained share of the dense bf16 peak, forward and backward, on the work a causal mask leaves
# (half the counted 12 L h s FLOPs per token: masked tiles are skipped).
FA2 = "Dao, FlashAttention-2 (arXiv:2307.08691) Figs. 4-7, causal, head dim 128, forward + backward"
FA3 = "Shah et al., FlashAttention-3 (arXiv:2407.08608) Figs. 5-6, causal, head dim 128"
CAUSAL_SHARE = Constant(
    "causal_attention_share",
    0.5,
    "of the counted attention FLOPs",
    "a causal mask leaves the lower triangle of the score matrix: FlashAttention skips the masked tiles",
)
TRITON_ATTENTION_RATIO = Constant(
    "triton_attention_ratio",
    0.55,
    "x the architecture's FlashAttention efficiency",
    FA2.split(" Figs")[0] + ": FlashAttention-2 runs 1.3-2.5x faster than the Triton FlashAttention (the kernel "
    "MPT's attn_impl 'triton' ran, with its ALiBi bias), 1/1.8 at the middle",
)
FA3_ATTENTION_RATIO = Constant(
    "fa3_attention_ratio",
    1.6,
    "x the architecture's FlashAttention-2 class efficiency",
    FA3 + ": FlashAttention-3 runs the forward 1.5-2.0x and the backward 1.5-1.75x faster than FlashAttention-2 on "
    "H100 (bf16, head dim 128); Blackwell's FlashAttention-4 and cuDNN kernels are taken alike",
)
MOE_GEMM_RATIO = Constant(
    "moe_gemm_ratio",
    0.7,
    "x the architecture's GEMM efficiency, for the routed experts' GEMMs",
    "prior: grouped GEMMs over many small experts (a few thousand tokens each) with the router, top-k and "
    "token-count synchronisation around them run below a dense GEMM of the same FLOPs (Megatron-Core MoE: "
    "DeepSeek-V3 at 1,233 TFLOPs on GB300, about half its dense peak, arXiv:2603.07685); fitted",
)
MOE_LAYER_OVERHEAD_S = Constant(
    "moe_layer_overhead_s",
    2e-4,
    "s per MoE layer per pass, not overlapped",
    "estimate: a dropless MoE layer waits for the per-expert token counts on the host (a device-to-host sync "
    "before sizing the grouped GEMM and the all-to-all) and launches the router, top-k, permutation and "
    "un-permutation kernels around it (Megatron-Core MoEAlltoAllTokenDispatcher); fitted",
)
CP_ATTENTION_PENALTY = Constant(
    "cp_attention_penalty",
    0.3,
    "extra attention time x (cp - 1) / cp under context parallelism",
    "prior: ring attention splits each rank's attention into cp blocks with a softmax correction between them, "
    "and a causal mask balances only when the sequence is sharded in mirrored chunks; an unbalanced ring's "
    "slowest rank does 2 cp / (cp + 1) of the mean (up to 1.0 extra); fitted",
)
UNFUSED_SCORE_BYTES = Constant(
    "unfused_score_bytes",
    30.0,
    "HBM bytes per attention-score element, forward and backward",
    "counted for Megatron-LM's unfused attention in fp16 (Korthikanti et al. 2022 sec. 4, the 5 a s^2 b term): "
    "forward writes QK^T (2), the fused scale-mask-softmax reads and writes it (4), dropout reads it and writes "
    "its output and mask (5), the PV GEMM reads it (2); backward reads and writes each again with the "
    "gradients (17); the recomputed forward adds the forward's 13",
)
ATTENTION_EFFICIENCY_PRIOR = {
    "volta": Constant(
        "attention_efficiency[volta]",
        0.25,
        "fraction of dense peak",
        "estimate: no FlashAttention on sm70; fused-softmax attention is memory-bound",
    ),
    "ampere": Constant(
        "attention_efficiency[ampere]",
        0.55,
        "fraction of dense peak",
        FA2 + ": A100 160-190 of 312 TFLOPs at sequence 2K-16K",
    ),
    "hopper": Constant(
        "attention_efficiency[hopper]",
        0.40,
        "fraction of dense peak",
        FA2 + ": H100 ~330-340 of "
        "989 (FlashAttention-2 and PyTorch's SDPA flash backend); " + FA3 + ": ~500-600 of 989; "
        "the mix of both in published runs",
    ),
    "blackwell": Constant(
        "attention_efficiency[blackwell]",
        0.40,
        "fraction of dense peak",
        "estimate: Hopper's (cuDNN and FlashAttention-4 forward ~1,000-1,600 of 2,250, backward lower)",
    ),
    "blackwell-ultra": Constant(
        "attention_efficiency[blackwell-ultra]",
        0.40,
        "fraction of dense peak",
        "estimate: Blackwell's (Blackwell Ultra doubles the SFU rate of the softmax)",
    ),
    "cdna3": Constant(
        "attention_efficiency[cdna3]",
        0.28,
        "fraction of dense peak",
        "estimate: Composable Kernel "
        "FlashAttention-2 on MI300X, forward ~400-500 of 1,307, backward lower (ROCm blogs 2024)",
    ),
    "other": Constant("attention_efficiency[other]", 0.30, "fraction of dense peak", "estimate"),
}
CAST_BYTES = Constant(
    "fp8_cast_bytes",
    4.0,
    "HBM bytes per low-precision GEMM input element per pass (amax, scale, cast)",
    "estimate: read the bf16 input (2 B) and write the fp8 copy (1 B), plus a share of the amax reduction; "
    "torchao fuses them under torch.compile",
)
SCALED_CAST_FACTOR = Constant(
    "scaled_cast_factor",
    1.5,
    "x fp8_cast_bytes",
    "estimate: rowwise, MX and NVFP4 block scaling reduce amax per row or per 16-32-element block and write the "
    "scales, and the backward casts the transposed operand separately (NVFP4 also Hadamard-transforms the weight "
    "gradient's inputs)",
)
OPTIMIZER_BYTES = Constant(
    "optimizer_bytes_per_param",
    34.0,
    "HBM bytes per local parameter per optimizer step",
    "fused AdamW on the GPU's shard: read fp32 master weight, gradient (fp32), momentum, variance (16 B), write the "
    "three states (12 B), the bf16 weight copy (2 B) and a gradient zeroing pass (4 B)",
)
KERNELS_PER_LAYER = {
    "eager": Constant(
        "kernels_per_layer[eager]",
        40.0,
        "GPU kernels per transformer block per forward pass",
        "estimate: a Llama block in eager PyTorch launches ~30-50 kernels forward (norms, rotary, "
        "casts, flash-attention, GEMMs, adds); backward ~2x",
    ),
    "compile": Constant(
        "kernels_per_layer[compile]",
        14.0,
        "GPU kernels per transformer block per forward pass",
        "estimate: Inductor fuses the element-wise ops into ~10-15 kernels besides the GEMMs",
    ),
}
DISPATCH_US = Constant(
    "kernel_dispatch_us",
    6.0,
    "us of host time per kernel launch",
    "estimate: PyTorch eager op dispatch plus the CUDA launch (5-10 us per op; a 1B model at sequence 512 on one "
    "B200 runs 3.9x faster compiled: github:stas00/ml-engineering training/performance/README.md@744d01e)",
)
WIDTH_K = Constant(
    "width_k",
    1.5,
    "GEMM width at half efficiency per (peak FLOP/s / HBM B/s)",
    "a GEMM of narrow dimension h (the hidden size) runs at h / (h + h_half) of its ceiling, h_half = width_k x the "
    "GPU's balance point (a roofline): A100 fp16 cuBLASLt 38% at 1024^3, 82% at 16384^3 (Azure "
    "AI-benchmarking-guide ND A100 v4); training GEMMs have a long token dimension, so less: estimate",
)
LOGITS_PASS_BYTES = Constant(
    "logits_pass_bytes",
    24.0,
    "HBM bytes per token per vocabulary entry per micro-step",
    "estimate: fp32 logits written (4), log-softmax read and written (8), loss read (4), gradient written and "
    "read by the output GEMM (8)",
)

FRAMEWORK_EFFICIENCY_PRIOR = {
    "fsdp": Constant(
        "framework_efficiency[fsdp]",
        1.0,
        "x the GEMM efficiency",
        "reference: the GEMM efficiency is measured on PyTorch FSDP runs",
    ),
    "deepspeed": Constant(
        "framework_efficiency[deepspeed]",
        1.0,
        "x the GEMM efficiency",
        "prior: the same kernels; fitted to DeepSpeed runs (Megatron-DeepSpeed kernels, older fused ops)",
    ),
    "megatron": Constant(
        "framework_efficiency[megatron]",
        1.0,
        "x the GEMM efficiency",
        "prior: the same cuBLAS/cuDNN GEMMs through Transformer Engine; fitted to Megatron-LM / NeMo runs",
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
    "megatron": Constant(
        "overlap[megatron]",
        0.8,
        "share of the shorter phase hidden",
        "Megatron-Core overlaps the gradient reduce-scatter with the backward pass and the parameter all-gather "
        "with the forward (overlap_grad_reduce, overlap_param_gather) and pipeline sends with compute; prior "
        "as FSDP's prefetching; fitted",
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
    "megatron": Constant(
        "collective_overhead_s[megatron]",
        1e-5,
        "s per collective call",
        "estimate: Megatron launches its collectives from C++ autograd functions and bucketed DDP hooks, without "
        "per-module Python fetch/release; fitted",
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
    "megatron": Constant(
        "rank_overhead_s[megatron]",
        0.0,
        "s per rank per gradient tensor",
        "Megatron's DDP reduces contiguous gradient buckets in one call each (megatron/core/distributed)",
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
    "bytes per (token x hidden) for one live layer, where the model's shape is unknown",
    "Korthikanti et al. 2022, eq. 1: s*b*h*(34 + 5*a*s/h), for GPT's plain 4h MLP, multi-head attention and "
    "dropout; with the shape known the same count is taken term by term (activation_bytes_per_sbh in "
    "planner/model/performance.py): norms 4, attention 2 + 4q + 4qr (input, Q, K and V, output), MLP 2 + 6f/h gated "
    "or 2 + 4f/h plain, no dropout masks (2026 recipes train without dropout)",
)
ACT_OP_SAC_SHARE = Constant(
    "activation_share_op_sac",
    0.5,
    "share of a layer's activations kept",
    "estimate: torchtitan's per-op policy saves the attention output and every other matmul output and recomputes "
    "the element-wise ops: about half of a layer's (github:pytorch/torchtitan "
    "torchtitan/distributed/activation_checkpoint.py)",
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

# ---- parallel layouts (docs/model.md section 8) ----
BYTES_ZERO1_KEPT = Constant(
    "bytes_per_param_zero1_kept",
    6.0,
    "bytes per parameter on every data-parallel rank",
    "Megatron-LM distributed optimizer with bf16 weights and fp32 gradients: 2 + 4 kept, the 12 of fp32 master "
    "weights and Adam moments sharded over the data-parallel ranks: 6 + 12/d (github:NVIDIA/Megatron-LM "
    "docs/source/api-guide/dist_optimizer.md; without it, DDP, 18)",
)
BYTES_ZERO1_SHARDED = Constant(
    "bytes_per_param_zero1_sharded",
    12.0,
    "bytes per parameter, sharded over the data-parallel ranks",
    "fp32 master weights (4) and Adam's two moments (8): as BYTES_ZERO1_KEPT",
)
BYTES_ZERO2_KEPT = Constant(
    "bytes_per_param_zero2_kept",
    2.0,
    "bytes per parameter on every data-parallel rank",
    "ZeRO stage 2 (Rajbhandari et al. 2020 sec. 5.2, P_os+g): the bf16 weights stay whole, gathered once per "
    "optimizer step and kept through its micro-steps; each micro-step's gradients are reduce-scattered into a "
    "sharded accumulator, so the master weights, Adam moments and gradients (12 + 4 fp32, or 12 + 2) are sharded: "
    "2 + 16/d. Llama 3's FSDP ('shards optimizer states and gradients, but for model shards we do not reshard "
    "after forward', arXiv:2407.21783 sec. 3.3.2); FSDP's SHARD_GRAD_OP, Megatron-FSDP's optim_grads",
)
TP_COLLECTIVES_PER_LAYER_PASS = Constant(
    "tp_collectives_per_layer_pass",
    4.0,
    "collectives per transformer block per pass",
    "Korthikanti et al. 2022 sec. 4.2.2: with sequence parallelism each block runs an all-gather before and a "
    "reduce-scatter after attention and the MLP in the forward pass (the backward pass the converse), each of "
    "the block's activations b s h; without it two all-reduces of the same bytes on the ring",
)
EP_ALL_TO_ALLS_PER_LAYER_PASS = Constant(
    "ep_all_to_alls_per_layer_pass",
    2.0,
    "all-to-alls per MoE layer per pass",
    "dispatch of each token's hidden state to its top-k experts and the combine back (Megatron-Core "
    "MoEAlltoAllTokenDispatcher); the backward pass the same two",
)
TP_OVERLAP_HIDDEN = Constant(
    "tp_overlap_hidden",
    0.5,
    "share of tensor-parallel communication hidden behind GEMMs",
    "estimate: Transformer Engine's userbuffer overlap / PyTorch AsyncTP split each GEMM to hide its all-gather "
    "and reduce-scatter; torchtitan's AsyncTP benchmark (benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md) "
    "gains 4-16% of the step (Llama-3 8B and 70B at TP 8, bf16 and fp8) over vanilla TP; half the TP time hidden "
    "is an estimate, not fitted",
)
MEGATRON_BUCKET_PARAMS = Constant(
    "megatron_ddp_bucket_params",
    4e7,
    "parameters per gradient bucket",
    "Megatron-Core DDP bucket_size default max(40,000,000, 1,000,000 x dp) (megatron/core/distributed/"
    "distributed_data_parallel.py)",
)
DENSE_BATCH_TOKENS_PUBLISHED = Constant(
    "dense_batch_tokens_published",
    2048 * 8192,
    "tokens per optimizer step",
    "the largest batch a published dense pre-training run used: Llama 3 405B's final 2,048 sequences of 8,192 "
    "tokens (arXiv:2407.21783 sec. 3.4.1 and Table 4: 4M, then 8M, then 16M tokens). Above it a plan's batch is "
    "not known to converge, and a plan without a global batch says so",
)
LAYOUT_SIMPLICITY_MARGIN = Constant(
    "layout_simplicity_margin",
    0.03,
    "share of throughput",
    "planner policy: a layout with more model-parallel GPUs (tp pp cp ep) is chosen over a simpler one only when it "
    "is this much faster at the same node count; smaller gains are inside the model's out-of-publication error "
    "(5-12% median) and every added dimension costs engineering and failure modes",
)
MOE_PERMUTE_BYTES = Constant(
    "moe_permute_bytes",
    16.0,
    "HBM bytes per token per hidden element per routed copy per MoE layer",
    "counted: the token permutation before the experts and the un-permutation after read and write each bf16 "
    "element (2 x 4 bytes), and the backward pass the same",
)
ACTIVATION_P2P_BYTES = Constant(
    "activation_p2p_bytes",
    2.0,
    "bytes per activation element sent between pipeline stages",
    "bf16 activations forward and their gradients backward (Megatron p2p_communication)",
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


# ---- the KV cache (planner fleet's serving capacity and planner serve's engine) ----
KV_CACHE_BYTES = Constant("kv_cache_bytes", 2.0, "bytes per cached K or V element", "bf16/fp16 KV cache")
