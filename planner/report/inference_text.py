"""Terminal output of `planner inference`."""

from __future__ import annotations

import math

from planner.base.units import format_usd
from planner.report.terminal import format_table
from planner.results import InferencePlan


def _rate(value: float | None) -> str:
    if value is None:
        return ""
    return "unbounded" if math.isinf(value) else f"{value:,.1f}"


def render(result: InferencePlan, explain: bool) -> str:
    c = result.choice
    storage = f", {c.nvme_per_machine} x {c.nvme} NVMe" if c.nvme else ""
    network = f", {c.nics_per_machine} x {c.nic} ({c.network})" if c.nic else ""
    w = c.weights_gb_per_machine
    out = [
        f"Inference of {result.weights_gb:,.0f} GB of weights within {result.latency_target_s:g} s at batch "
        f"{result.batch}: needs {result.required_gb_per_s:,.0f} GB/s of streaming bandwidth",
        "",
        f"  buy          {c.machines} x {c.server} ({c.gpus} x {c.gpu}, {c.dram_gib_per_machine or 0:g} "
        f"GiB DRAM per machine{storage}){network}",
        f"  weights      per machine: {w['hbm']:,.1f} GB in HBM, {w['dram']:,.1f} GB in DRAM, "
        f"{w['nvme']:,.1f} GB on NVMe",
        f"  latency      {c.latency_s:.3g} s per generated token (one decode step), bound by {c.bottleneck}",
        f"  streaming    {c.streaming_gb_per_s:,.0f} GB/s across all machines",
        f"  cost         {format_usd(c.usd)}, {c.power_kw:.1f} kW nameplate; server priced {c.server_price_date}"
        + (" (older than 12 months: get a current quote)" if c.server_price_stale else ""),
    ]
    if explain:
        out += [
            "",
            "Bandwidth ladder (one machine; the bottleneck marked *):",
            format_table(
                [
                    {
                        **r.model_dump(),
                        "link": ("* " if r.bottleneck else "  ") + r.link,
                        "gb_per_s": _rate(r.gb_per_s),
                        "gb_per_pass": _rate(r.gb_per_pass),
                        "seconds": f"{r.seconds:.4g}",
                    }
                    for r in result.ladder
                ],
                ["link", "gb_per_s", "gb_per_pass", "seconds", "detail"],
                max_width=70,
            ),
        ]
        out += [
            "",
            "Latency by machine count for this configuration (the optimum is the cheapest feasible):",
            format_table(
                [
                    {**s.model_dump(), "latency_s": "does not fit" if not s.fits else f"{s.latency_s:.4g}"}
                    for s in result.machine_sweep
                ],
                ["machines", "latency_s", "bottleneck"],
            ),
        ]
    if result.alternatives:
        out += [
            "",
            "Alternatives:",
            format_table(
                [
                    {
                        "configuration": f"{a.machines} x {a.server}"
                        + (f", {a.nvme_per_machine} x {a.nvme}" if a.nvme else "")
                        + (f", {a.nics_per_machine} x {a.nic}" if a.nic else ""),
                        "latency_s": f"{a.latency_s:.3g}",
                        "bottleneck": a.bottleneck,
                        "usd": a.usd,
                        "delta_usd": a.delta_usd,
                    }
                    for a in result.alternatives
                ],
                ["configuration", "latency_s", "bottleneck", "usd", "delta_usd"],
                max_width=90,
            ),
        ]
    out += [
        "",
        "Latency is per generated token: each decode step reads every weight once. Prefill (time to first "
        "token) and the KV cache (its reads and its memory) are not modelled.",
        f"calibration: {result.calibration}",
    ]
    return "\n".join(out)
