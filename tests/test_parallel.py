"""Parallel layouts (docs/model.md section 8): each dimension's traffic, placement, bubble and memory checked by
hand, the layout rules, the planner's choice of layout, and the trends a better cluster must never reverse."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from planner.assumptions import model as A
from planner.base.errors import UsageError
from planner.base.units import GIB
from planner.catalog.load import load_catalog
from planner.model import layout
from planner.model import performance as perf
from planner.model.calibration import Calibration
from planner.model.parallelism import Parallelism
from planner.model.workload import Cluster, cluster_frame, training

CATALOG = load_catalog([])
H100 = {"gpu": "H100", "gpus_per_node": 8, "node_gbps": 3200, "fabric": "ib"}


def _evaluate(model="Llama-3.1-405B", gpus=1024, micro_batch=1, grad_accum=16, cluster=None, **lay):
    parallelism = Parallelism(framework=lay.pop("framework", "megatron"), sharding=lay.pop("sharding", "zero1"), **lay)
    work = training(CATALOG, model=model, micro_batch=micro_batch, parallelism=parallelism, grad_accum=grad_accum)
    c = Cluster(**{**H100, **(cluster or {})}, gpus=gpus)
    return perf.evaluate(cluster_frame(CATALOG, work, [c]), Calibration.default()).iloc[0]


def test_bubble_is_pp_minus_one_over_vp_m():
    d = layout.dims({"tp": 8, "pp": 16, "vp": 4, "cp": 1, "ep": 1, "gpus": 16384})
    assert float(layout.bubble(d, 16)) == pytest.approx(15 / (4 * 16))
    assert float(layout.bubble(layout.dims({**dict.fromkeys(("tp", "pp", "vp", "cp", "ep"), 1), "gpus": 8}), 4)) == 0


def test_slowest_stage_sets_the_pace():
    """126 layers over 16 stages of 4 virtual stages: 2 layers per virtual stage at most, 8 per rank, and the
    last rank runs the loss too. Balanced (Llama 3's split): 126 layers + embedding + loss over 16 x 8 virtual
    stages is one each; the middle ranks' 8 layers set the pace unless the loss weighs more than a layer."""
    d = {"pp": np.array(16.0), "vp": np.array(4.0)}
    split = lambda layers, head=0.7, **kw: [float(x) for x in layout.pipeline_split(layers, head, {**d, **kw})]  # noqa: E731
    assert split(126) == [8, 1]
    assert split(128) == [8, 1]
    assert split(130) == [12, 1]  # ceil(130 / 64) = 3 per virtual stage
    assert split(126, vp=np.array(8.0), pb=np.array(1.0)) == [8, 0]
    assert split(126, head=2.4, vp=np.array(8.0), pb=np.array(1.0)) == [7, 1]  # a small model's large vocabulary
    assert split(126, pp=np.array(1.0), vp=np.array(1.0)) == [126, 1]
    assert [layout.balanced_split_legal(126, 16, vp) for vp in (8, 4, 3)] == [True, True, False]
    assert not layout.balanced_split_legal(126, 1, 1)


def test_placement_of_strided_groups():
    # 8 TP ranks fill an 8-GPU domain: a data-parallel group (stride 8) has one member per domain
    assert [float(x) for x in layout.placement(128, 8, 8)] == [1.0, 128.0, 8.0]
    # stride 2 in a 72-GPU domain: 36 members per domain, a group of 36 stays inside
    assert [float(x) for x in layout.placement(36, 2, 72)] == [36.0, 1.0, 2.0]


def test_tensor_parallel_bytes_by_hand():
    """Llama-3.1-405B, TP 8 on one node, micro-batch 1 of 8192 tokens, full recompute: 4 collectives per layer and
    pass over 3 passes and all 126 layers, each (tp-1)/tp of b s h bf16 activations; all on NVLink."""
    row = _evaluate(gpus=8, tp=8, grad_accum=1, checkpointing="full")
    act = 1 * 8192 * 16384 * 2
    expected = 4 * 3 * 126 * act * 7 / 8
    assert row["tp_bytes_per_gpu_nvlink_per_step"] == pytest.approx(expected)
    assert row["tp_bytes_per_domain_per_step"] == 0.0


def test_tensor_parallel_beyond_the_domain_crosses_the_network():
    inside = _evaluate(gpus=16, tp=8, grad_accum=1)
    across = _evaluate(gpus=16, tp=16, grad_accum=1)
    assert inside["tp_bytes_per_domain_per_step"] == 0 and across["tp_bytes_per_domain_per_step"] > 0
    # a ring's node crossing carries as many bytes as each NVLink hop (NCCL spreads it over the node's 8 NICs):
    # 3,200 Gbps x eta_net per node against 450 GB/s x eta_nvlink per GPU
    assert across["t_comm_tp_s"] > inside["t_comm_tp_s"]


def test_pipeline_sends_by_hand():
    """TP 8 x PP 2 on 16 GPUs (2 nodes): stage neighbours are 8 ranks apart, in the other node; each rank sends
    a micro-batch's b s h / tp bf16 activations forward and their gradient back, vp times; nothing else crosses
    (dp = 1, so no gradient exchange)."""
    row = _evaluate(gpus=16, tp=8, pp=2, vp=2, grad_accum=4)
    per_rank = 2 * 2 * 8192 / 8 * 16384 * 2
    assert row["bytes_per_domain_per_step"] == pytest.approx(8 * per_rank)


def test_distributed_optimizer_memory_by_hand():
    """8B on 8 GPUs, dp 8, zero1 with fp32 gradients: 6 + 12/8 bytes per parameter (Megatron's table)."""
    full = _evaluate(model="Llama-3-8B", gpus=8, grad_accum=1, grad_bytes=4.0, checkpointing="full")
    params = 8030261248
    states = params * (6 + 12 / 8)
    rest = full["memory_per_gpu_gib"] * GIB - states
    bf16 = _evaluate(model="Llama-3-8B", gpus=8, grad_accum=1, grad_bytes=2.0, checkpointing="full")
    assert bf16["memory_per_gpu_gib"] * GIB - rest == pytest.approx(params * (4 + 16 / 8))
    assert rest > 0


def test_zero2_memory_and_traffic_by_hand():
    """ZeRO-2 (Rajbhandari et al. 2020, P_os+g): 2 bytes of bf16 weights kept whole, 16/d sharded with fp32
    gradients (14/d with bf16); its gradients cross every micro-step and the weights once per step, where the
    distributed optimizer (zero1) sends both once per step: (g + 2/m) against (g + 2)/m per micro-step."""
    assert float(layout.states_bytes_per_param("zero2", "none", 128, 4.0)) == pytest.approx(2 + 16 / 128)
    assert float(layout.states_bytes_per_param("zero2", "none", 128, 2.0)) == pytest.approx(2 + 14 / 128)
    two_nodes = {"gpus": 16, "model": "Llama-3-8B", "checkpointing": "full", "framework": "fsdp"}
    zero2 = _evaluate(**two_nodes, sharding="zero2", grad_accum=4)
    zero1 = _evaluate(**{**two_nodes, "framework": "megatron"}, sharding="zero1", grad_accum=4)
    ratio = zero2["bytes_per_domain_per_step"] / zero1["bytes_per_domain_per_step"]
    assert ratio == pytest.approx((2 + 2 / 4) / ((2 + 2) / 4))
    with pytest.raises(UsageError, match="zero2"):
        Parallelism(sharding="zero2")  # DeepSpeed is modelled as ZeRO-3


def test_activations_are_counted_from_the_models_shape():
    """Korthikanti et al.'s count without dropout masks: GPT's shape (plain 4h MLP, multi-head attention) stores
    4 + 2 + 4 + 4 + 18 = 32 bytes per token and hidden unit; Llama-3.1-405B (SwiGLU 53248 = 3.25h, 8 of 128 KV
    heads): 4 + 2 + 4 + 0.25 + 2 + 19.5 = 31.75."""
    gpt = {"hidden": np.array([12288.0]), "heads": np.array([96.0]), "layers": np.array([96.0]),
           "head_dim": np.array([np.nan]), "rope_head_dim": np.array([np.nan])}  # fmt: skip
    dense = {"f_active": np.array([4 * 12288.0]), "gated": np.array([False]), "top_k": 0.0, "moe_layers": 0.0}
    assert float(perf.activation_bytes_per_sbh(gpt, dense, 1.0)[0]) == pytest.approx(32.0)
    llama = {**gpt, "hidden": np.array([16384.0]), "heads": np.array([128.0]), "layers": np.array([126.0])}
    swiglu = {**dense, "f_active": np.array([53248.0]), "gated": np.array([True])}
    assert float(perf.activation_bytes_per_sbh(llama, swiglu, 8 / 128)[0]) == pytest.approx(31.75)


def test_llama3s_own_layout_by_megatrons_schedule():
    """Llama 3 405B (arXiv:2407.21783 sec. 3.3.2, Table 4): TP 8 x PP 16 with one layer per virtual stage and the
    embedding and loss in the split (VP 8, balanced), no activation checkpointing, 8K sequences, 16M-token
    batches, 16,384 H100 at 400G per GPU. At m = 16 rank 1 runs all of its 16 x 8 one-layer chunk forwards before
    its first backward (W = min(128, 2 x 14 + 7 x 16 + 1)) and holds 128 layers (rank 0, whose first chunk is the
    embedding, 112): 128 x 31.75 s h / tp bytes of activations + the distributed optimizer's 4 + 16/128 bytes per
    local parameter + fp32 logits + the reserve = 77.7 GiB, over the 73.2 usable: the model says Llama 3's own
    layout does not fit (Meta trained it; the memory check is that conservative). Its speed if it did: MFU in
    the paper's 41-43% band. With ZeRO-2 (2 + 16/d) it fits."""
    row = _evaluate(gpus=16384, grad_accum=16, tp=8, pp=16, vp=8, pp_balanced=1, checkpointing="none", grad_bytes=2.0)
    layer = 31.75 * 8192 * 16384 / 8
    states = 405853388800 / 128 * (4 + 16 / 128)
    logits = 4 * 8192 * 128256 / 8
    expected = (128 * layer + states + logits) / GIB + A.FRAMEWORK_RESERVE_GIB.value
    assert row["memory_per_gpu_gib"] == pytest.approx(expected, rel=1e-6) and not row["fits_memory"]
    assert 0.38 <= row["mfu"] <= 0.45
    zero2 = _evaluate(gpus=16384, grad_accum=16, tp=8, pp=16, vp=8, pp_balanced=1, checkpointing="none",
                      grad_bytes=2.0, sharding="zero2")  # fmt: skip
    assert zero2["fits_memory"]
    d = layout.dims({"tp": 8, "pp": 16, "vp": 8, "cp": 1, "ep": 1, "gpus": 16384, "pp_balanced": 1})
    assert float(layout.held_layers(126, d, 16)) == 128 and float(layout.held_layers(126, d, 32)) == 141


def test_sequence_parallel_splits_activations_and_pipeline_holds_in_flight():
    """No recompute: activations per GPU scale as 1/tp, and 1F1B's first stage holds min(pp, m) micro-batches of
    its L/pp layers. Megatron-Core's interleaved schedule runs 2 (pp-1) + (vp-1) pp + 1 virtual-stage forwards
    before its first backward: with pp 4, vp 2 and m 8 that is 11 chunks of 32/8 layers, Korthikanti's
    (1 + 3/8) x 32; with m = pp = 4 all 8 chunks, the same 32 as 1F1B. Balanced, the first chunk holds the
    embedding in a layer's place: 34 units over 8 chunks do not divide, 30 layers + 2 do (4 per chunk), and of
    the 11 forwards 4 + 3 run chunk 0 (3 layers)."""
    layer_gib = 34 * 8192 * 4096 / 2**30  # one layer's activations, 34 s b h bytes (Korthikanti et al.)

    def activations(layers=32, **lay):
        d = {k: np.array(float(lay.get(k, 1))) for k in ("tp", "pp", "vp", "cp", "ep")} | {"pb": lay.get("pb", 0.0)}
        args = (8e9, 64, 8, 1, 8192, layers, 4096, 32, np.nan, "none")
        return perf.memory_per_gpu_gib(*args, sharding="zero1", layout_dims=d, grad_accum=lay.get("m", 1))

    assert activations(tp=2) < activations()
    assert activations(pp=4, m=8) - activations(pp=4, m=1) == pytest.approx((32 - 8) * layer_gib)
    assert activations(pp=4, vp=2, m=8) - activations(pp=4, m=8) == pytest.approx((44 - 32) * layer_gib)
    assert activations(pp=4, vp=2, m=4) == pytest.approx(activations(pp=4, m=4))
    held = 11 * 4 - 7  # 11 chunk forwards of 4 layers, 7 of them chunk 0 with 3
    balanced = activations(layers=30, pp=4, vp=2, m=8, pb=1.0) - activations(layers=30, pp=4, m=1)
    assert balanced == pytest.approx((held - 30 / 4) * layer_gib)


def test_layout_rules_are_checked_once():
    with pytest.raises(UsageError, match="tp 8 x pp 3"):
        Parallelism(framework="megatron", sharding="zero1", tp=8, pp=3).data_parallel(64)
    with pytest.raises(UsageError, match="ep 16 must divide"):
        Parallelism(framework="megatron", sharding="zero1", ep=16).data_parallel(8)
    with pytest.raises(UsageError, match="DeepSpeed ZeRO-3 is modelled as data parallelism only"):
        Parallelism(tp=2)
    with pytest.raises(UsageError, match="--vp"):
        Parallelism(framework="megatron", sharding="zero1", vp=2)
    assert Parallelism(framework="megatron", sharding="zero1", tp=8, pp=16).data_parallel(16384) == 128


def test_a_pipeline_needs_a_filled_schedule():
    d = layout.dims({"tp": 8, "pp": 16, "vp": 4, "cp": 1, "ep": 1, "gpus": np.array([16384, 32768])})
    ok, m = layout.legal(d, np.array([16384, 32768]), 1, 2048)
    assert list(ok) == [True, False] and list(m) == [16.0, 8.0]  # 8 micro-batches cannot fill 16 stages
    ok, _ = layout.legal(d, np.array([16384]), 1, None)
    assert not ok[0]  # without a global batch no pipeline is planned


def test_search_space_keeps_tp_inside_the_domain_and_divides_heads():
    work = training(CATALOG, model="Llama-3.1-405B", micro_batch=1)
    space = layout.search_space(work, 8, pipelines=True)
    assert {s["tp"] for s in space} == {1, 2, 4, 8}
    assert all(s["pp"] * s["vp"] <= 126 for s in space if not s["pp_balanced"])
    balanced = {(s["pp"], s["vp"]) for s in space if s["pp_balanced"]}
    assert balanced == {
        (2, 1),
        (2, 2),
        (2, 4),
        (2, 8),
        (4, 1),
        (4, 2),
        (4, 4),
        (4, 8),
        (8, 1),
        (8, 2),
        (8, 4),
        (8, 8),
        (16, 1),
        (16, 2),
        (16, 4),
        (16, 8),
        (32, 1),
        (32, 2),
        (32, 4),
    }  # 128 / (pp vp) whole
    moe = training(CATALOG, model="DeepSeek-V3", micro_batch=1)
    assert {s["ep"] for s in layout.search_space(moe, 72, pipelines=False)} == {1, 2, 4, 8, 16, 32, 64, 128}


def test_korthikanti_points_within_five_percent_out_of_source():
    """The eight Table 5 points of Korthikanti et al. 2022 (Calculon validates on them in sample, 3.65% mean) and
    the paper's two 2,240-GPU runs: the shipped validation's median with the whole paper left out of the fit."""
    lopo = Calibration.default().fit["leave_one_publication_out"]["per_source"]
    assert lopo["korthikanti2022-reducing-activation-recomputation"]["median"] <= 0.05


def _plan(run, path, *extra):
    return json.loads(run("plan", str(path), "--json", "-q", *extra).stdout)


SCENARIO = """
name: {name}
workload:
  model: {model}
  seq_len: {seq}
  micro_batches: [1]
  global_batch: {batch}
  checkpointing: {ckpt}
  framework: megatron
requirement:
  gpus: {gpus}
target_tflops: {target}
objective:
  kind: capex
constraints:
  gpus: [{gpu}]
  fabrics: [ib]
  max_nodes: 2048
"""


def test_plan_finds_a_llama3_like_layout_on_16k_h100(run, write):
    path = write("405b.yaml", SCENARIO.format(name="405B", model="Llama-3.1-405B", seq=8192, batch=2048,
                                              ckpt="full", gpus=16384, target=300, gpu="H100"))  # fmt: skip
    c = _plan(run, path)["choice"]
    # TP (with CP, next in Megatron's rank order) fills the 8-GPU NVLink domain; pipeline stages cross nodes
    assert c["tp"] * c["cp"] == 8 and c["pp"] >= 8 and c["dp"] * c["tp"] * c["pp"] * c["cp"] == 16384
    text = run("plan", str(path), "-q").stdout
    assert (
        f"parallel     TP {c['tp']} x PP" in text and "pipeline bubble" in text and "per node over the network" in text
    )


def test_the_16k_example_plans_a_llama3_like_layout_without_recompute(run):
    """The shipped 16k example (Llama 3's recipe: no recompute, 16M-token batches): the plan takes TP 8 inside the
    node, Llama 3's balanced interleaved pipeline of 16 stages and CP 2 (without CP Llama 3's own layout does
    not fit the memory check); with one 400G NIC per GPU predict finds NVIDIA's published H100 layout for this model
    (TP 8 x PP 8 x VP 8 x CP 2: Megatron-Bridge perf_recipes/llama/h100/llama31.py, NeMo model_configs_h100.csv)
    within the 38-43% MFU Llama 3 reports on 8,192-16,384 H100."""
    plan = json.loads(run("plan", "examples/llama-405b-16k-h100.yaml", "--json").stdout)
    c = plan["choice"]
    assert (c["tp"], c["pp"], c["pp_balanced"], c["cp"], c["dp"]) == (8, 16, True, 2, 64) and c["vp"] in (4, 8)
    assert c["checkpointing"] == "none"
    args = ["--model", "Llama-3.1-405B", "--gpu", "H100", "--gpus", "16384", "--gpus-per-node", "8", "--node-gbps",
            "3200", "--fabric", "ib", "--framework", "megatron", "--global-batch", "2048", "--micro-batch", "1",
            "--checkpointing", "none", "--json"]  # fmt: skip
    row = json.loads(run("predict", *args).stdout)
    assert (row["tp"], row["pp"], row["vp"], row["cp"]) == (8, 8, 8, 2) and 0.38 <= row["mfu"] <= 0.43


@pytest.mark.parametrize("model,seq,ckpt,target", [("Llama-3.1-405B", 8192, "full", 600),
                                                   ("DeepSeek-V3", 4096, "selective", 200)])  # fmt: skip
def test_nvl72_racks_plan_with_tp_and_ep_inside_the_domain(run, write, model, seq, ckpt, target):
    path = write("nvl72.yaml", SCENARIO.format(name=model, model=model, seq=seq, batch=1152, ckpt=ckpt, gpus=576,
                                               target=target, gpu="GB200"))  # fmt: skip
    plan = _plan(run, path)
    c = plan["choice"]
    assert c["gpus_per_node"] == 72 and c["tp"] * (c["ep"] if model == "DeepSeek-V3" else 1) <= 72
    assert plan["metrics"]["tp_bytes_per_domain_per_step"] == 0  # TP and EP never touch the scale-out network
    if model == "DeepSeek-V3":
        assert c["ep"] > 1


def _best(gpu="GB200", domain=72, gbps_per_gpu=400, hbm=None, model="DeepSeek-V3", seq=4096):
    from planner.answers.predict import best_layout

    parallelism = Parallelism(framework="megatron", sharding="zero1", checkpointing="selective")
    work = training(CATALOG, model=model, micro_batch=1, seq_len=seq, parallelism=parallelism)
    work = type(work)(**{**work.__dict__, "global_batch": 1152})
    cluster = Cluster(gpu, 576, domain, gbps_per_gpu * domain, "ib", scale_up_gb_per_s=900, scale_up_gpus=domain)
    return best_layout(CATALOG, work, cluster, Calibration.default())


def test_the_72_gpu_domain_beats_4_gpu_trays_for_a_moe_model():
    rack, trays = _best(domain=72), _best(domain=4)
    assert rack["tokens_per_s"] > trays["tokens_per_s"] * 1.05
    assert rack["ep"] > 4


@pytest.mark.parametrize("change", ["domain", "bandwidth"])
def test_a_better_cluster_never_lowers_the_best_layout(change):
    small, big = (_best(domain=8), _best(domain=72)) if change == "domain" else (_best(gbps_per_gpu=200), _best())
    assert big["tokens_per_s"] >= small["tokens_per_s"] * (1 - 1e-9)


def test_a_model_that_fits_gets_no_tensor_parallelism_it_does_not_need():
    """Llama-3-8B on 64 H100 fits data-parallel: the planner does not split it over TP."""
    from planner.answers.predict import best_layout

    work = training(CATALOG, model="Llama-3-8B", micro_batch=2,
                    parallelism=Parallelism(framework="megatron", sharding="zero1"))  # fmt: skip
    row = best_layout(CATALOG, work, Cluster("H100", 64, 8, 3200, "ib"), Calibration.default())
    assert row["tp"] == 1 and row["pp"] == 1


def test_predict_reports_the_layout(run):
    args = ["--model", "Llama-3.1-405B", "--gpu", "H100", "--gpus", "1024", "--gpus-per-node", "8"]
    args += ["--node-gbps", "3200", "--fabric", "ib", "--framework", "megatron", "--micro-batch", "1"]
    result = run("predict", *args, "--global-batch", "512")
    assert result.exit_code == 0 and "layout" in result.stdout and "layouts tried" in result.stdout
    fixed = run("predict", *args, "--tp", "8", "--pp", "8", "--vp", "4", "--grad-accum", "16", "--json")
    row = json.loads(fixed.stdout)
    assert (row["tp"], row["pp"], row["vp"], row["dp"]) == (8, 8, 4, 16)
    assert row["bubble"] == pytest.approx(7 / (4 * 16))
    bad = run("predict", *args, "--tp", "8", "--pp", "3")
    assert bad.exit_code != 0 and "Traceback" not in bad.output and "pp 3" in bad.output


def test_moe_flops_use_active_parameters():
    """DeepSeek-V3's model FLOPs per token are 6 x its ~37B active parameters, not 6 x 671B."""
    row = _evaluate(model="DeepSeek-V3", gpus=256, tp=1, pp=8, ep=32, grad_accum=8, checkpointing="selective")
    tokens = 4096 / 8  # this GPU's share of a micro-batch
    per_token = (row["model_flops_per_gpu"] / tokens - 12 * 61 * 128 * (128 + 64 / 2) * 4096) / 6  # MLA width
    assert 33e9 < per_token < 40e9
    assert A.MOE_GEMM_RATIO.value < 1


def test_more_memory_never_lowers_the_best_layout():
    """The same cluster with more HBM per GPU (nothing else changed): every layout that fitted still fits, so the
    best layout's throughput cannot fall; here more layouts fit and the best gets faster."""
    parallelism = Parallelism(framework="megatron", sharding="zero1", checkpointing="full")
    work = training(CATALOG, model="Llama-3.1-405B", micro_batch=1, global_batch=512, parallelism=parallelism)
    space = layout.search_space(work, 8, pipelines=True)
    frames = []
    for lay in space:
        w = work.with_parallelism(Parallelism(framework="megatron", sharding="zero1", checkpointing="full", **lay))
        d = layout.dims({**lay, "gpus": 1024})
        ok, m = layout.legal(d, 1024, 1, 512)
        if ok:
            frames.append(cluster_frame(CATALOG, type(w)(**{**w.__dict__, "grad_accum": int(m)}),
                                        [Cluster("H100", 1024, 8, 3200, "ib")]))  # fmt: skip
    import pandas as pd

    frame = pd.concat(frames, ignore_index=True)
    best = []
    for hbm in (80.0, 160.0):
        out = perf.evaluate(frame.assign(hbm_gib=hbm), Calibration.default())
        best.append(out.loc[out["fits_memory"], "tokens_per_s"].max())
    assert best[1] >= best[0] > 0


def test_plan_says_why_the_layout(run, write):
    path = write("405b.yaml", SCENARIO.format(name="405B", model="Llama-3.1-405B", seq=8192, batch=2048,
                                              ckpt="full", gpus=16384, target=300, gpu="H100"))  # fmt: skip
    text = run("plan", str(path), "-q").stdout
    assert "data parallelism alone does not fit" in text and re.search(r"TP [48] inside the 8-GPU NVLink domain", text)


@pytest.mark.parametrize("example", ["llama-405b-16k-h100.yaml", "llama-70b-h100.yaml", "deepseek-v3-nvl72.yaml"])
def test_screened_layouts_give_the_exhaustive_optimum(example, monkeypatch):
    """The layout screen (tables/buy._screen_layouts) only prunes: the priced table's best row is the one the
    unscreened table of every layout gives (same design, node count, layout and objective), and so is each
    server's best (the per-GPU comparison's)."""
    from pathlib import Path

    from planner.inputs.scenario import load_scenario
    from planner.tables import buy as cand

    scenario = load_scenario(Path(__file__).resolve().parent.parent / "examples" / example)
    screened_table = cand.build(CATALOG, scenario, Calibration.default()).feasible
    monkeypatch.setattr(cand, "_screen_layouts", lambda keys, *args: keys)
    exhaustive_table = cand.build(CATALOG, scenario, Calibration.default()).feasible
    screened, exhaustive = screened_table.iloc[0], exhaustive_table.iloc[0]
    columns = ["server", "nic", "nics_per_node", "switch", "n_lo", "micro_batch", "tp", "pp", "vp", "cp", "ep"]
    assert [screened[c] for c in columns] == [exhaustive[c] for c in columns]
    assert screened["objective_usd"] == pytest.approx(exhaustive["objective_usd"])
    per_server = [t.groupby("server")["objective_usd"].min() for t in (screened_table, exhaustive_table)]
    assert per_server[0].to_dict() == pytest.approx(per_server[1].to_dict())


def test_an_oversubscribed_fabric_only_where_the_layouts_traffic_fits_and_the_plan_says_so(run, write):
    """8,192 H100 for a 70B model with 1:1, 2:1 and 3:1 allowed: flat sharding's latency made 3:1 look free (issue
    26); with the layout chosen, an oversubscribed fabric is taken only at a layout whose traffic at the reduced
    rate still meets the target, and the plan names the bytes and the tier they cross."""
    path = write("70b.yaml", SCENARIO.format(name="70B", model="Llama-2-70B", seq=4096, batch=2048, ckpt="full",
                                             gpus=8192, target=140, gpu="H100")
                 + "  oversubscription: [1, 2, 3]\n")  # fmt: skip
    plan = _plan(run, path)
    c, m = plan["choice"], plan["metrics"]
    assert c["tp"] * c["pp"] > 1 and m["achieved_tflops_per_gpu"] >= 140
    text = run("plan", str(path), "-q").stdout
    assert "per node over the network" in text
    if c["oversubscription"] > 1:
        assert f"cross the {c['oversubscription']:g}:1 tier above the leaves" in text


def test_cloud_chooses_and_reports_a_layout(run, write):
    path = write(
        "cloud405.yaml",
        """
name: 405B rented
workload:
  model: Llama-3.1-405B
  seq_len: 8192
  micro_batches: [1]
  global_batch: 1024
  checkpointing: full
  framework: megatron
requirement:
  tokens: 100B
  days: 30
cloud:
  pricing: [ondemand]
  max_instances: 64
""",
    )
    result = run("cloud", str(path), "--json", "-q")
    choice = json.loads(result.stdout)["choice"]
    assert choice["layout"] and not choice["layout"].startswith("data parallel")  # 405B does not fit flat
    assert "layout TP" in run("cloud", str(path), "-q").stdout


def test_fleet_runs_carry_their_layout(run):
    from pathlib import Path

    example = str(Path(__file__).resolve().parent.parent / "examples" / "fleet-startup.yaml")
    job = "training[0].workload={model: Llama-3-70B, micro_batches: [1], framework: megatron, global_batch: 1024}"
    plan = json.loads(run("fleet", example, "--set", job, "--json", "-q", "--threads", "1").stdout)
    layouts = {r["job"]: r["layout"] for r in plan["jobs"]}
    assert layouts["pretrain-8b"].startswith("data parallel")  # DeepSpeed ZeRO-3: data parallel only
    assert layouts["pretrain-70b"]  # chosen per pool size, reported whichever it is
    text = run("fleet", example, "--set", job, "-q", "--threads", "1").stdout
    assert ("layout" in text) == (not layouts["pretrain-70b"].startswith("data parallel"))


def test_predict_takes_the_nvlink_bandwidth_of_a_domain_no_catalog_server_has(run):
    args = ["predict", "--model", "Llama-3-70B", "--gpu", "GB200", "--gpus", "64", "--gpus-per-node", "4"]
    args += ["--node-gbps", "1600", "--fabric", "ib", "--framework", "megatron", "--micro-batch", "1", "--tp", "4"]
    unknown = run(*args, "--json")
    given = run(*args, "--scale-up-gb-per-s", "900", "--json")
    assert json.loads(unknown.stdout)["t_comm_tp_s"] < json.loads(given.stdout)["t_comm_tp_s"]  # now counted
    assert "NVLink bandwidth unknown" in run(*args).stdout


@pytest.mark.parametrize(
    "extra,message",
    [(["--ep", "2"], "expert parallelism needs a MoE model"), (["--pp", "64"], "every (virtual) stage needs a layer")],
)
def test_a_layout_the_model_cannot_hold_is_refused_in_one_line(run, extra, message):
    args = ["predict", "--model", "Llama-3-8B", "--gpu", "H100", "--gpus", "64", "--gpus-per-node", "8"]
    result = run(*args, "--node-gbps", "400", "--fabric", "ib", "--framework", "megatron", "--micro-batch", "1", *extra)
    assert result.exit_code != 0 and message in result.output and "Traceback" not in result.output


def test_recompute_search_finds_llama3s_no_recompute_and_says_why(run, write):
    """checkpointing search on Llama 3's question: no recompute fits with TP 8 and a pipeline, so the
    planner takes it and says so; a TFLOPs/GPU target is refused with the search (it counts recomputed FLOPs)."""
    scenario = SCENARIO.format(name="405B", model="Llama-3.1-405B", seq=8192, batch=2048, ckpt="search", gpus=16384,
                               target=300, gpu="H100")  # fmt: skip
    refused = run("plan", str(write("target.yaml", scenario)), "-q")
    assert refused.exit_code != 0 and "min_tokens_per_s" in refused.output and "Traceback" not in refused.output
    plan = _plan(run, write("405b.yaml", scenario.replace("target_tflops: 300\n", "")))
    c = plan["choice"]
    assert c["checkpointing"] == "none" and c["tp"] == 8 and c["pp"] > 1
    assert any(w.startswith("recompute: none; the activations fit") for w in plan["why"])


FIXED_RATE = """
name: 70B at a fixed rate
workload:
  model: Llama-3-70B
  seq_len: 8192
  micro_batches: [1]
  global_batch: 512
  checkpointing: {ckpt}
  framework: {framework}
requirement:
  min_tokens_per_s: 400000
objective:
  kind: capex
constraints:
  gpus: [H100]
  fabrics: [ib]
  max_nodes: 128
"""


@pytest.mark.parametrize(
    "framework,modes", [("megatron", ("none", "selective", "full")), ("fsdp", ("none", "op", "full"))]
)
def test_recompute_search_equals_the_best_fixed_mode(run, write, framework, modes):
    """The search is exact: its plan costs what the cheapest of the plans with each mode fixed costs (70B at
    400k tokens/s on H100: the modes need different node counts and networks)."""
    fixed = []
    for mode in modes:
        result = run("plan", str(write(f"{mode}.yaml", FIXED_RATE.format(ckpt=mode, framework=framework))), "--json")
        if result.exit_code == 0:
            plan = json.loads(result.stdout)
            fixed.append((round(plan["cost"]["capex_usd"], 2), plan["choice"]["nodes"], mode))
    searched = _plan(run, write("search.yaml", FIXED_RATE.format(ckpt="search", framework=framework)))
    assert len({cost for cost, _, _ in fixed}) > 1, f"the modes cost alike: the test cannot tell them apart {fixed}"
    cost, nodes, mode = min(fixed)
    assert searched["cost"]["capex_usd"] == pytest.approx(cost)
    assert searched["choice"]["checkpointing"] in {m for c, _, m in fixed if c == cost}


def test_communication_advice_names_the_frameworks_own_remedy():
    """ZeRO++ is DeepSpeed's: a Megatron or FSDP step waiting on the network is not told to use it."""
    from planner.model import binding

    for framework, own in (("deepspeed", "ZeRO++"), ("fsdp", "hybrid sharding"), ("megatron", "NVLink domain")):
        for verdict in ("compute", "bandwidth"):
            text = binding.advice(verdict, 0.3, 1.0, framework=framework)
            assert own in text and (framework == "deepspeed") == ("ZeRO++" in text), (framework, text)


def test_a_plan_without_a_global_batch_warns_when_its_batch_exceeds_any_published(run):
    """The 70B/15T example sets no global batch: the plan's micro-batch x ranks x seq_len per step is above Llama 3
    405B's 16.8M tokens (2,048 x 8,192), the largest published dense batch, and the plan says so; a plan with a
    global batch does not."""
    plan = json.loads(run("plan", "examples/gpu-choice-70b-15t.yaml", "--json", "-q").stdout)
    c = plan["choice"]
    tokens = c["micro_batch"] * (c["dp"] or c["gpus"]) * 8192
    warned = [w for w in plan["why"] if w.startswith("no global batch given")]
    assert (tokens > 2048 * 8192) == bool(warned) and warned, tokens
    batched = json.loads(run("plan", "examples/llama-70b-h100.yaml", "--json", "-q").stdout)
    assert not any(w.startswith("no global batch given") for w in batched["why"])


def test_a_global_batch_that_no_node_count_splits_is_named_with_the_batch_that_would_run(run):
    """The README's Llama example at --confidence 0.9 (issue 29): the deadline needs more nodes than global batch
    1024 fills at any micro-batch, so the error names the batch as the cause and a batch that runs; planning with
    that batch succeeds at the node count it names."""
    failed = run("plan", "examples/llama-70b-h100.yaml", "--confidence", "0.9", "-q")
    assert failed.exit_code == 1 and "global batch 1024 is the cause" in failed.output
    suggested = re.search(r"a global batch of (\d+) \(.*\) would run at (\d+) nodes", failed.output)
    assert suggested, failed.output
    batch, nodes = suggested.groups()
    plan = _plan(run, "examples/llama-70b-h100.yaml", "--confidence", "0.9", "--set", f"workload.global_batch={batch}")
    assert plan["choice"]["nodes"] == int(nodes)


def test_the_cli_and_scenario_copies_of_the_model_choices_match():
    """perf_cmd keeps the choice lists without importing the model, the scenario as Literals: they must equal
    planner.model.parallelism's (a sharding or precision added there and not here would be refused at the door)."""
    import typing

    from planner.cli import perf_cmd
    from planner.inputs.scenario import Workload
    from planner.model import parallelism as P

    assert perf_cmd.SHARDINGS == P.SHARDINGS and perf_cmd.PRECISIONS == P.PRECISIONS and perf_cmd.STACKS == P.STACKS
    sharding = typing.get_args(Workload.model_fields["sharding"].annotation)[0]
    assert set(typing.get_args(sharding)) == set(P.SHARDINGS)
