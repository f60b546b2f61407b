"""Quote-ready Excel workbooks (openpyxl): live formulas, bill of materials, alternatives, charts.

Sheets of the plan workbook: Summary, Quote, Alternatives, Sensitivity, Assumptions. Every money total is a
formula over the Quote lines, so editing a quantity, a price, the discount or the tax recomputes it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from openpyxl import Workbook
from openpyxl.chart import BarChart, LineChart, Reference
from openpyxl.worksheet.worksheet import Worksheet

from planner import __version__
from planner.assumptions import all_constants
from planner.calibration import Calibration
from planner.report.perf_text import FABRIC_LABEL
from planner.report.xlsx import (
    INPUT_FILL,
    NUM0,
    NUM1,
    PCT,
    USD,
    USD0,
    formula,
    header,
    pairs,
    print_setup,
    put,
    ref,
    save,
    sheet,
    title,
    widths,
)
from planner.results import BuyVsRent, Plan, Summary

QUOTE_COLUMNS = [
    "Category",
    "Vendor",
    "SKU",
    "Description",
    "Quantity",
    "Unit price (USD)",
    "Extended (USD)",
    "Catalog source (file:row)",
    "Confidence",
]
QTY, UNIT, EXT = 5, 6, 7


@dataclass
class PlanContext:
    """What the workbook needs beyond the Plan: the question, the model's settings, the catalogs used."""

    scenario: dict
    calibration: Calibration
    catalog_files: dict[str, str]  # path -> sha256
    bandwidth_sweep: pd.DataFrame | None = None  # fabric, zeropp, node_gbps, achieved_tflops_per_gpu
    cost_curve: list[dict] = field(default_factory=list)  # target_tflops, capex_usd (None: infeasible), note
    cloud_comparison: BuyVsRent | None = None  # planner plan --compare-cloud


def write_plan(plan: Plan, context: PlanContext, path: Path) -> None:
    workbook = Workbook()
    summary = workbook.active
    summary.title = "Summary"
    quote = sheet(workbook, "Quote")
    totals = _quote(quote, plan)
    _summary(summary, plan, context, totals)
    _alternatives(sheet(workbook, "Alternatives"), plan, totals)
    _sensitivity(sheet(workbook, "Sensitivity"), plan, context)
    if context.cloud_comparison:
        comparison_sheet(sheet(workbook, "Buy vs rent"), context.cloud_comparison)
    _assumptions(sheet(workbook, "Assumptions"), plan, context)
    save(workbook, path)


# ---------------------------------------------------------------- Quote


def _quote(ws: Worksheet, plan: Plan) -> dict[str, str]:
    """Lines per category with a subtotal each, then discount, tax and grand total. Returns cell refs."""
    row = title(
        ws,
        f"Quote: {plan.scenario}",
        f"planner {__version__}, {dt.date.today().isoformat()}; "
        "prices from the catalogs named per line (yellow cells are inputs)",
    )
    header(ws, row, QUOTE_COLUMNS)
    head_row = row
    row += 1
    subtotals: dict[str, str] = {}
    sections = list(dict.fromkeys(b.section for b in plan.bom))  # servers, compute fabric, storage, ... racks
    for category in sections:
        first = row
        for line in (b for b in plan.bom if b.section == category):
            for col, value in enumerate([line.category, line.vendor, line.sku, line.description], start=1):
                put(ws, row, col, value)
            put(ws, row, QTY, line.quantity, NUM0).fill = INPUT_FILL
            put(ws, row, UNIT, line.unit_usd, USD).fill = INPUT_FILL
            formula(ws, row, EXT, f"=E{row}*F{row}", USD)
            put(ws, row, 8, line.source.rsplit("/", 1)[-1])
            put(ws, row, 9, line.confidence)
            row += 1
        put(ws, row, 4, f"Subtotal {category}", bold=True)
        formula(ws, row, EXT, f"=SUM(G{first}:G{row - 1})", USD, bold=True)
        subtotals[category] = ref(ws, row, EXT, absolute=True)
        row += 1
    optional_first = row
    for text in (
        "Support contract (optional: enter your vendor's quote)",
        "Installation and cabling labour (optional: enter your quote)",
    ):
        put(ws, row, 1, "services")
        put(ws, row, 4, text)
        put(ws, row, QTY, 0, NUM0).fill = INPUT_FILL
        put(ws, row, UNIT, 0.0, USD).fill = INPUT_FILL
        formula(ws, row, EXT, f"=E{row}*F{row}", USD)
        row += 1
    ws.auto_filter.ref = f"A{head_row}:I{row - 1}"
    row += 1
    sub_refs = ",".join(c.split("!")[1] for c in subtotals.values())
    put(ws, row, 4, "Hardware subtotal", bold=True)
    formula(ws, row, EXT, f"=SUM({sub_refs})+SUM(G{optional_first}:G{optional_first + 1})", USD, bold=True)
    subtotal = row
    put(ws, row + 1, 4, "Discount %")
    put(ws, row + 1, UNIT, 0.0, PCT).fill = INPUT_FILL
    formula(ws, row + 1, EXT, f"=-G{subtotal}*F{row + 1}", USD)
    put(ws, row + 2, 4, "Tax %")
    put(ws, row + 2, UNIT, 0.0, PCT).fill = INPUT_FILL
    formula(ws, row + 2, EXT, f"=(G{subtotal}+G{row + 1})*F{row + 2}", USD)
    put(ws, row + 3, 4, "Grand total", bold=True)
    formula(ws, row + 3, EXT, f"=G{subtotal}+G{row + 1}+G{row + 2}", USD, bold=True)
    _not_priced(ws, row + 5, plan, column=4)
    widths(ws, {1: 13, 2: 22, 3: 30, 4: 60, 5: 10, 6: 16, 7: 18, 8: 26, 9: 12})
    ws.freeze_panes = ws.cell(head_row + 1, 1)
    print_setup(ws)
    return {**subtotals, "grand_total": ref(ws, row + 3, EXT, absolute=True)}


# ---------------------------------------------------------------- Summary


def _summary(ws: Worksheet, plan: Plan, context: PlanContext, totals: dict[str, str]) -> None:
    c, m, cost = plan.choice, plan.metrics, plan.cost
    row = title(
        ws,
        f"Cluster plan: {plan.scenario}",
        f"planner {__version__}; solver {plan.solver}: {plan.status}"
        + (f", gap {plan.gap:g}" if plan.gap else "")
        + f"; {plan.candidates:,} candidate configurations",
    )
    row = pairs(ws, row, "The question", _question(context.scenario))
    answer = [
        ("Servers", f"{c.nodes} x {c.server}"),
        ("GPUs", f"{c.gpus} x {c.gpu} ({c.gpus_per_node} per node)"),
        (
            "Network",
            "none (single node)"
            if not c.tier
            else f"{c.nics_per_node} x {c.nic} per node, {c.node_gbps:,.0f} Gbps usable, {FABRIC_LABEL[c.fabric]}",
        ),
        (
            "Fabric",
            c.fabric_text
            + ("; " + ", ".join(f"{n} {t}" for t, n in c.switches_by_tier.items() if n) if c.tier else ""),
        ),
        ("Links", c.links or "none"),
        ("Racks and networks", _layout_text(plan)),
        ("Micro-batch", c.micro_batch),
        ("Gradient accumulation", c.grad_accum if c.grad_accum else "not fixed (no global batch)"),
        ("Achieved TFLOPs per GPU", (m.achieved_tflops_per_gpu, NUM1)),
        ("MFU", (m.mfu, PCT)),
        ("Micro-step time (s)", (m.t_step_s, NUM1)),
        ("Tokens per second", (m.tokens_per_s, NUM0)),
        ("Training days", (m.training_days, NUM1) if m.training_days is not None else "no token count given"),
        ("Memory per GPU (GiB)", (m.memory_per_gpu_gib, NUM1)),
        ("Usable HBM (GiB)", (m.usable_hbm_gib, NUM1)),
        ("Bound by", m.binding),
    ]
    row = pairs(ws, row, "The answer", answer)
    put(ws, row, 1, "Cost", bold=True)
    row += 1
    for category, cell in totals.items():
        if category != "grand_total":
            put(ws, row, 1, category)
            formula(ws, row, 2, f"={cell}", USD)
            row += 1
    put(ws, row, 1, "Grand total (Quote sheet, after discount and tax)", bold=True)
    formula(ws, row, 2, f"={totals['grand_total']}", USD, bold=True)
    row += 1
    for label, value, fmt in (
        ("Nameplate power (kW)", cost.power_kw, NUM1),
        ("Training draw (kW)", cost.draw_kw, NUM1),
        ("Energy over the horizon (USD)", cost.energy_usd, USD0),
        ("TCO: capex + energy (USD)", cost.tco_usd, USD0),
    ):
        put(ws, row, 1, label)
        put(ws, row, 2, value, fmt)
        row += 1
    row += 1
    put(ws, row, 1, "Why this plan", bold=True)
    put(ws, row + 1, 1, " ".join(plan.why) or "The cheapest configuration meeting every requirement.")
    _not_priced(ws, row + 3, plan, column=1)
    widths(ws, {1: 44, 2: 90})
    print_setup(ws, landscape=False)


def _not_priced(ws: Worksheet, row: int, plan: Plan, column: int) -> int:
    """What the totals leave out, listed where finance reads the totals."""
    put(ws, row, column, "Not priced (not in these totals)", bold=True)
    for i, item in enumerate(plan.not_priced, start=1):
        put(ws, row + i, column, item)
    return row + len(plan.not_priced) + 1


def _layout_text(plan: Plan) -> str:
    lay = plan.layout
    if not lay:
        return "none"
    parts = [
        f"{lay['nodes_per_rack']} nodes per rack",
        f"{lay['compute_racks']} compute + {lay['network_racks']} network racks",
        f"{lay['pdus']} PDUs",
        f"{lay['storage_switches']} storage, {lay['inband_switches']} in-band, {lay['oob_switches']} out-of-band "
        f"switches, {lay['ufm_appliances']} UFM appliances",
    ]
    return "; ".join(parts)


def _question(scenario: dict) -> list[tuple[str, object]]:
    w, r, o, c = (scenario.get(k, {}) for k in ("workload", "requirement", "objective", "constraints"))
    model = w.get("model") or f"{w.get('params'):,.0f} parameters"
    need = (
        f"{r['gpus']} GPUs"
        if r.get("gpus")
        else f"{r['tokens']:,.0f} tokens in {r['days']:g} days"
        if r.get("tokens")
        else f"at least {r.get('min_tokens_per_s'):,.0f} tokens/s"
    )
    limits = [f"{k} {v}" for k, v in c.items() if v not in (None, [], "")]
    return [
        ("Model", model),
        ("Requirement", need),
        ("Target TFLOPs per GPU", scenario.get("target_tflops")),
        ("Micro-batches allowed", ", ".join(map(str, w.get("micro_batches", [])))),
        ("Global batch", w.get("global_batch") or "not fixed"),
        ("ZeRO++", ", ".join(k for k in ("qwz", "hpz", "qgz") if w.get(k)) or "off"),
        ("Objective", o.get("kind")),
        ("Constraints", "; ".join(limits)),
    ]


# ---------------------------------------------------------------- Alternatives


def _alternatives(ws: Worksheet, plan: Plan, totals: dict[str, str]) -> None:
    row = title(ws, "Alternatives", "capex delta is a live formula against the chosen plan's capex (B3)")
    put(ws, 3, 1, "Chosen plan capex (USD)")
    put(ws, 3, 2, plan.cost.capex_usd, USD)
    columns = [
        "Group",
        "Option",
        "Servers",
        "Network",
        "Fabric",
        "Micro-batch",
        "TFLOPs/GPU",
        "Capex (USD)",
        "Capex delta (USD)",
        "TCO (USD)",
    ]
    header(ws, row + 1, columns)
    head = row + 1
    row = head + 1
    for group, items in (
        ("best per fabric", plan.per_fabric),
        ("best per NIC speed", plan.per_nic_speed),
        ("next-best", plan.alternatives),
    ):
        for s in items:
            _alternative_row(ws, row, group, s)
            row += 1
    ws.auto_filter.ref = f"A{head}:J{max(row - 1, head)}"
    ws.freeze_panes = ws.cell(head + 1, 1)
    widths(ws, {1: 18, 2: 14, 3: 40, 4: 50, 5: 50, 6: 11, 7: 11, 8: 16, 9: 16, 10: 16})
    print_setup(ws)


def _alternative_row(ws: Worksheet, row: int, group: str, s: Summary) -> None:
    c = s.choice
    network = (
        "none" if not c.tier else f"{c.nics_per_node} x {c.nic} ({c.node_gbps:,.0f} Gbps), {FABRIC_LABEL[c.fabric]}"
    )
    for col, value in enumerate([group, s.label, f"{c.nodes} x {c.server}", network, c.fabric_text], start=1):
        put(ws, row, col, value)
    put(ws, row, 6, c.micro_batch, NUM0)
    put(ws, row, 7, s.metrics.achieved_tflops_per_gpu, NUM1)
    put(ws, row, 8, s.cost.capex_usd, USD)
    formula(ws, row, 9, f"=H{row}-$B$3", USD)
    put(ws, row, 10, s.cost.tco_usd, USD)


# ---------------------------------------------------------------- Sensitivity


def _sensitivity(ws: Worksheet, plan: Plan, context: PlanContext) -> None:
    c = plan.choice
    row = title(
        ws,
        "Sensitivity",
        f"{c.gpus} x {c.gpu}, micro-batch {c.micro_batch}: performance model "
        "predictions, and the cheapest plan's capex as the target moves",
    )
    if context.bandwidth_sweep is not None:
        row = bandwidth_block(ws, row, context.bandwidth_sweep, "Achieved TFLOPs per GPU vs node bandwidth")
    if context.cost_curve:
        put(ws, row, 1, "Capex of the cheapest plan vs target TFLOPs per GPU", bold=True)
        header(ws, row + 1, ["Target TFLOPs/GPU", "Capex (USD)", "Note"])
        first = row + 2
        for i, point in enumerate(context.cost_curve):
            put(ws, first + i, 1, point["target_tflops"], NUM1)
            if point["capex_usd"] is not None:
                put(ws, first + i, 2, point["capex_usd"], USD0)
            put(ws, first + i, 3, point.get("note", ""))
        last = first + len(context.cost_curve) - 1
        chart = BarChart()
        chart.title, chart.y_axis.title, chart.x_axis.title = "Capex vs target", "USD", "target TFLOPs/GPU"
        chart.add_data(Reference(ws, min_col=2, min_row=first - 1, max_row=last), titles_from_data=True)
        chart.set_categories(Reference(ws, min_col=1, min_row=first, max_row=last))
        chart.height, chart.width = 8, 16
        ws.add_chart(chart, f"E{row}")
    widths(ws, {1: 18, 2: 16, 3: 16, 4: 16, 5: 16})
    print_setup(ws)


def bandwidth_block(ws: Worksheet, row: int, sweep: pd.DataFrame, heading: str) -> int:
    """Table of achieved TFLOPs/GPU by node Gbps for IB, RoCE and each with ZeRO++, and a line chart."""
    put(ws, row, 1, heading, bold=True)
    series = [
        ("ib", False, "IB"),
        ("roce", False, "RoCE"),
        ("ib", True, "IB + ZeRO++"),
        ("roce", True, "RoCE + ZeRO++"),
    ]
    header(ws, row + 1, ["Node Gbps"] + [label for _, _, label in series])
    gbps = sorted(sweep["node_gbps"].unique())
    first = row + 2
    for i, value in enumerate(gbps):
        put(ws, first + i, 1, float(value), NUM0)
        for col, (fab, zpp, _) in enumerate(series, start=2):
            hit = sweep[(sweep["fabric"] == fab) & (sweep["zeropp"] == zpp) & (sweep["node_gbps"] == value)]
            if not hit.empty:
                put(ws, first + i, col, float(hit["achieved_tflops_per_gpu"].iloc[0]), NUM1)
    last = first + len(gbps) - 1
    chart = LineChart()
    chart.title, chart.y_axis.title, chart.x_axis.title = heading, "TFLOPs/GPU", "node Gbps"
    chart.add_data(
        Reference(ws, min_col=2, max_col=1 + len(series), min_row=first - 1, max_row=last), titles_from_data=True
    )
    chart.set_categories(Reference(ws, min_col=1, min_row=first, max_row=last))
    chart.height, chart.width = 8, 16
    ws.add_chart(chart, f"H{row}")
    return max(last + 2, row + 18)


# ---------------------------------------------------------------- Assumptions


def _assumptions(ws: Worksheet, plan: Plan, context: PlanContext) -> None:
    row = title(ws, "Assumptions", "every constant the figures depend on, with its source")
    header(ws, row, ["Name", "Value", "Unit", "Source"])
    head = row
    row += 1
    cal = context.calibration
    entries = [(k.name, k.value, k.unit, k.source) for k in all_constants()]
    entries += [(f"calibrated eta_comp[{g}]", v, "fraction of peak", cal.source) for g, v in cal.eta_comp.items()]
    entries += [(f"calibrated eta_net[{f}]", v, "fraction of line rate", cal.source) for f, v in cal.eta_net.items()]
    entries += [("calibrated overlap", cal.overlap, "share hidden", cal.source)]
    entries += [(f"objective.{k}", v, "", "scenario") for k, v in context.scenario.get("objective", {}).items()]
    entries += [(f"cabling.{k}", v, "m", "scenario") for k, v in context.scenario.get("cabling", {}).items()]
    for name, value, unit, source in entries:
        put(ws, row, 1, name)
        put(ws, row, 2, value if isinstance(value, int | float) else str(value))
        put(ws, row, 3, unit)
        put(ws, row, 4, source)
        row += 1
    ws.auto_filter.ref = f"A{head}:D{row - 1}"
    ws.freeze_panes = ws.cell(head + 1, 1)
    row += 1
    put(ws, row, 1, "Catalog files used", bold=True)
    header(ws, row + 1, ["File", "SHA-256"])
    row += 2
    for path, digest in context.catalog_files.items():
        put(ws, row, 1, path)
        put(ws, row, 2, digest)
        row += 1
    row += 1
    for label, value in (
        ("planner version", __version__),
        ("written (UTC)", dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M")),
        ("solver", plan.solver),
        ("solver status", plan.status),
        ("calibration", cal.source),
    ):
        put(ws, row, 1, label)
        put(ws, row, 2, value)
        row += 1
    widths(ws, {1: 40, 2: 70, 3: 36, 4: 90})
    print_setup(ws)


def comparison_sheet(ws: Worksheet, comparison: BuyVsRent) -> None:
    title(ws, "Buy vs rent", "the same throughput as the purchase, rented from the best cloud option")
    c = comparison.cloud
    rows = [
        ("Purchase capex (USD)", comparison.purchase_capex_usd, USD0),
        ("Purchase energy (USD per hour)", comparison.purchase_energy_usd_per_h, USD),
        (
            "Best cloud option" if c.meets_requirement else "Closest cloud option (misses the requirement)",
            f"{c.instances} x {c.provider} {c.instance} ({c.region}); "
            + ", ".join(f"{n} {p}" for p, n in c.pricing_mix.items()),
            None,
        ),
        ("Cloud USD per hour", c.usd_per_h, USD),
        ("Renting the purchase's throughput (USD per hour)", comparison.rent_same_throughput_usd_per_h, USD),
    ]
    for i, (label, value, fmt) in enumerate(rows, start=4):
        put(ws, i, 1, label)
        put(ws, i, 2, value, fmt)
    put(ws, 10, 1, "Break-even (months of full use)", bold=True)
    formula(ws, 10, 2, '=IF(B8-B5>0,B4/((B8-B5)*730),"never")', NUM1, bold=True)
    put(ws, 11, 1, comparison.note)
    widths(ws, {1: 52, 2: 40})
    print_setup(ws, landscape=False)
