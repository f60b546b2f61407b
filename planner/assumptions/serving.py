"""The serving model's constants (planner/model/engine.py, planner/model/queueing.py; docs/model.md section 10).
Listed in `planner serve`'s own report, not in every plan's (planner.assumptions.all_constants)."""

from __future__ import annotations

from planner.assumptions.constant import Constant

VLLM_BATCH_DEFAULTS = "github:vllm-project/vllm:vllm/engine/arg_utils.py (EngineArgs.get_batch_defaults, 2025)"
NCCL_LL = "github:NVIDIA/nccl:src/graph/tuning.cc@01afd20a (baseLat and hwLat, Ring, LL protocol)"

# What a precision stores per weight and per cached K/V element, and which peak it computes at. fp4 weights
# (NVFP4 / MXFP4) are served with an fp8 KV cache, as TensorRT-LLM's and vLLM's fp4 recipes do.
PRECISIONS: dict[str, tuple[float, float, str]] = {
    "bf16": (2.0, 2.0, "peak_bf16_tflops"),
    "fp8": (1.0, 1.0, "peak_fp8_tflops"),
    "fp4": (0.5, 1.0, "peak_fp4_tflops"),
}

HBM_EFFICIENCY = Constant(
    "serve_hbm_efficiency",
    0.75,
    "fraction of peak HBM bandwidth a decode step's weight and KV reads reach",
    "estimate: memory-bound decode GEMV and paged-attention kernels in vLLM / TensorRT-LLM reach ~70-80% of peak",
)
DECODE_COMPUTE_EFFICIENCY = Constant(
    "serve_decode_compute_efficiency",
    0.45,
    "fraction of the precision's peak TFLOPs at large decode batches",
    "estimate: below prefill (skinny GEMMs, attention over the KV cache, MoE grouped GEMMs)",
)
PREFILL_COMPUTE_EFFICIENCY = Constant(
    "serve_prefill_compute_efficiency",
    0.55,
    "fraction of the precision's peak TFLOPs in prefill",
    "estimate: a forward pass of full-size GEMMs, near training MFU without the backward pass's overheads",
)
STEP_OVERHEAD_MS = Constant(
    "serve_step_overhead",
    2.0,
    "ms per engine step",
    "estimate: scheduler, sampling and kernel-launch time per step with CUDA graphs (vLLM V1 / TensorRT-LLM)",
)
TOKEN_BUDGET = Constant(
    "serve_token_budget",
    8192,
    "tokens per engine step (decode and prefill chunks together)",
    VLLM_BATCH_DEFAULTS + ": max_num_batched_tokens for the OpenAI server on GPUs of 70 GiB or more",
)
MAX_SEQUENCES = Constant(
    "serve_max_sequences",
    1024,
    "sequences decoded together at most",
    VLLM_BATCH_DEFAULTS + ": max_num_seqs for the OpenAI server on GPUs of 70 GiB or more",
)
MAX_UTILISATION = Constant(
    "serve_max_prefill_utilisation",
    0.95,
    "share of a replica's time its prefill queue may be busy",
    "estimate: operating headroom; a queue nearer saturation has waits without bound (what a missing TTFT "
    "target would otherwise allow)",
)
ALLREDUCE_BASE_US = Constant("serve_allreduce_base_latency", 3.6, "us per all-reduce", NCCL_LL + ": baseLat[Ring][LL]")
ALLREDUCE_STEP_US = Constant(
    "serve_allreduce_nvlink_step_latency", 0.47, "us per ring step", NCCL_LL + ": hwLat[NVLINK][Ring][LL]"
)
ACTIVATION_BYTES = Constant(
    "serve_activation_bytes", 2.0, "bytes per activation element", "bf16 activations between layers"
)
EXPERT_DISPATCH_BYTES = Constant(
    "serve_expert_dispatch_bytes",
    1.0,
    "bytes per element sent to an expert",
    "DeepEP / SGLang dispatch tokens in fp8 and combine them in bf16 (github:deepseek-ai/DeepEP README)",
)


def listed() -> list[Constant]:
    """The serving constants, for the serve report's assumptions."""
    return [v for v in globals().values() if isinstance(v, Constant)]
