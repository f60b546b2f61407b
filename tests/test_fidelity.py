"""The compute model of docs/model.md section 3 (per-operation, per-architecture) and the sharding, stack and
precision inputs: terms by hand, and the measured directions and sizes of published pairs (each cited)."""

from __future__ import annotations

import json

import pytest

from planner.catalog.load import load_catalog
from planner.model import performance as perf
from planner.model.calibration import Calibration
from planner.model.parallelism import Parallelism
from planner.model.workload import Cluster, cluster_frame, training

CATALOG = load_catalog()
# Llama-3-8B: 32 blocks of h 4096, 8 of 32 KV heads, SwiGLU FFN 14336 (catalogs/models.csv)
H, F, L, R = 4096, 14336, 32, 8 / 32


def predicted(gpu, gpus, per_node, gbps=3200.0, model="Llama-3-8B", micro_batch=2, cal=None, **parallel):
    """tokens/s per GPU and the evaluated row of one configuration, through the planner's own path."""
    par = Parallelism(framework="fsdp", **({"checkpointing": "full"} | parallel))
    work = training(CATALOG, model=model, micro_batch=micro_batch, parallelism=par)
    row = perf.evaluate(cluster_frame(CATALOG, work, [Cluster(gpu, gpus, per_node, gbps, "ib")]), cal).iloc[0]
    return row["tokens_per_s_point"] / row["gpus"], row


# ---------------------------------------------------------------- terms by hand


def test_elementwise_bytes_are_counted_op_by_op():
    """A Llama block per token, forward: eager runs two RMSNorms at 36 B/element, rotary on q and k at 20 B, two
    residual adds at 6 B, the head transposes at 4 B, SiLU x gate at 10 B per FFN element; torch.compile fuses
    each into one read and write (4, 4, 4, 4 and 6 B). Backward moves twice the forward's bytes."""
    eager = 2 * 36 * H + 20 * H * (1 + R) + 2 * 6 * H + 4 * H + 10 * F
    fused = 2 * 4 * H + 4 * H * (1 + R) + 2 * 4 * H + 4 * H + 6 * F
    assert float(perf.elementwise_bytes_per_token(H, F, R, True, "eager")) == pytest.approx(3 * eager)
    assert float(perf.elementwise_bytes_per_token(H, F, R, True, "compile")) == pytest.approx(3 * fused)
    # a GPT block (LayerNorm and GELU are single kernels already): compile saves only the residual adds
    gpt_eager, gpt_fused = 2 * 4 * H + 2 * 6 * H + 4 * H + 4 * 4 * H, 2 * 4 * H + 2 * 4 * H + 4 * H + 4 * 4 * H
    assert float(perf.elementwise_bytes_per_token(H, 4 * H, 1, False, "eager")) == pytest.approx(3 * gpt_eager)
    assert float(perf.elementwise_bytes_per_token(H, 4 * H, 1, False, "compile")) == pytest.approx(3 * gpt_fused)


def test_the_block_shape_comes_from_the_model_row():
    """Llama-3-8B's parameters are reproduced by a gated FFN (three matrices), so it is gated; its linear FLOPs
    per token are twice its linear parameters."""
    f, r, gated = perf.block_shape(8.03e9, L, H, 32, 128256, F, 8)
    assert (float(f), float(r), bool(gated)) == (F, R, True)
    linear_params = L * (H * H * (2 + 2 * R) + 3 * H * F)
    assert float(perf.linear_flops_per_token(H, F, R, True)) * L == pytest.approx(2 * linear_params)


def test_hybrid_sharding_traffic_and_memory_by_hand():
    """HSDP over 8 nodes of 8 with the node as the shard group: gathers and reduce-scatters stay on NVLink; each
    node's NICs carry the gradient all-reduce across the 8 replicas, 2 x P x 2 B x 7/8 (a ring all-reduce of its
    GPUs' shards); full sharding carries 6 P x 63/64. Model states are sharded over 8 GPUs, not 64."""
    _, full = predicted("H100-SXM", 64, 8)
    _, hybrid = predicted("H100-SXM", 64, 8, sharding="hybrid")
    p = full["params"]
    assert full["bytes_per_domain_per_step"] == pytest.approx(6 * p * 63 / 64)
    assert hybrid["bytes_per_domain_per_step"] == pytest.approx(2 * p * 2 * 7 / 8)
    assert hybrid["bytes_per_gpu_nvlink_per_step"] == pytest.approx(6 * p * 7 / 8)
    states = 16 * p * (1 / 8 - 1 / 64) / 2**30  # bf16 weights + fp32 master, gradients and Adam moments
    assert hybrid["memory_per_gpu_gib"] - full["memory_per_gpu_gib"] == pytest.approx(states)
    assert hybrid["collectives_per_step"] == full["collectives_per_step"] + (L + 1)  # an all-reduce per unit


def test_fp8_all_gather_moves_one_byte_per_low_precision_weight():
    """FSDP2 with fp8 all-gather (torchao, tensorwise) gathers the linear weights as fp8: 1 B instead of 2 for
    the 87% of Llama-3-8B's parameters in its linear layers; the embedding and head stay bf16."""
    _, bf16 = predicted("H100-SXM", 64, 8, precision="fp8")
    _, gathered = predicted("H100-SXM", 64, 8, precision="fp8", fp8_allgather=True)
    p = bf16["params"]
    share = L * (H * H * (2 + 2 * R) + 3 * H * F) / p
    assert gathered["bytes_per_domain_per_step"] == pytest.approx(p * (2 * (2 - share) + 2) * 63 / 64)
    assert gathered["t_gemm_s"] == pytest.approx(bf16["t_gemm_s"])  # the same GEMMs: only the gathers shrink


def test_the_low_precision_share_runs_at_its_own_peak():
    """fp8 GEMMs run at the fp8 peak (2x on Hopper) times the architecture's fp8/bf16 efficiency ratio; the
    logits GEMM and attention stay bf16."""
    _, bf16 = predicted("H100-SXM", 8, 8)
    _, fp8 = predicted("H100-SXM", 8, 8, precision="fp8")
    cal = Calibration.default()
    logits = bf16["tokens_per_gpu"] * 6 * H * 128256 / (989e12 * bf16["gemm_efficiency"])
    linear = bf16["t_gemm_s"] - logits
    ratio = cal.lowp_ratio_for("hopper")
    assert fp8["t_gemm_s"] == pytest.approx(logits + linear * 989 / (1979 * ratio))
    assert fp8["t_attention_s"] == pytest.approx(bf16["t_attention_s"])


def test_a_gpu_without_the_precision_is_refused(run):
    result = run("predict", "--model", "Llama-3-8B", "--gpu", "A100", "--gpus", "8", "--gpus-per-node", "8",
                 "--node-gbps", "100", "--micro-batch", "1", "--precision", "fp8")  # fmt: skip
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "A100-80GB has no fp8 tensor-core peak" in result.stderr and len(result.stderr.splitlines()) == 1


def test_a_shard_group_must_divide_the_gpus(run):
    result = run("predict", "--model", "Llama-3-8B", "--gpu", "H100", "--gpus", "64", "--gpus-per-node", "8",
                 "--node-gbps", "3200", "--micro-batch", "1", "--framework", "fsdp", "--sharding", "hybrid",
                 "--shard-gpus", "12")  # fmt: skip
    assert result.exit_code == 2 and "--shard-gpus 12 must divide --gpus 64" in result.stderr
    hybrid_deepspeed = run("predict", "--model", "Llama-3-8B", "--gpu", "H100", "--gpus", "64", "--gpus-per-node",
                           "8", "--node-gbps", "3200", "--micro-batch", "1", "--sharding", "hybrid")  # fmt: skip
    assert hybrid_deepspeed.exit_code == 2 and "modelled for PyTorch FSDP" in hybrid_deepspeed.stderr


def test_a_configuration_that_does_not_fit_gets_no_throughput(run):
    """70B on 16 H100: 16 B per parameter of model states alone is 65 GiB per GPU; the answer is how far over,
    not a throughput."""
    result = run("predict", "--model", "Llama-2-70B", "--gpu", "H100", "--gpus", "16", "--gpus-per-node", "8",
                 "--node-gbps", "3200", "--micro-batch", "1", "--json")  # fmt: skip
    assert result.exit_code == 1 and result.stdout == ""
    assert "does not fit: the model needs" in result.stderr and "GiB over" in result.stderr


def test_an_unmeasured_architecture_is_named_in_predict(run):
    args = ["predict", "--model", "Llama-3-8B", "--gpu", "Rubin", "--gpus", "8", "--gpus-per-node", "8"]
    text = run(*args, "--node-gbps", "3200", "--micro-batch", "1").stdout
    assert "warning: Rubin (rubin): no training measurement of this architecture" in text
    assert "runs of each measured architecture predicted from the others" in text
    measured = run(*args[:5], "B200", *args[6:], "--node-gbps", "3200", "--micro-batch", "1").stdout
    assert "no training measurement" not in measured
    data = json.loads(run(*args, "--node-gbps", "3200", "--micro-batch", "1", "--json").stdout)
    assert data["range_group"] == "unmeasured architecture"


# ---------------------------------------------------------------- published comparisons


def test_h100_and_h200_share_their_compute():
    """On the issue's identical configuration (Llama-3-8B, 32 GPUs, 4 per node, 1,600 Gbps IB, micro-batch 4,
    full checkpointing) H200 differs from H100 only by HBM size and bandwidth: published H200/H100 training
    speed-ups are 1.135-1.17 (MLPerf Training v4.0/v4.1 Llama-2-70B LoRA, docs/model.md section 3)."""
    h100, a = predicted("H100-SXM", 32, 4, gbps=1600.0, micro_batch=4)
    h200, b = predicted("H200", 32, 4, gbps=1600.0, micro_batch=4)
    k = Calibration.default().width_k  # the one GEMM ceiling of GH100, rolled off by each GPU's balance point
    width = {g: H / (H + k * 989e12 / (hbm * 1e9)) for g, hbm in (("H100", 3350), ("H200", 4800))}
    assert a["gemm_efficiency"] / width["H100"] == pytest.approx(b["gemm_efficiency"] / width["H200"])
    assert 1.05 <= h200 / h100 <= 1.3


def test_single_node_ranking_of_the_gpus():
    """Llama-3-8B on one 8-GPU node (torch.compile, per-op checkpointing, batch 1 x 8192): A100 < MI300X < H100
    < H200 < B200, as published single-node runs rank them (torchao's MI300X/H100 0.87; MLPerf v5.0 B200/H200
    ~2.1; docs/model.md section 3)."""
    speeds = {g: predicted(g, 8, 8, micro_batch=1, checkpointing="op", stack="compile")[0]
              for g in ("A100-80GB", "MI300X", "H100-SXM", "H200", "B200")}  # fmt: skip
    assert list(speeds) == sorted(speeds, key=speeds.get)
    assert 0.75 <= speeds["MI300X"] / speeds["H100-SXM"] < 1.0


@pytest.mark.parametrize(
    ("model", "gpus", "per_node", "gbps", "micro_batch", "checkpointing", "measured"),
    [
        # torchtitan benchmarks/llama3_h100_202412_torchtitan.md@b5bcd76: 5762 -> 6667 tokens/s/GPU on 8 H100
        ("Llama-3-8B", 8, 8, 3200.0, 2, "op", 6667 / 5762),
        # IBM, pytorch.org/blog/maximizing-training-throughput (2024-05): MFU 0.37 -> 0.45 (7B), 0.32 -> 0.38
        # (70B) on 464 H100
        ("Llama-2-7B", 464, 8, 3200.0, 2, "none", 0.45 / 0.37),
        ("Llama-2-70B", 464, 8, 3200.0, 2, "full", 0.38 / 0.32),
    ],
)
def test_torch_compile_gains_what_was_measured(model, gpus, per_node, gbps, micro_batch, checkpointing, measured):
    eager, _ = predicted("H100-SXM", gpus, per_node, gbps, model, micro_batch, checkpointing=checkpointing)
    compiled, _ = predicted("H100-SXM", gpus, per_node, gbps, model, micro_batch, checkpointing=checkpointing,
                            stack="compile")  # fmt: skip
    gain = compiled / eager - 1
    assert 0.35 * (measured - 1) <= gain <= 1.6 * (measured - 1)


@pytest.mark.parametrize(
    ("gpu", "precision", "allgather", "measured"),
    [
        # torchtitan (as above): compile 6667 -> compile + Float8 8532 on 8 H100
        ("H100-SXM", "fp8", False, 8532 / 6667),
        # torchao docs/source/workflows/training.md@36027d82: Llama-3-8B, 8 GPUs, tensorwise with fp8 all-gather
        # +25.0%, rowwise +10.1% (H100); tensorwise +14.7% (MI300X)
        ("H100-SXM", "fp8", True, 1.2503),
        ("H100-SXM", "fp8-rowwise", False, 1.1005),
        ("MI300X", "fp8", True, 1.1468),
    ],
)
def test_fp8_gains_what_was_measured(gpu, precision, allgather, measured):
    kw = dict(micro_batch=1, checkpointing="op", stack="compile")
    bf16, _ = predicted(gpu, 8, 8, **kw)
    low, _ = predicted(gpu, 8, 8, precision=precision, fp8_allgather=allgather, **kw)
    gain = low / bf16 - 1
    assert 0.35 * (measured - 1) <= gain <= 2.5 * (measured - 1)


def test_hybrid_sharding_gains_on_a_slow_network():
    """oumi PR #213 (github:oumi-ai/oumi@b9c6cc89): a 1.7B Llama on 4 nodes of 4 A100, HSDP 74.4 vs full shard
    55.3 samples/s (1.34x): on a slow network keeping the gathers inside the node wins."""
    par = dict(framework="fsdp", checkpointing="full")
    work = training(CATALOG, params=1.71e9, layers=24, hidden=2048, heads=32, vocab=50272, ffn_hidden=8192,
                    micro_batch=16, seq_len=2048, parallelism=Parallelism(**par))  # fmt: skip
    hybrid = training(CATALOG, params=1.71e9, layers=24, hidden=2048, heads=32, vocab=50272, ffn_hidden=8192,
                      micro_batch=16, seq_len=2048, parallelism=Parallelism(**par, sharding="hybrid"))  # fmt: skip
    cluster = [Cluster("A100-40GB", 16, 4, 50.0, "tcp")]
    full_row = perf.evaluate(cluster_frame(CATALOG, work, cluster)).iloc[0]
    hybrid_row = perf.evaluate(cluster_frame(CATALOG, hybrid, cluster)).iloc[0]
    ratio = hybrid_row["tokens_per_s_point"] / full_row["tokens_per_s_point"]
    assert 1.1 <= ratio <= 1.6


def test_per_gpu_throughput_falls_with_gpu_count_at_fixed_batch():
    """MosaicML llm-foundry (scripts/train/benchmarking/README.md@c90b9b31): MPT-7B on H100 at 6 x 2048 tokens
    per GPU ran 10,475 -> 10,119 -> 9,670 tokens/s/GPU on 128, 256, 512 GPUs (-7.7%): every collective's ring
    grows with the GPUs, and its latency is exposed."""
    speeds = [predicted("H100-SXM", n, 8, model="Llama-2-7B", micro_batch=6, checkpointing="none")[0]
              for n in (128, 256, 512)]  # fmt: skip
    assert speeds[0] > speeds[1] > speeds[2]
    assert 0.02 <= 1 - speeds[2] / speeds[0] <= 0.2


def test_a_hybrid_plan_whose_states_overflow_the_group_says_so(run):
    """70B with hybrid sharding over one 8-GPU node: 16 B per parameter over 8 GPUs is 140 GB, whatever the
    GPU count (more GPUs add replicas): the answer names the shard group, not the activations."""
    result = run("plan", "examples/llama-70b-h100.yaml", "-q", "--set", "workload.sharding=hybrid")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "with hybrid sharding its states are sharded over each group of one scale-up domain" in result.stderr
    assert "raise workload.shard_gpus" in result.stderr
    wider = run("plan", "examples/llama-70b-h100.yaml", "-q", "--set", "workload.sharding=hybrid", "--set",
                "workload.shard_gpus=32")  # fmt: skip
    assert wider.exit_code == 0, wider.output
