"""Terminal summary of a Plan, and the CSV bill of materials."""

from __future__ import annotations

import csv
import io

from planner.plan import Plan, Summary
from planner.report.csvtext import csv_cell as _text  # the CSV-injection guard of every CSV output
from planner.report.perf_text import FABRIC_LABEL
from planner.report.terminal import format_table
from planner.units import format_usd


def _gbps(value: float) -> str:
    return f"{value:,.0f} Gbps"


def _config(s: Summary) -> str:
    c = s.choice
    if c.tier == 0:
        return f"1 x {c.server} (single node), micro-batch {c.micro_batch}"
    return (
        f"{c.nodes} x {c.server}, {c.nics_per_node} x {c.nic} ({_gbps(c.node_gbps)}/node), "
        f"{FABRIC_LABEL[c.fabric]}, {c.fabric_text}, micro-batch {c.micro_batch}"
    )


def render(plan: Plan) -> str:
    c, m, cost = plan.choice, plan.metrics, plan.cost
    out = [f"Plan for '{plan.scenario}': {plan.status} ({plan.solver}, {plan.candidates:,} candidates)", ""]
    out.append(f"  buy          {c.nodes} x {c.server}  ({c.gpus} x {c.gpu}, {c.gpus_per_node} per node)")
    if c.tier:
        switches = ", ".join(f"{n} {t}" for t, n in c.switches_by_tier.items() if n)
        out.append(
            f"  network      {c.nics_per_node} x {c.nic} per node = {_gbps(c.node_gbps)} usable, "
            f"{FABRIC_LABEL[c.fabric]}"
        )
        out.append(f"  fabric       {c.fabric_text}: {switches} switch(es); links: {c.links}")
    else:
        out.append("  network      none: one node, collectives on NVLink")
    accum = f", grad_accum {c.grad_accum}" if c.grad_accum else ""
    out.append(f"  batch        micro-batch {c.micro_batch}{accum}")
    out.append("")
    out.append(
        f"  achieved     {m.achieved_tflops_per_gpu:.1f} TFLOPs/GPU (MFU {m.mfu * 100:.1f}%), bound by {m.binding}"
    )
    step = f"{m.t_step_s:.3g} s per micro-step" + (
        f", {m.t_optimizer_step_s:.3g} s per optimizer step" if m.t_optimizer_step_s else ""
    )
    out.append(f"  step         {step}; {m.tokens_per_s:,.0f} tokens/s")
    if m.training_days is not None:
        out.append(f"  training     {m.training_days:.1f} days")
    out.append(f"  memory       {m.memory_per_gpu_gib:.1f} of {m.usable_hbm_gib:.1f} GiB usable per GPU")
    out.append("")
    out.append(
        f"  capex        {format_usd(cost.capex_usd)}  ("
        + ", ".join(f"{k} {format_usd(v)}" for k, v in cost.by_category.items())
        + ")"
    )
    out.append(f"  power        {cost.power_kw:,.1f} kW nameplate, {cost.draw_kw:,.1f} kW training draw")
    out.append(f"  energy       {format_usd(cost.energy_usd)} over the horizon; TCO {format_usd(cost.tco_usd)}")
    if plan.why:
        out += ["", "Why this plan:"] + [f"  - {w}" for w in plan.why]
    out += ["", "Bill of materials:", _bom_table(plan)]
    for title, items in (
        ("Best per fabric", plan.per_fabric),
        ("Best per NIC speed", plan.per_nic_speed),
        ("Next-best alternatives", plan.alternatives),
    ):
        if items:
            out += ["", f"{title}:", _summary_table(items, plan.objective)]
    out += ["", f"calibration: {plan.calibration}"]
    return "\n".join(out)


def _bom_table(plan: Plan) -> str:
    records = [
        {
            "category": b.category,
            "sku": b.sku,
            "qty": b.quantity,
            "unit_usd": b.unit_usd,
            "extended_usd": b.extended_usd,
            "source": b.source.rsplit("/", 1)[-1],
        }
        for b in plan.bom
    ]
    records.append({"category": "total", "extended_usd": plan.cost.capex_usd})
    return format_table(records, ["category", "sku", "qty", "unit_usd", "extended_usd", "source"], max_width=44)


def _summary_table(items: list[Summary], objective: str) -> str:
    """Options with their capex and, against the chosen plan, the difference in the objective (capex or TCO)."""
    delta = f"{objective}_delta_usd"
    records = [
        {
            "option": s.label,
            "configuration": _config(s),
            "tflops": f"{s.metrics.achieved_tflops_per_gpu:.1f}",
            "capex_usd": s.cost.capex_usd,
            "tco_usd": s.cost.tco_usd,
            delta: s.delta_usd,
        }
        for s in items
    ]
    columns = ["option", "configuration", "tflops", "capex_usd"] + (["tco_usd"] if objective == "tco" else []) + [delta]
    return format_table(records, columns, max_width=100)


def bom_csv(plan: Plan) -> str:
    """Bill of materials as CSV text. Cells that a spreadsheet would read as a formula are prefixed with '."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(
        ["category", "sku", "description", "vendor", "quantity", "unit_usd", "extended_usd", "source", "confidence"]
    )
    for b in plan.bom:
        writer.writerow(
            [
                _text(b.category),
                _text(b.sku),
                _text(b.description),
                _text(b.vendor),
                b.quantity,
                f"{b.unit_usd:.2f}",
                f"{b.extended_usd:.2f}",
                _text(b.source),
                _text(b.confidence),
            ]
        )
    writer.writerow(["total", "", "", "", "", "", f"{plan.cost.capex_usd:.2f}", "", ""])
    return buffer.getvalue()
