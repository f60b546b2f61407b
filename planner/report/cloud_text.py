"""Terminal output of `planner cloud` and of `planner plan --compare-cloud`."""

from __future__ import annotations

from planner.base.units import format_usd
from planner.report.plan_text import RECOMPUTE_WORDS
from planner.report.terminal import format_table
from planner.results import BuyVsRent, CloudPlan


def render(result: CloudPlan) -> str:
    out = [f"Cloud options for '{result.scenario}' ({result.cost_basis}, cheapest first)", ""]
    c = result.choice
    if c:
        mix = ", ".join(f"{k} {v}" for k, v in c.pricing_mix.items())
        days = f", {c.days:.1f} days" if c.days is not None else ""
        recompute = RECOMPUTE_WORDS.get(c.checkpointing, c.checkpointing)
        out += [
            f"  choice   {c.instances} x {c.provider} {c.instance} ({c.region}): {c.gpus} x {c.gpu}, "
            f"micro-batch {c.micro_batch}, pricing {mix}",
            *([f"           layout {c.layout}, {recompute}"] if c.layout else []),
            f"           {c.tflops_per_gpu:.1f} TFLOPs/GPU, {c.tokens_per_s:,.0f} tokens/s{days}, "
            f"{format_usd(c.usd_per_h)}/h, {result.cost_basis} {format_usd(c.cost_usd)}",
            *_schedule(c),
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
        blocks = any(r.billed_days is not None and r.billed_days > (r.days or 0) + 1e-9 for r in result.ranking)
        columns = [
            "offering",
            "gpu",
            "pricing",
            "instances",
            "micro_batch",
            "fabric",
            "tflops",
            "days",
            *(["billed_days"] if blocks else []),
            "usd_per_h",
            "cost_usd",
            "usd_per_pflop_day",
            "confidence",
            "price_date",
        ]
        for record, r in zip(records, result.ranking, strict=True):  # blank where billing is by the hour
            whole = r.billed_days is not None and r.billed_days > (r.days or 0) + 1e-9
            record["billed_days"] = f"{r.billed_days:g}" if whole else None
            record["price_date"] = r.price_date + (" (old)" if r.stale else "")
        out += [format_table(records, columns, max_width=60)]
    if result.excluded:
        out += ["", "Excluded:"]
        out += [f"  {e.provider} {e.instance} ({e.region}, {e.gpu}): {e.reason}" for e in result.excluded]
    out += ["", "Terms assumed:"] + [f"  - {t}" for t in result.terms]
    out += [
        "",
        "$/PFLOP-day counts model FLOPs (useful work) at the rental's hourly rate.",
        f"calibration: {result.calibration}",
    ]
    return "\n".join(out)


def _schedule(c) -> list[str]:
    """Calendar days with interruptions, and what is billed beyond them (whole Capacity Blocks)."""
    lines = []
    if c.goodput is not None and c.uninterrupted_days is not None:
        lines.append(
            f"           {c.uninterrupted_days:.1f} days uninterrupted / goodput {c.goodput:.1%} = {c.days:.1f} "
            f"calendar days, {c.interruptions_expected or 0:.0f} interruptions expected"
        )
    billed = [f"{p} {d:g} days" for p, d in c.billed_days.items() if c.days is not None and d > c.days + 1e-9]
    if billed:
        lines.append(f"           billed: {', '.join(billed)} (whole blocks, paid up front)")
    return lines


def render_comparison(comparison: BuyVsRent) -> str:
    c = comparison.cloud
    buy = (
        f"capex {format_usd(comparison.purchase_capex_usd)}, then {format_usd(comparison.purchase_running_usd_per_h)}"
        f"/h to run (energy {format_usd(comparison.purchase_energy_usd_per_h)}/h, colocation, support, staff); "
        f"TCO {format_usd(comparison.purchase_tco_usd)}"
    )
    mix = ", ".join(f"{n} {p}" for p, n in c.pricing_mix.items())
    rent = (
        f"{c.instances} x {c.provider} {c.instance} ({mix}) at {format_usd(c.usd_per_h)}/h; the same "
        f"throughput as the purchase costs {format_usd(comparison.rent_same_throughput_usd_per_h)}/h"
    )
    lines = [
        f"Buy vs rent (same throughput, against {comparison.pricing_compared} pricing; spot left out: a "
        "purchased cluster is not preempted):",
        f"  buy      {buy}",
        f"  rent     {rent}",
        f"  verdict  {comparison.note}",
    ]
    for term in comparison.committed:
        lines.append(
            f"  {term.pricing}  {term.instances} x {term.offering}: the same throughput costs "
            f"{format_usd(term.rent_same_throughput_usd_per_h)}/h billed for whole {term.term_months:g}-month terms; "
            f"{term.note}"
        )
    if not c.meets_requirement:
        closest = f": {c.days:.1f} days at {c.instances} instances" if c.days else ""
        lines.append(
            "  note     no cloud offering meets the scenario's requirement itself (see `planner cloud`); "
            f"this is the closest{closest}"
        )
    return "\n".join(lines)
