"""Quote-ready Excel workbooks (openpyxl): live formulas, bill of materials, alternatives, charts.

Sheets of the plan workbook: Summary, Quote, Alternatives, Sensitivity, (Buy vs rent), Assumptions. Every
money total is a formula over the Quote lines and the Summary's yellow inputs, so editing a quantity, a
price, the discount, the tax or a running-cost input recomputes it; every formula also carries its value
for previewers that do not recalculate (planner/report/xlsx.py). Each sheet prints one page wide, with
column widths from its content and long text wrapped.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from openpyxl.chart import BarChart, LineChart, Reference
from openpyxl.styles import Alignment, PatternFill
from openpyxl.worksheet.pagebreak import Break
from openpyxl.worksheet.worksheet import Worksheet

from planner import __version__
from planner.assumptions import all_constants
from planner.base.resources import display_name
from planner.base.units import format_count
from planner.model import binding
from planner.model.calibration import Calibration
from planner.model.parallelism import ZEROPP_OPTIONS
from planner.report.perf_text import FABRIC_LABEL
from planner.report.plan_text import (
    OBJECTIVE_TEXT,
    delivery_text,
    interruptions_text,
    layout_text,
    price_age_text,
    rack_text,
    system_text,
)
from planner.report.xlsx import (
    INPUT_FILL,
    NUM0,
    NUM1,
    PCT,
    USD,
    USD0,
    fit_heights,
    fit_widths,
    formula,
    header,
    new_workbook,
    pairs,
    paragraph,
    print_setup,
    put,
    ref,
    save,
    sheet,
    title,
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
    "Price date",
]
QTY, UNIT, EXT = 5, 6, 7
STALE_FILL = PatternFill("solid", fgColor="F8CBAD")  # a price older than stale_price_months


@dataclass
class PlanContext:
    """What the workbook needs beyond the Plan: the question, the model's settings, the catalogs used."""

    scenario: dict
    calibration: Calibration
    catalog_files: dict[str, str]  # path -> sha256 of the bytes read
    bandwidth_sweep: pd.DataFrame | None = None  # fabric, zeropp, node_gbps, achieved_tflops_per_gpu, fits_memory
    cost_curve: list[dict] = field(default_factory=list)  # target_tflops, capex_usd (None: infeasible), note
    cloud_comparison: BuyVsRent | None = None  # planner plan --compare-cloud
    hidden_sheets: dict[str, str] = field(default_factory=dict)  # "file[sheet]" -> "very hidden": not read


def write_plan(plan: Plan, context: PlanContext, path: Path) -> None:
    workbook = new_workbook()
    summary = workbook.active
    summary.title = "Summary"
    quote = sheet(workbook, "Quote")
    totals = _quote(quote, plan)
    _summary(summary, plan, context, totals)
    _alternatives(sheet(workbook, "Alternatives"), plan)
    _sensitivity(sheet(workbook, "Sensitivity"), plan, context)
    if context.cloud_comparison:
        comparison_sheet(sheet(workbook, "Buy vs rent"), context.cloud_comparison, plan)
    _assumptions(sheet(workbook, "Assumptions"), plan, context)
    save(workbook, path)


# ---------------------------------------------------------------- Quote


def _quote(ws: Worksheet, plan: Plan) -> dict[str, object]:
    """Lines per category with a subtotal each, then discount, tax and grand total. Returns the cell refs
    of the subtotals and grand total, and the capex they add up to ("_capex")."""
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
    sums: dict[str, float] = {}
    sections = list(dict.fromkeys(b.section for b in plan.bom))  # servers, compute fabric, storage, ... racks
    for category in sections:
        first = row
        for line in (b for b in plan.bom if b.section == category):
            for col, value in enumerate([line.category, line.vendor, line.sku, line.description], start=1):
                put(ws, row, col, value)
            put(ws, row, QTY, line.quantity, NUM0).fill = INPUT_FILL
            put(ws, row, UNIT, line.unit_usd, USD).fill = INPUT_FILL
            formula(ws, row, EXT, f"=E{row}*F{row}", USD, value=line.quantity * line.unit_usd)
            put(ws, row, 8, line.source)
            put(ws, row, 9, line.confidence)
            put(ws, row, 10, line.price_date + (" (older than 12 months)" if line.stale else ""))
            if line.stale:
                ws.cell(row, 10).fill = STALE_FILL
            row += 1
        sums[category] = sum(b.quantity * b.unit_usd for b in plan.bom if b.section == category)
        put(ws, row, 4, f"Subtotal {category}", bold=True)
        formula(ws, row, EXT, f"=SUM(G{first}:G{row - 1})", USD, bold=True, value=sums[category])
        subtotals[category] = ref(ws, row, EXT, absolute=True)
        row += 1
    optional_first = row
    for text in (
        "Support contract (optional: enter your vendor's quote; the Summary also estimates support per year)",
        "Installation quote (optional: your integrator's; then set the INSTALLATION line's quantity, if listed, to 0)",
    ):
        put(ws, row, 1, "services")
        put(ws, row, 4, text)
        put(ws, row, QTY, 0, NUM0).fill = INPUT_FILL
        put(ws, row, UNIT, 0.0, USD).fill = INPUT_FILL
        formula(ws, row, EXT, f"=E{row}*F{row}", USD, value=0.0)
        row += 1
    ws.auto_filter.ref = f"A{head_row}:J{row - 1}"
    row += 1
    hardware = sum(sums.values())
    sub_refs = ",".join(c.split("!")[1] for c in subtotals.values())
    put(ws, row, 4, "Hardware subtotal", bold=True)
    formula(
        ws,
        row,
        EXT,
        f"=SUM({sub_refs})+SUM(G{optional_first}:G{optional_first + 1})",
        USD,
        bold=True,
        value=hardware,
    )
    subtotal = row
    put(ws, row + 1, 4, "Discount %")
    put(ws, row + 1, UNIT, 0.0, PCT).fill = INPUT_FILL
    formula(ws, row + 1, EXT, f"=-G{subtotal}*F{row + 1}", USD, value=0.0)
    put(ws, row + 2, 4, "Tax %")
    put(ws, row + 2, UNIT, 0.0, PCT).fill = INPUT_FILL
    formula(ws, row + 2, EXT, f"=(G{subtotal}+G{row + 1})*F{row + 2}", USD, value=0.0)
    put(ws, row + 3, 4, "Grand total", bold=True)
    formula(ws, row + 3, EXT, f"=G{subtotal}+G{row + 1}+G{row + 2}", USD, bold=True, value=hardware)
    _not_priced(ws, row + 5, plan, column=4)
    limits = {1: (10, 14), 2: (8, 18), 3: (8, 26), 4: (20, 40), 5: (9, 10), 6: (12, 15), 7: (14, 18)}
    fit_widths(ws, limits | {8: (12, 24), 9: (10, 12), 10: (10, 16)}, from_row=head_row)
    fit_heights(ws)
    ws.freeze_panes = ws.cell(head_row + 1, 1)
    print_setup(ws, title_rows=f"{head_row}:{head_row}")
    return {**subtotals, "grand_total": ref(ws, row + 3, EXT, absolute=True), "_capex": hardware}


# ---------------------------------------------------------------- Summary


def _summary(ws: Worksheet, plan: Plan, context: PlanContext, totals: dict) -> None:
    c, m = plan.choice, plan.metrics
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
        ("GPUs", f"{c.gpus} x {c.gpu} ({c.gpus_per_node} per node{system_text(plan)})"),
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
        (
            "Micro-batch x gradient accumulation",
            f"{c.micro_batch} x {c.grad_accum}" if c.grad_accum else f"{c.micro_batch} (no global batch)",
        ),
        ("Parallel layout", layout_text(c, m)),
        ("Achieved TFLOPs per GPU", (m.achieved_tflops_per_gpu, NUM1)),
        ("MFU", (m.mfu, PCT)),
        ("Micro-step time (s)", (m.t_step_s, NUM1)),
        ("Tokens per second", (m.tokens_per_s, NUM0)),
        *_schedule_items(plan),
        ("Memory per GPU (GiB)", f"{m.memory_per_gpu_gib:.1f} of {m.usable_hbm_gib:.1f} usable"),
        ("Bound by", binding.label(m.binding, m.t_comm_exposed_s, m.t_step_s)),
        ("Prices", price_age_text(plan.prices)),
        ("Delivery", delivery_text(plan.delivery)),
    ]
    row = pairs(ws, row, "The answer", answer)
    row = _cost_block(ws, row, plan, context, totals)
    put(ws, row, 1, "Why this plan", bold=True)
    row += 1
    for note in plan.why or ["The cheapest configuration meeting every requirement."]:
        paragraph(ws, row, f"- {note}", 2)
        row += 1
    if plan.not_priced:
        put(ws, row + 1, 1, f"Not priced: {len(plan.not_priced)} items the totals leave out, listed on the Quote")
    fit_widths(ws, {1: (30, 46), 2: (24, 62)})
    fit_heights(ws)
    print_setup(ws, landscape=False)  # the answer on page 1, running costs and reasons on page 2 (row break)


def _schedule_items(plan: Plan) -> list[tuple[str, object]]:
    m, s = plan.metrics, plan.schedule
    if m.training_days is None:
        return [("Training days", "no token count given")]
    if s is None:
        return [("Training days", (m.training_days, NUM1))]
    allowed = s.deadline_days * (1 - s.schedule_margin)
    margin = f" less a {s.schedule_margin:.0%} margin = {allowed:.1f} days" if s.schedule_margin else ""
    how = (
        "given in the scenario"
        if s.goodput_given
        else f"{interruptions_text(s, top=2)}, {s.restart_minutes:g} min restart, checkpoints "
        + (
            f"every {s.checkpoint_interval_minutes:.0f} min ({s.checkpoint_write_s:.3g} s to write)"
            if s.checkpoint_interval_minutes is not None
            else "not needed"
        )
    )
    return [
        ("Training days, uninterrupted", (s.training_days, NUM1)),
        ("Goodput (share of time that trains)", f"{s.goodput:.1%}: {how}"),
        ("Effective training days (calendar)", (s.effective_days, NUM1)),
        ("Interruptions expected", (s.interruptions_expected, NUM0)),
        ("Deadline", f"{s.deadline_days:g} days{margin}: " + ("met" if s.meets_deadline else "MISSED")),
    ]


def _cost_block(ws: Worksheet, row: int, plan: Plan, context: PlanContext, totals: dict) -> int:
    """Capex by category (links to the Quote), then the running costs over the horizon from yellow inputs,
    and the TCO: all live formulas with their values."""
    cost, o = plan.cost, context.scenario.get("objective", {})
    put(ws, row, 1, "Cost", bold=True)
    row += 1
    for category, cell in totals.items():
        if category not in ("grand_total", "_capex"):
            put(ws, row, 1, category)
            formula(ws, row, 2, f"={cell}", USD, value=cost.by_section.get(category, 0.0))
            row += 1
    capex = row
    put(ws, row, 1, "Capex: grand total (Quote, after discount and tax)", bold=True)
    formula(ws, row, 2, f"={totals['grand_total']}", USD, bold=True, value=totals["_capex"])
    row += 2
    ws.row_breaks.append(Break(id=row - 1))  # page 1 answers and prices; page 2 runs the costs and says why
    put(ws, row, 1, "Running costs and TCO (yellow cells are inputs)", bold=True)
    row += 1
    cells: dict[str, int] = {}
    inputs = [
        ("years", "Horizon (years)", cost.years or o.get("years", 5.0), NUM1, True),
        ("draw", "Training draw (kW)", cost.draw_kw, NUM1, False),
        ("kwh", "Electricity (USD per kWh)", o.get("usd_per_kwh", 0.0), "0.0000", True),
        ("pue", "PUE (the plan's: its servers' by cooling, the network air-cooled)", cost.pue, "0.00", True),
    ]
    row = _inputs(ws, row, inputs, cells)
    energy = (
        "Energy over the horizon (USD): draw x 8,760 h x years x PUE x $/kWh",
        f"=B{cells['draw']}*8760*B{cells['years']}*B{cells['pue']}*B{cells['kwh']}",
        cost.energy_usd,
    )
    row = _line(ws, row, *energy, cells, "energy")
    row = _inputs(
        ws,
        row,
        [
            ("kw", "Nameplate IT power (kW)", cost.power_kw, NUM1, False),
            ("colo", "Colocation (USD per kW-month)", o.get("colocation_usd_per_kw_month", 0.0), USD, True),
        ],
        cells,
    )
    colocation = (
        "Colocation over the horizon (USD): kW x $/kW-month x 12 x years",
        f"=B{cells['kw']}*B{cells['colo']}*12*B{cells['years']}",
        cost.colocation_usd,
    )
    row = _line(ws, row, *colocation, cells, "colocation")
    share = o.get("support_share_of_capex_per_year", 0.0)
    row = _inputs(ws, row, [("share", "Support (share of capex per year)", share, PCT, True)], cells)
    support = (
        "Support over the horizon (USD): capex x share x years",
        f"=B{capex}*B{cells['share']}*B{cells['years']}",
        cost.support_usd,
    )
    row = _line(ws, row, *support, cells, "support")
    staff_inputs = [
        ("fte", "Operations staff (FTE)", o.get("staff_fte", 0.0), NUM1, True),
        ("salary", "Cost per FTE-year (USD)", o.get("staff_usd_per_fte_year", 0.0), USD0, True),
    ]
    row = _inputs(ws, row, staff_inputs, cells)
    staff = ("Staff over the horizon (USD)", f"=B{cells['fte']}*B{cells['salary']}*B{cells['years']}", cost.staff_usd)
    row = _line(ws, row, *staff, cells, "staff")
    put(ws, row, 1, "TCO (USD): capex + energy + colocation + support + staff", bold=True)
    parts = "+".join(f"B{cells[k]}" for k in ("energy", "colocation", "support", "staff"))
    formula(ws, row, 2, f"=B{capex}+{parts}", USD0, bold=True, value=cost.tco_usd)
    return _per_token(ws, row + 1, plan, row, cells["years"])


def _per_token(ws: Worksheet, row: int, plan: Plan, tco_row: int, years_row: int) -> int:
    """Tokens trained per second (the plan's rate, goodput counted) and the TCO per million of them over the
    horizon, as a formula of the TCO and horizon cells above."""
    m = plan.metrics
    if m.usd_per_million_tokens is None:
        return row + 1
    rate = m.trained_tokens_per_s
    put(ws, row, 1, "Tokens trained per second (the plan's rate x goodput)")
    put(ws, row, 2, float(rate), NUM0)
    put(ws, row + 1, 1, "TCO per million tokens (USD): TCO / (tokens/s x 3,600 s x 8,760 h x years) x 10^6")
    per_million = f"=B{tco_row}/(B{row}*3600*8760*B{years_row})*1000000"
    formula(ws, row + 1, 2, per_million, '"$"#,##0.000', value=m.usd_per_million_tokens)
    return row + 3


def _inputs(ws: Worksheet, row: int, items: list, cells: dict[str, int]) -> int:
    for key, label, value, fmt, editable in items:
        put(ws, row, 1, label)
        cell = put(ws, row, 2, float(value), fmt)
        if editable:
            cell.fill = INPUT_FILL
        cells[key] = row
        row += 1
    return row


def _line(ws: Worksheet, row: int, label: str, text: str, value: float, cells: dict[str, int], key: str) -> int:
    put(ws, row, 1, label)
    formula(ws, row, 2, text, USD0, value=value)
    cells[key] = row
    return row + 1


def _not_priced(ws: Worksheet, row: int, plan: Plan, column: int) -> int:
    """What the totals leave out, listed where finance reads the totals."""
    if not plan.not_priced:
        return row
    put(ws, row, column, "Not priced (not in these totals)", bold=True)
    for i, item in enumerate(plan.not_priced, start=1):
        put(ws, row + i, column, item)
    return row + len(plan.not_priced) + 1


def _layout_text(plan: Plan) -> str:
    lay = plan.layout
    if not lay:
        return "none"
    parts = [
        rack_text(lay),
        f"{lay['compute_racks']} compute + {lay['network_racks']} network racks",
        f"{lay['pdus']} PDUs",
        f"{lay['storage_switches']} storage, {lay['inband_switches']} in-band, {lay['oob_switches']} out-of-band "
        f"switches, {lay['ufm_appliances']} UFM appliances",
    ]
    return "; ".join(parts)


def _question(scenario: dict) -> list[tuple[str, object]]:
    w, r, o, c = (scenario.get(k, {}) for k in ("workload", "requirement", "objective", "constraints"))
    model = w.get("model") or f"{format_count(w.get('params'))} parameters"
    return [
        ("Model", model),
        ("Requirement", _requirement(r)),
        ("Target TFLOPs per GPU", scenario.get("target_tflops") or "none"),
        ("Micro-batches allowed", ", ".join(map(str, w.get("micro_batches", [])))),
        ("Global batch", w.get("global_batch") or "not fixed"),
        ("ZeRO++", ", ".join(k for k in ZEROPP_OPTIONS if w.get(k)) or "off"),
        ("Objective", _objective(o)),
        ("Constraints", _constraints(c)),
        *([("Schedule risk", _reliability(scenario.get("reliability", {})))] if r.get("tokens") else []),
    ]


def _objective(o: dict) -> str:
    years = f"{o.get('years', 5):g} years"
    kind = o.get("kind", "capex")
    if kind == "capex":
        return f"least capex (the TCO below is reported over {years})"
    return f"{OBJECTIVE_TEXT[kind]} (TCO over {years})"


def _requirement(r: dict) -> str:
    if r.get("gpus"):
        return f"{r['gpus']} GPUs"
    if r.get("tokens"):
        margin = f", finishing {r['schedule_margin']:.0%} early" if r.get("schedule_margin") else ""
        return f"{format_count(r['tokens'])} tokens in {r['days']:g} days{margin}"
    return f"at least {format_count(r.get('min_tokens_per_s') or 0)} tokens/s"


def _constraints(c: dict) -> str:
    """Constraints as a reader writes them: 'budget $18,000,000; gpus H100, H200; max nodes 256'."""
    parts = []
    for key, value in c.items():
        if value in (None, [], ""):
            continue
        name = key.replace("_usd", "").replace("_", " ")
        if isinstance(value, list):
            value = ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in value)
        elif key == "budget_usd":
            value = f"${value:,.0f}"
        elif isinstance(value, float):
            value = f"{value:g}"
        parts.append(f"{name} {value}")
    return "; ".join(parts) or "none"


def _reliability(rel: dict) -> str:
    if rel.get("goodput") is not None:
        return f"goodput {rel['goodput']:.0%} (given)"
    interval = rel.get("checkpoint_interval_minutes")
    given = rel.get("interruptions_per_1000_node_days")
    return (
        (
            f"{given:g} interruptions per 1000 node-days, "
            if given is not None
            else "failure rates x the bill of materials, "
        )
        + f"{rel.get('restart_minutes', 0):g} min restart, checkpoints "
        + (f"every {interval:g} min" if interval else "at the Young/Daly interval")
        + f", written at {rel.get('checkpoint_write_gb_per_s_per_node', 0):g} GB/s per node"
    )


# ---------------------------------------------------------------- Alternatives

ALTERNATIVE_COLUMNS = [
    "Group",
    "Option",
    "Servers",
    "Network",
    "Fabric",
    "Micro-batch",
    "TFLOPs/GPU",
    "Days",
    "Capex (USD)",
    "Capex delta (USD)",
    "TCO (USD)",
]


def _alternatives(ws: Worksheet, plan: Plan) -> None:
    title(ws, "Alternatives", "the capex delta is a live formula against the chosen plan's capex (cell I3)")
    put(ws, 3, 1, "Chosen plan capex (USD)", bold=True)
    put(ws, 3, 9, plan.cost.capex_usd, USD)
    head = 5
    header(ws, head, ALTERNATIVE_COLUMNS)
    row = head + 1
    for group, items in (
        ("best per fabric", plan.per_fabric),
        ("best per NIC speed", plan.per_nic_speed),
        ("best per GPU", plan.per_gpu),
        ("next-best", plan.alternatives),
    ):
        for s in items:
            _alternative_row(ws, row, group, s, plan.cost.capex_usd)
            row += 1
    ws.auto_filter.ref = f"A{head}:K{max(row - 1, head)}"
    ws.freeze_panes = ws.cell(head + 1, 1)
    put(ws, row + 1, 1, "Days: calendar days with interruptions counted (goodput), where there is a deadline.")
    limits = {1: (12, 18), 2: (8, 12), 3: (12, 26), 4: (14, 28), 5: (14, 28), 6: (7, 8), 7: (8, 9), 8: (7, 8)}
    fit_widths(ws, limits | {9: (14, 16), 10: (14, 16), 11: (14, 16)}, from_row=head)
    fit_heights(ws)
    print_setup(ws, title_rows=f"{head}:{head}")


def _alternative_row(ws: Worksheet, row: int, group: str, s: Summary, chosen_capex: float) -> None:
    c, m = s.choice, s.metrics
    network = (
        "none" if not c.tier else f"{c.nics_per_node} x {c.nic} ({c.node_gbps:,.0f} Gbps), {FABRIC_LABEL[c.fabric]}"
    )
    for col, value in enumerate([group, s.label, f"{c.nodes} x {c.server}", network, c.fabric_text], start=1):
        put(ws, row, col, value)
    put(ws, row, 6, c.micro_batch, NUM0)
    put(ws, row, 7, m.achieved_tflops_per_gpu, NUM1)
    days = m.effective_training_days or m.training_days
    if days is not None:
        put(ws, row, 8, days, NUM1)
    put(ws, row, 9, s.cost.capex_usd, USD)
    formula(ws, row, 10, f"=I{row}-$I$3", USD, value=s.cost.capex_usd - chosen_capex)
    put(ws, row, 11, s.cost.tco_usd, USD)


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
        row = _cost_curve_block(ws, row, context.cost_curve)
    fit_widths(ws, {1: (12, 18), 2: (12, 16), 3: (12, 16), 4: (12, 16), 5: (12, 16)}, from_row=4)
    fit_heights(ws)
    print_setup(ws)


def _cost_curve_block(ws: Worksheet, row: int, curve: list[dict]) -> int:
    put(ws, row, 1, "Capex of the cheapest plan vs target TFLOPs per GPU", bold=True)
    header(ws, row + 1, ["Target TFLOPs/GPU", "Capex (USD)", "Note"])
    first = row + 2
    for i, point in enumerate(curve):
        put(ws, first + i, 1, point["target_tflops"], NUM1)
        if point["capex_usd"] is not None:
            put(ws, first + i, 2, point["capex_usd"], USD0)
        put(ws, first + i, 3, point.get("note", ""))
    last = first + len(curve) - 1
    chart = BarChart()
    chart.title, chart.y_axis.title, chart.x_axis.title = "Capex vs target (axis from $0)", "USD", "target TFLOPs/GPU"
    chart.add_data(Reference(ws, min_col=2, min_row=first - 1, max_row=last), titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=1, min_row=first, max_row=last))
    chart.y_axis.scaling.min = 0  # from zero: a 2% difference must look like 2%
    chart.y_axis.numFmt = '"$"#,##0'
    _show_axes(chart)
    chart.height, chart.width = 8, 16
    ws.add_chart(chart, f"E{row}")
    return max(last + 2, row + 18)


def _show_axes(chart) -> None:
    """openpyxl 3.1 marks axes deleted unless told otherwise (Excel then hides them)."""
    chart.x_axis.delete = False
    chart.y_axis.delete = False


SERIES = [("ib", False, "IB"), ("roce", False, "RoCE"), ("ib", True, "IB + ZeRO++"), ("roce", True, "RoCE + ZeRO++")]


def bandwidth_block(ws: Worksheet, row: int, sweep: pd.DataFrame, heading: str, chart_below: bool = False) -> int:
    """Table of achieved TFLOPs/GPU by node Gbps for IB, RoCE and each with ZeRO++, and a line chart (to
    the right, or below when the sheet's columns are already wide). A series whose configuration does not
    fit in GPU memory is marked, with why, under the table."""
    put(ws, row, 1, heading, bold=True)
    # only the series the sweep holds (no ZeRO++ series for FSDP: an empty series is a legend entry for nothing)
    series = [(f, z, label) for f, z, label in SERIES if ((sweep["fabric"] == f) & (sweep["zeropp"] == z)).any()]
    header(ws, row + 1, ["Node Gbps"] + [label for _, _, label in series])
    gbps = sorted(sweep["node_gbps"].unique())
    keys = zip(sweep["fabric"], sweep["zeropp"], sweep["node_gbps"], strict=True)
    achieved = {}  # the first row of each (fabric, ZeRO++, Gbps): one pass, not a filter per cell
    for key, tflops in zip(keys, sweep["achieved_tflops_per_gpu"], strict=True):
        achieved.setdefault(key, tflops)
    first = row + 2
    for i, value in enumerate(gbps):
        put(ws, first + i, 1, float(value), NUM0)
        for col, (fab, zpp, _) in enumerate(series, start=2):
            if (fab, zpp, value) in achieved:
                put(ws, first + i, col, float(achieved[(fab, zpp, value)]), NUM1)
    last = first + len(gbps) - 1
    notes = memory_notes(sweep)
    for i, note in enumerate(notes):
        put(ws, last + 1 + i, 1, note)
    chart = LineChart()
    chart.title, chart.y_axis.title, chart.x_axis.title = heading, "TFLOPs/GPU", "node Gbps"
    chart.add_data(
        Reference(ws, min_col=2, max_col=1 + len(series), min_row=first - 1, max_row=last), titles_from_data=True
    )
    chart.set_categories(Reference(ws, min_col=1, min_row=first, max_row=last))
    _show_axes(chart)
    chart.height, chart.width = 8, 16
    below = last + 2 + len(notes)
    ws.add_chart(chart, f"A{below}" if chart_below else f"H{row}")
    for col, (fab, zpp, label) in enumerate(series, start=2):
        if not _fits(sweep, fab, zpp):
            ws.cell(first - 1, col).value = f"{label} (does not fit)"
    return below + 17 if chart_below else max(last + 3 + len(notes), row + 18)


def _fits(sweep: pd.DataFrame, fabric: str, zeropp: bool) -> bool:
    if "fits_memory" not in sweep:
        return True
    rows = sweep[(sweep["fabric"] == fabric) & (sweep["zeropp"] == zeropp)]
    return bool(rows["fits_memory"].all())


def memory_notes(sweep: pd.DataFrame) -> list[str]:
    """One line per ZeRO++ setting whose configuration does not fit in GPU memory."""
    if "fits_memory" not in sweep:
        return []
    notes = []
    for zeropp, rows in sweep.groupby("zeropp", sort=True):
        if not rows["fits_memory"].all():
            r = rows.iloc[0]
            label = "with ZeRO++" if zeropp else "without ZeRO++"
            notes.append(
                f"Does not fit {label}: {r['memory_per_gpu_gib']:.1f} GiB per GPU needed of "
                f"{r['usable_hbm_gib']:.1f} usable on {int(r['gpus'])} GPUs; its TFLOPs are not reachable."
            )
    return notes


# ---------------------------------------------------------------- Assumptions


def rounded(value: object) -> object:
    """Figures as a reader wants them: 5 significant digits (126.030769230769 -> 126.03)."""
    if isinstance(value, bool) or not isinstance(value, float):
        return value
    return float(f"{value:.5g}")


def _assumptions(ws: Worksheet, plan: Plan, context: PlanContext) -> None:
    row = title(ws, "Assumptions", "every constant the figures depend on, with its unit and source")
    header(ws, row, ["Name", "Value", "Unit", "Source"])
    head = row
    row += 1
    cal = context.calibration
    entries = [(k.name, k.value, k.unit, k.source) for k in all_constants()]
    fitted = {k: v for k, v in cal.model_dump().items() if k not in ("source", "fit", "uncertainty")}
    for k, v in fitted.items():  # one row per fitted value (per GPU, framework or fabric), rounded
        entries += [(f"calibrated {k}[{g}]", x, "", cal.source) for g, x in v.items()] if isinstance(v, dict) else []
        entries += [] if isinstance(v, dict) else [(f"calibrated {k}", v, "", cal.source)]
    for key, label in (("leave_one_source_out", "leave-one-source-out"), ("leave_one_publication_out",
                       "leave-one-publication-out")):  # fmt: skip
        record = cal.fit.get(key, {})  # (a calibration file's free-form record: checked)
        if isinstance(record, dict) and isinstance(record.get("median_abs_error"), int | float):
            entries += [(f"{label} median |error|", record["median_abs_error"], "fraction", "planner validate")]
    entries += [("confidence", plan.metrics.confidence or "none (point prediction)", "probability", "scenario")]
    for section in ("objective", "reliability", "layout", "cabling"):
        entries += [
            (f"{section}.{k}", v, "m" if section == "cabling" else "", "scenario")
            for k, v in context.scenario.get(section, {}).items()
            if v is not None
        ]
    for name, value, unit, source in entries:
        put(ws, row, 1, name)
        put(ws, row, 2, rounded(value) if isinstance(value, int | float) else str(value))
        put(ws, row, 3, unit).alignment = Alignment(indent=1)
        put(ws, row, 4, source)
        row += 1
    ws.auto_filter.ref = f"A{head}:D{row - 1}"
    ws.freeze_panes = ws.cell(head + 1, 1)
    row += 1
    put(ws, row, 1, "Catalog files used", bold=True)
    header(ws, row + 1, ["File", "SHA-256"])
    row += 2
    for path, digest in context.catalog_files.items():
        put(ws, row, 1, display_name(path))
        put(ws, row, 2, digest)
        ws.merge_cells(start_row=row, start_column=2, end_row=row, end_column=4)
        row += 1
    for label, state in context.hidden_sheets.items():
        put(ws, row, 1, display_name(label))
        put(ws, row, 2, f"not read: a {state} sheet (only the sheets a person sees are read)")
        ws.merge_cells(start_row=row, start_column=2, end_row=row, end_column=4)
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
        ws.merge_cells(start_row=row, start_column=2, end_row=row, end_column=4)
        row += 1
    # after the catalog files: a long path (an installed planner's own files) wraps rather than being cut
    fit_widths(ws, {1: (24, 40), 2: (10, 14), 3: (14, 34), 4: (30, 90)}, from_row=head)
    fit_heights(ws)
    print_setup(ws, title_rows=f"{head}:{head}")


# ---------------------------------------------------------------- Buy vs rent


def comparison_sheet(ws: Worksheet, comparison: BuyVsRent, plan: Plan | None = None) -> None:
    title(ws, "Buy vs rent", f"the same throughput as the purchase, rented at {comparison.pricing_compared} pricing")
    c = comparison.cloud
    rows = [
        ("Purchase capex (USD)", comparison.purchase_capex_usd, USD0),
        (
            "Running the purchase (USD per hour: energy, colocation, support, staff)",
            comparison.purchase_running_usd_per_h,
            USD,
        ),
        ("of which energy (USD per hour)", comparison.purchase_energy_usd_per_h, USD),
        (
            "Best cloud option" if c.meets_requirement else "Closest cloud option (misses the requirement)",
            f"{c.instances} x {c.provider} {c.instance} ({c.region}); "
            + ", ".join(f"{n} {p}" for p, n in c.pricing_mix.items()),
            None,
        ),
        ("Pricing compared", f"{comparison.pricing_compared} (spot left out: a purchase is not preempted)", None),
        ("Cloud USD per hour", c.usd_per_h, USD),
        ("Renting the purchase's throughput (USD per hour)", comparison.rent_same_throughput_usd_per_h, USD),
    ]
    for i, (label, value, fmt) in enumerate(rows, start=4):
        put(ws, i, 1, label)
        put(ws, i, 2, value, fmt)
    months = comparison.break_even_months
    put(ws, 12, 1, "Break-even (months of full use)", bold=True)
    formula(ws, 12, 2, '=IF(B10-B5>0,B4/((B10-B5)*730),"never")', NUM1, bold=True, value=months if months else "never")
    paragraph(ws, 13, comparison.note, 2)
    row = 15
    for term in comparison.committed:  # the same comparison against each commitment term, live as above
        put(ws, row, 1, f"On a {term.pricing} commitment: {term.instances} x {term.offering}", bold=True)
        put(ws, row + 1, 1, "Renting the purchase's throughput (USD per hour, whole terms billed)")
        put(ws, row + 1, 2, term.rent_same_throughput_usd_per_h, USD)
        put(ws, row + 2, 1, f"Break-even (months of full use; the term is {term.term_months:g})")
        value = term.break_even_months if term.break_even_months else "never"
        formula(ws, row + 2, 2, f'=IF(B{row + 1}-B5>0,B4/((B{row + 1}-B5)*730),"never")', NUM1, value=value)
        row += 4
    # widths from the two columns above (the cumulative table below adds a third, which long text in the
    # second would otherwise run into)
    fit_widths(ws, {1: (30, 52), 2: (16, 60)})
    row = _per_run(ws, row, comparison, plan)
    row = _per_utilisation(ws, row, comparison)
    _cumulative_chart(ws, row, comparison)
    ws.column_dimensions["C"].width = 16
    fit_heights(ws)
    print_setup(ws, landscape=False)


# the cells of the comparison's inputs above (live formulas below refer to them)
CAPEX_CELL, RUNNING_CELL, RENT_CELL = "$B$4", "$B$5", "$B$10"
HOURS_PER_MONTH = 730
UTILISATIONS = (0.25, 0.5, 0.75, 1.0)
CHART_YEARS = 5


def _per_run(ws: Worksheet, row: int, comparison: BuyVsRent, plan: Plan | None) -> int:
    """This run rented against bought: its calendar hours, what renting them costs, and the runs of this size
    after which buying is cheaper (live formulas of the inputs above)."""
    days = plan.metrics.effective_training_days or plan.metrics.training_days if plan is not None else None
    if not days:
        return row
    put(ws, row, 1, "This run", bold=True)
    hours = days * 24
    rent = comparison.rent_same_throughput_usd_per_h * hours
    own = comparison.purchase_running_usd_per_h * hours
    put(ws, row + 1, 1, "Calendar hours of this run (the plan's training days, goodput counted)")
    put(ws, row + 1, 2, hours, NUM0)
    put(ws, row + 2, 1, "Renting it (USD)")
    formula(ws, row + 2, 2, f"={RENT_CELL}*B{row + 1}", USD0, value=rent)
    put(ws, row + 3, 1, "Running the purchase for it (USD, beside the capex)")
    formula(ws, row + 3, 2, f"={RUNNING_CELL}*B{row + 1}", USD0, value=own)
    put(ws, row + 4, 1, "Runs of this size to break even", bold=True)
    saved = rent - own
    runs = comparison.purchase_capex_usd / saved if saved > 0 else "never"
    text = f'=IF(B{row + 2}-B{row + 3}>0,{CAPEX_CELL}/(B{row + 2}-B{row + 3}),"never")'
    formula(ws, row + 4, 2, text, NUM1, bold=True, value=runs)
    return row + 6


def _per_utilisation(ws: Worksheet, row: int, comparison: BuyVsRent) -> int:
    """Break-even months when the cluster is busy only part of the time: renting pays for the busy hours, the
    purchase runs (power, space, support) all of them."""
    put(ws, row, 1, "Break-even by utilisation", bold=True)
    header(ws, row + 1, ["Utilisation (share of hours training)", "Break-even (months)"])
    rent, running = comparison.rent_same_throughput_usd_per_h, comparison.purchase_running_usd_per_h
    for i, share in enumerate(UTILISATIONS, start=row + 2):
        put(ws, i, 1, share, "0%")
        gain = rent * share - running
        value = comparison.purchase_capex_usd / (gain * HOURS_PER_MONTH) if gain > 0 else "never"
        gain_cell = f"({RENT_CELL}*A{i}-{RUNNING_CELL})"
        text = f'=IF({gain_cell}>0,{CAPEX_CELL}/({gain_cell}*{HOURS_PER_MONTH}),"never")'
        formula(ws, i, 2, text, NUM1, value=value)
    return row + 3 + len(UTILISATIONS)


def _cumulative_chart(ws: Worksheet, row: int, comparison: BuyVsRent) -> None:
    """Cumulative cost by month at full use, bought and rented (live formulas), and their lines."""
    put(ws, row, 1, "Cumulative cost at full use", bold=True)
    header(ws, row + 1, ["Month", "Bought (USD)", "Rented (USD)"])
    first = row + 2
    months = range(0, 12 * CHART_YEARS + 1, 6)
    for i, month in enumerate(months, start=first):
        put(ws, i, 1, month, NUM0)
        bought = comparison.purchase_capex_usd + comparison.purchase_running_usd_per_h * HOURS_PER_MONTH * month
        rented = comparison.rent_same_throughput_usd_per_h * HOURS_PER_MONTH * month
        formula(ws, i, 2, f"={CAPEX_CELL}+{RUNNING_CELL}*{HOURS_PER_MONTH}*A{i}", USD0, value=bought)
        formula(ws, i, 3, f"={RENT_CELL}*{HOURS_PER_MONTH}*A{i}", USD0, value=rented)
    last = first + len(months) - 1
    chart = LineChart()
    chart.title, chart.y_axis.title, chart.x_axis.title = "Bought vs rented, cumulative", "USD", "months"
    chart.add_data(Reference(ws, min_col=2, max_col=3, min_row=first - 1, max_row=last), titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=1, min_row=first, max_row=last))
    chart.y_axis.number_format = '"$"#,##0,,"M"'
    _show_axes(chart)
    chart.height, chart.width = 8, 15
    ws.add_chart(chart, f"A{last + 2}")
