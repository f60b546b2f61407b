"""Terminal explanations of one evaluated configuration (`planner predict`) and of a bandwidth sweep."""

from __future__ import annotations

import math

import pandas as pd

from planner.base.units import format_count, format_gbps
from planner.model import binding
from planner.model.calibration import UNMEASURED
from planner.model.layout import layout_name
from planner.model.parallelism import ZEROPP_OPTIONS
from planner.report.terminal import format_table

FABRIC_LABEL = {
    "ib": "IB",
    "roce": "RoCE",
    "spectrum-x": "Spectrum-X",
    "efa": "EFA",
    "tcpx": "TCPX",
    "tcp": "TCP",
    "none": "none",
}
FRAMEWORK_LABEL = {"deepspeed": "DeepSpeed ZeRO-3", "fsdp": "PyTorch FSDP", "megatron": "Megatron-Core"}
SHARDING_WORDS = {
    "full": "fully sharded",
    "hybrid": "hybrid sharded",
    "zero2": "ZeRO-2",
    "zero1": "distributed optimizer",
    "none": "DDP",
}


def _s(seconds: float) -> str:
    if seconds < 1e-6:
        return "0 s"
    return f"{seconds:.3g} s" if seconds >= 0.01 else f"{seconds * 1e3:.3g} ms"


def _line(label: str, value: str = "", detail: str = "") -> str:
    return f"  {label:<16} {value:>10}   {detail}".rstrip()


def _headline(r: dict) -> str:
    model = r.get("model_name") or f"{format_count(r['params'])} params"
    zeropp = [k for k in ZEROPP_OPTIONS if r[k]]
    offload = "" if r.get("offload", "none") == "none" else f", optimizer offloaded to {r['offload']}"
    nodes = int(r["gpus"]) // int(r["gpus_per_node"])
    domain = "" if r["scale_up_gpus"] == r["gpus_per_node"] else f" in {int(r['scale_up_gpus'])}-GPU NVLink domains"
    return (
        f"{FRAMEWORK_LABEL[r.get('framework', 'deepspeed')]} micro-step: {model} on {int(r['gpus'])} x {r['gpu']} "
        f"({nodes} nodes x {int(r['gpus_per_node'])}{domain}), {r['tokens_per_gpu']:,.0f} tokens/GPU, "
        f"{FABRIC_LABEL[r['fabric']]} {format_gbps(r['node_gbps'])} per node"
        + (f", ZeRO++ {'+'.join(zeropp)}" if zeropp else "")
        + offload
        + (f", hybrid sharding over {int(r['shard_gpus'])}-GPU groups" if r.get("sharding") == "hybrid" else "")
    )


def _layout_lines(r: dict) -> list[str]:
    """The layout: its dimensions and data-parallel sharding, what the search tried, the pipeline's bubble and
    the exposed tensor/expert-parallel communication."""
    dims = layout_name(r)
    detail = f"{SHARDING_WORDS.get(r['sharding'], r['sharding'])}, grad_accum {r['grad_accum']:g}"
    if "layouts_tried" in r:
        detail += f"; best of {r.get('layouts_fitting', 0)} fitting of {r['layouts_tried']} layouts tried"
        if r.get("runner_up"):
            detail += f" (next: {r['runner_up']}, {r['runner_up_tokens_per_s'] / r['gpus']:,.0f} tokens/s/GPU)"
    lines = [_line("layout", "", f"{dims}; {detail}")]
    if r["pp"] > 1:
        lines.append(_line("  bubble", _s(r["t_bubble_s"]), f"{r['bubble']:.1%} of the busy time, (pp-1)/(vp m)"))
    if r["tp"] > 1 or r["ep"] > 1:
        lines.append(_line("  TP/EP comm", _s(r["t_comm_tp_s"]), "exposed per micro-step (tensor/expert parallel)"))
    if r.get("pipeline_note"):
        lines.append(f"  warning: {r['pipeline_note']}")
    return lines


def explain(r: dict, calibration_source: str) -> str:
    """The step, explained: where the time goes, what is achieved, what fits, what binds."""
    if r["domains"] > 1:
        unit = "node" if r["scale_up_gpus"] == r["gpus_per_node"] else "NVLink domain"
        network = (
            f"{r['bytes_per_domain_per_step'] / 1e9:,.1f} GB per {unit} at {format_gbps(r['scale_out_gbps'])} "
            f"x eta_net {r['eta_net']:.3f}"
        )
    else:
        network = "single node: collectives stay on NVLink"
    nvlink = f"{r['bytes_per_gpu_nvlink_per_step'] / 1e9:,.1f} GB per GPU"
    if math.isnan(r["scale_up_gb_per_s"]):
        nvlink += " (NVLink bandwidth unknown: not counted)"
    compute = (
        f"{r['hw_flops_per_gpu'] / 1e15:.3g} PFLOP per GPU ({r['eta_comp']:.0%} of the {r['peak_tflops']:g} TFLOPs "
        f"bf16 peak), {r['checkpointing']} activation checkpointing, {STACK_LABEL[r['stack']]}, {r['precision']}"
    )
    fits = "fits" if r["fits_memory"] else "DOES NOT FIT"
    per_gpu = r["tokens_per_s_point"] / r["gpus"]
    low, high = r["tokens_per_s_p10"] / r["gpus"], r["tokens_per_s_p90"] / r["gpus"]
    beside = outside_range_note(per_gpu, low, high, r["range_group"])
    extra = []
    if r.get("t_offload_s", 0) > 0:
        extra.append(_line("offload", _s(r["t_offload_s"]), "PCIe copies and CPU-Adam, per micro-step"))
    lines = [
        _headline(r),
        *_layout_lines(r),
        "",
        _line("compute", _s(r["t_compute_s"]), compute),
        *compute_lines(r),
        _line(
            "communication",
            _s(r["t_comm_s"]),
            f"= bandwidth {_s(r['t_comm_bandwidth_s'])} + latency {_s(r['t_comm_latency_s'])}",
        ),
        _line("  network", _s(r["t_comm_network_s"]), network),
        _line("  NVLink", _s(r["t_comm_nvlink_s"]), nvlink),
        _line("  latency", _s(r["t_comm_latency_s"]), _latency_text(r)),
        _line("overlap", f"{r['overlap']:.2f}", "of the shorter phase hidden behind the longer"),
        _line("exposed comm", _s(r["t_comm_exposed_s"])),
        *extra,
        _line("overhead", _s(r["t_overhead_s"]), "fixed per micro-step (fitted)"),
        _line("step", _s(r["t_step_s"])),
        "",
        _line(
            "tokens/s/GPU",
            f"{per_gpu:,.0f}",
            f"range {low:,.0f} - {high:,.0f} (p10-p90 of out-of-publication errors for "
            f"{group_words(r['range_group'])})",
        ),
        *([f"  note: {beside}"] if beside else []),
        *([f"  warning: {r['extrapolation']}"] if r.get("extrapolation") else []),
        *([f"  warning: {r['unmeasured']}"] if r.get("unmeasured") else []),
        _line(
            "achieved", f"{r['achieved_tflops_per_gpu']:.1f}", "TFLOPs per GPU (hardware FLOPs, as DeepSpeed reports)"
        ),
        _line("MFU", f"{r['mfu'] * 100:.1f} %", f"{r['tokens_per_s']:,.0f} tokens/s across the cluster"),
        _line(
            "memory",
            f"{r['memory_per_gpu_gib']:.1f} GiB",
            f"per GPU of {r['usable_hbm_gib']:.1f} GiB usable ({r['hbm_gib']:g} GiB HBM): {fits}",
        ),
        _line(
            "binding",
            "",
            binding.advice(
                r["binding"],
                r["t_comm_exposed_s"],
                r["t_step_s"],
                r["t_comm_rank_loop_s"],
                r["t_comm_latency_s"],
                str(r["framework"]),
            ),
        ),
        "",
        f"  calibration: {calibration_source}",
    ]
    return "\n".join(lines)


STACK_LABEL = {"eager": "eager PyTorch", "compile": "torch.compile"}


def compute_lines(r: dict) -> list[str]:
    """The compute phase's parts (docs/model.md section 3), each at its own rate."""
    low = ""
    if r["lowp_share"] > 0:
        peak = r["peak_fp4_tflops"] if r["precision"] == "fp4" else r["peak_fp8_tflops"]
        low = f"; {r['lowp_share']:.0%} of the linear FLOPs in {r['precision']} at {peak:g} TFLOPs peak"
    lines = [
        _line("  GEMMs", _s(r["t_gemm_s"]), f"at {r['gemm_efficiency']:.2f} of peak (h = {r['hidden']:,.0f}){low}"),
        _line(
            "  attention", _s(r["t_attention_s"]), f"FlashAttention at {r['attention_efficiency']:.2f} of peak, causal"
        ),
        _line(
            "  element-wise", _s(r["t_elementwise_s"]), "norms, rotary, activations, residuals (and casts) at HBM rate"
        ),
        _line("  optimizer", _s(r["t_optimizer_s"]), "AdamW over the GPU's shard, at HBM rate"),
    ]
    gpu_s = r["t_gemm_s"] + r["t_attention_s"] + r["t_elementwise_s"] + r["t_optimizer_s"]
    if r["t_dispatch_s"] > gpu_s:
        lines.append(_line("  host dispatch", _s(r["t_dispatch_s"]), "the host launches kernels slower than they run"))
    return lines


def _latency_text(r) -> str:
    """The latency term's parts: NCCL's ring latency and the framework's host time around the collectives."""
    ring, host, loop = r["t_comm_latency_s"] - r["t_comm_host_s"], r["t_comm_host_s"], r["t_comm_rank_loop_s"]
    calls = f"{r['collectives_per_step']:.0f} collectives x NCCL ring latency"
    parts = f"hooks per collective {_s(host - loop)} + a loop over every rank per gradient tensor {_s(loop)}"
    return f"ring {_s(ring)} ({calls}) + host {_s(host)} ({parts if loop else 'hooks per collective'})"


def outside_range_note(point: float, low: float, high: float, group: str) -> str:
    """When the validated range lies wholly below (or above) the point prediction, how far the middle 80% of
    the measured runs of its validation group were from the model, in words a buyer can act on."""
    if low <= point <= high:
        return ""
    side = "below" if point > high else "above"
    near, far = sorted((abs(1 - high / point), abs(1 - low / point)))
    return (
        f"the middle 80% of {group_words(group)} in the database came in {near:.0%}-{far:.0%} {side} the "
        "model out of source: plan for the range (--confidence 0.9)"
    )


def group_words(group: str) -> str:
    """The runs of a validation group (calibration.range_factors), in words."""
    depth = group.count("|") + 1 if group and group != "all" else 0
    if group == UNMEASURED:
        return "runs of each measured architecture predicted from the others"
    words = {3: "this GPU architecture, framework and fabric", 2: "this GPU architecture and framework"}
    words[1] = "this framework"
    return f"runs of {words[depth]}" if depth else "all runs"


def sweep_table(table: pd.DataFrame) -> str:
    """Rows: node Gbps; columns: IB, RoCE, and each with ZeRO++."""
    records = []
    for gbps, group in table.groupby("node_gbps", sort=True):
        record = {"node_gbps": gbps}
        for _, r in group.iterrows():
            label = FABRIC_LABEL[r["fabric"]] + (" +ZeRO++" if r["zeropp"] else "")
            record[label] = f"{r['achieved_tflops_per_gpu']:.1f}"
        records.append(record)
    columns = ["node_gbps", "IB", "RoCE", "IB +ZeRO++", "RoCE +ZeRO++"]
    return format_table(records, columns)


# ---------------------------------------------------------------- calibration and validation


def calibration_text(calibration, report: pd.DataFrame, cv: pd.DataFrame | None) -> str:
    """The fitted parameters, and the error in sample and out of source."""
    lines = ["Fitted parameters:"]
    lines += [f"  {name:<28} {value:.4g}" for name, value in calibration.fit["parameters"].items()]
    lines += ["", validation_text(report, cv, False, calibration.fit)]
    return "\n".join(lines)


def validation_text(report: pd.DataFrame, cv: pd.DataFrame | None, show_points: bool, fit: dict | None = None) -> str:
    """Per-source error in sample and leave-one-source-out, the headline medians, leave-one-publication-out and
    leave-one-architecture-out per GPU architecture, the ranges' coverage, and the memory model's error."""
    from planner.model.fitting import summary

    fit = fit or {}
    inside = summary(report)
    records = [
        {"source": g, "points": int(r["size"]), "in_sample_median": f"{r['median'] * 100:.1f}%"}
        for g, r in inside["per_source"].items()
    ]
    lines = []
    if cv is not None:
        out = summary(cv)["per_source"]
        for rec in records:
            o = out[rec["source"]]
            rec["out_of_source_median"] = f"{o['median'] * 100:.1f}%"
            rec["out_of_source_max"] = f"{o['max'] * 100:.1f}%"
    columns = ["source", "points", "in_sample_median", "out_of_source_median", "out_of_source_max"]
    lines.append(format_table(records, columns if cv is not None else columns[:3], max_width=60))
    lines.append("")
    lines.append(
        f"in sample: median |error| {inside['median_abs_error'] * 100:.1f}% over {inside['points']} points "
        "(tokens/s per GPU; a band counts its distance outside)"
    )
    if cv is not None:
        s = summary(cv)
        lines.append(
            f"leave-one-source-out: median |error| {s['median_abs_error'] * 100:.1f}%, max "
            f"{s['max_abs_error'] * 100:.0f}%, signed median {s['signed_median'] * 100:+.1f}% (+: optimistic); "
            "a source is one measurement set (one table of a publication)"
        )
        by_publication = fit.get("leave_one_publication_out")
        if by_publication:
            lines.append(
                f"leave-one-publication-out (a whole document out): median |error| "
                f"{by_publication['median_abs_error'] * 100:.1f}%, max {by_publication['max_abs_error'] * 100:.0f}%"
                + _coverage_words(by_publication)
            )
        lines += ["", architecture_table(fit, s)]
        if show_points:
            points = cv.assign(error=(cv["abs_error"] * 100).round(1))
            lines += [
                "",
                format_table(points.to_dict("records"), ["id", "source_group", "measured", "predicted", "error"]),
            ]
    memory = fit.get("memory") or {}
    if memory.get("points"):
        lines.append(
            f"\nmemory: median |error| {memory['median_abs_error'] * 100:.1f}% "
            f"(max {memory['max_abs_error'] * 100:.0f}%, signed median {memory['signed_median'] * 100:+.1f}%) over "
            f"{memory['points']} published peak-memory readings (PyTorch's reserved memory where stated, which the "
            "caching allocator rounds up)"
        )
    return "\n".join(lines)


def _coverage_words(s: dict) -> str:
    if "range_coverage" not in s:
        return ""
    return (
        f"; {s['range_coverage'] * 100:.0f}% of its {s['range_points']} points fall inside the p10-p90 range built "
        "from the other publications' errors alone"
    )


def architecture_table(fit: dict, loso: dict) -> str:
    """Median |error| per GPU architecture: leave-one-source-out, -publication-out, and with the whole
    architecture left out (what an architecture without measurements can expect)."""
    views = [("leave-one-source-out", loso)]
    views += [(name, fit[key]) for name, key in (("leave-one-publication-out", "leave_one_publication_out"),
              ("architecture-left-out", "leave_one_architecture_out")) if fit.get(key)]  # fmt: skip
    architectures = sorted(loso["per_architecture"])
    records = []
    for arch in architectures:
        record = {"architecture": arch, "points": int(loso["per_architecture"][arch]["size"])}
        for name, view in views:
            cell = view.get("per_architecture", {}).get(arch)
            record[name] = f"{cell['median'] * 100:.1f}%" if cell else "-"
        records.append(record)
    return "median |error| per GPU architecture:\n" + format_table(
        records, ["architecture", "points", *[n for n, _ in views]]
    )
