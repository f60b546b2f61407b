"""Terminal output of `planner cloud` and of `planner plan --compare-cloud`."""

from __future__ import annotations

from planner.report.terminal import format_table
from planner.results import BuyVsRent, CloudPlan
from planner.units import format_usd


def render(result: CloudPlan) -> str:
    out = [f"Cloud options for '{result.scenario}' ({result.cost_basis}, cheapest first)", ""]
    c = result.choice
    if c:
        mix = ", ".join(f"{k} {v}" for k, v in c.pricing_mix.items())
        days = f", {c.days:.1f} days" if c.days is not None else ""
        out += [
            f"  choice   {c.instances} x {c.provider} {c.instance} ({c.region}): {c.gpus} x {c.gpu}, "
            f"micro-batch {c.micro_batch}, pricing {mix}",
            f"           {c.tflops_per_gpu:.1f} TFLOPs/GPU, {c.tokens_per_s:,.0f} tokens/s{days}, "
            f"{format_usd(c.usd_per_h)}/h, {result.cost_basis} {format_usd(c.cost_usd)}",
            "",
        ]
    else:
        out += ["  no offering meets the scenario (see the exclusions below)", ""]
    if result.ranking:
        records = [
            {
                **r.model_dump(),
                "offering": f"{r.provider} {r.instance} ({r.region})",
                "tflops": f"{r.tflops_per_gpu:.1f}",
                "days": None if r.days is None else f"{r.days:.1f}",
                "usd_per_pflop_day": round(r.usd_per_pflop_day, 2),
            }
            for r in result.ranking
        ]
        columns = [
            "offering",
            "gpu",
            "pricing",
            "instances",
            "micro_batch",
            "fabric",
            "tflops",
            "days",
            "usd_per_h",
            "cost_usd",
            "usd_per_pflop_day",
        ]
        out += [format_table(records, columns, max_width=60)]
    if result.excluded:
        out += ["", "Excluded:"]
        out += [f"  {e.provider} {e.instance} ({e.region}, {e.gpu}): {e.reason}" for e in result.excluded]
    out += [
        "",
        "$/PFLOP-day counts model FLOPs (useful work); spot capacity and interruptions are not modelled.",
        f"calibration: {result.calibration}",
    ]
    return "\n".join(out)


def render_comparison(comparison: BuyVsRent) -> str:
    c = comparison.cloud
    buy = (
        f"capex {format_usd(comparison.purchase_capex_usd)}, energy "
        f"{format_usd(comparison.purchase_energy_usd_per_h)}/h, TCO {format_usd(comparison.purchase_tco_usd)}"
    )
    mix = ", ".join(f"{n} {p}" for p, n in c.pricing_mix.items())
    rent = (
        f"{c.instances} x {c.provider} {c.instance} ({mix}) at {format_usd(c.usd_per_h)}/h; the same "
        f"throughput as the purchase costs {format_usd(comparison.rent_same_throughput_usd_per_h)}/h"
    )
    lines = [
        "Buy vs rent (same throughput):",
        f"  buy      {buy}",
        f"  rent     {rent}",
        f"  verdict  {comparison.note}",
    ]
    if not c.meets_requirement:
        closest = f": {c.days:.1f} days at {c.instances} instances" if c.days else ""
        lines.append(
            "  note     no cloud offering meets the scenario's requirement itself (see `planner cloud`); "
            f"this is the closest{closest}"
        )
    return "\n".join(lines)
