"""The fleet workbook (`planner fleet -o fleet.xlsx`): summary, purchase schedule with live totals, a
Gantt-style timetable chart, pool capacity and site power, serving, the cash flow with its chart, cost by
workload and the assumptions. Cells are written through report/xlsx.py: text is never a formula, and the
file is written atomically."""

from __future__ import annotations

from pathlib import Path

from openpyxl.chart import BarChart, LineChart, Reference, Series
from openpyxl.styles import Alignment, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from planner import __version__
from planner.assumptions import model as A
from planner.assumptions import serving as S
from planner.report.plan_text import RECOMPUTE_WORDS
from planner.report.xlsx import (
    NUM0,
    NUM1,
    PCT,
    USD0,
    column_total,
    fit_columns,
    formula,
    header,
    new_workbook,
    pairs,
    print_setup,
    put,
    save,
    sheet,
    title,
)
from planner.results import FleetPlan

MAX_TEXT_WIDTH = 60  # characters: a column of longer text wraps instead
RUN_FILL = PatternFill("solid", fgColor="4F81BD")
LATE_FILL = PatternFill("solid", fgColor="C0504D")


def _fit(ws: Worksheet, columns: dict[int, float]) -> None:
    fit_columns(ws, columns, MAX_TEXT_WIDTH)


def write_fleet(plan: FleetPlan, path: Path) -> None:
    workbook = new_workbook()
    summary = workbook.active
    summary.title = "Summary"
    _summary(summary, plan)
    _purchases(sheet(workbook, "Purchases"), plan)
    _timetable(sheet(workbook, "Timetable"), plan)
    _capacity(sheet(workbook, "Capacity"), plan)
    _serving(sheet(workbook, "Inference"), plan)
    _cash_flow(sheet(workbook, "Cash flow"), plan)
    _attribution(sheet(workbook, "Cost by workload"), plan)
    _assumptions(sheet(workbook, "Assumptions"), plan)
    save(workbook, path)


def _axes_visible(chart) -> None:
    """Some spreadsheet programs hide axes whose `delete` flag is unset; lines are drawn straight (a spline
    between quarters would show values that were never planned)."""
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    for series in chart.series:
        series.smooth = False


# ---------------------------------------------------------------- Summary


def _summary(ws: Worksheet, plan: FleetPlan) -> None:
    row = title(ws, f"Fleet plan: {plan.name}", f"{plan.periods[0]} to {plan.periods[-1]}; planner {__version__}")
    proven = "unknown" if plan.gap_proven is None else plan.gap_proven
    size = plan.model_size
    items = [
        ("Status", plan.status),
        ("Solver", f"{plan.solver.upper()}, {plan.solver_threads} thread(s)"),
        ("Repeatable", f"no: {plan.repeat_note}" if plan.repeat_note else "yes"),
        ("Gap asked", (plan.gap_requested, PCT)),
        ("Gap proven", (proven, PCT) if plan.gap_proven is not None else proven),
        ("Solve seconds", (plan.solve_seconds, NUM1)),
        ("Discounted cost (USD)", (plan.objective_usd, USD0) if plan.objective_usd is not None else "none"),
        ("Residual value credited (USD)", (plan.residual_usd, USD0)),
        ("Lateness penalties (USD)", (plan.penalties_usd, USD0)),
        ("Model", f"{size['variables']:,} variables ({size['integer_variables']:,} integer), "
                  f"{size['constraints']:,} constraints, {size['training_columns']:,} possible runs"),
        ("Brute force would list", f"about 1e{plan.enumeration_log10:.0f} plans"),
    ]  # fmt: skip
    row = pairs(ws, row, "The answer", items)
    if plan.infeasible:
        row = _lines(ws, row, "Cannot be met as written", plan.infeasible)
        lines = [f"relax {r.relaxed}: {'; '.join(r.changes)}" for r in plan.relaxations]
        row = _lines(ws, row, f"Relaxations, cheapest first ({plan.shown})", lines)
    row = _lines(ws, row, "What binds", plan.binding or ["nothing is at a limit"])
    _lines(ws, row, "Sheets", [
        "Purchases: what to buy, when, from whom, at what tier (live totals)",
        "Timetable: each training run's pool, size and quarters, with a Gantt chart",
        "Capacity: nodes and busy GPUs per pool, site power per quarter",
        "Inference: where each service's replicas run per quarter",
        "Cash flow: spend per quarter by category, discounted, cumulative, with a chart",
        "Cost by workload: the discounted cost split by who uses what",
        "Assumptions: what the figures rest on",
    ])  # fmt: skip
    _fit(ws, {1: 30, 2: 96})
    print_setup(ws, landscape=False)


def _lines(ws: Worksheet, row: int, heading: str, lines: list[str]) -> int:
    put(ws, row, 1, heading, bold=True)
    for i, line in enumerate(lines, start=row + 1):
        put(ws, i, 2, line)
    return row + len(lines) + 2


# ---------------------------------------------------------------- Purchases


def _purchases(ws: Worksheet, plan: FleetPlan) -> None:
    row = title(ws, "Purchase schedule", "deliveries per quarter; extended = units x (unit price + NICs and links)")
    names = ["Period", "Server", "Vendor", "Pool", "Tier", "Units", "Unit USD", "NICs+links USD/node", "Extended USD",
             "Catalog row", "Price date"]  # fmt: skip
    header(ws, row, names)
    first = row + 1
    for i, p in enumerate(plan.purchases, start=first):
        for col, value in enumerate([p.period, p.server, p.vendor, p.pool, p.tier], start=1):
            put(ws, i, col, value)
        put(ws, i, 6, p.units, NUM0)
        put(ws, i, 7, p.unit_usd, USD0)
        put(ws, i, 8, p.extra_usd_per_node, USD0)
        formula(ws, i, 9, f"=F{i}*(G{i}+H{i})", USD0, value=p.units * (p.unit_usd + p.extra_usd_per_node))
        put(ws, i, 10, p.source)
        put(ws, i, 11, p.price_date + (" (older than 12 months)" if p.stale else ""))
    last = first + len(plan.purchases) - 1
    row = last + 1
    put(ws, row, 8, "Servers total", bold=True)
    column_total(ws, row, 9, first, last, (p.units * (p.unit_usd + p.extra_usd_per_node) for p in plan.purchases), USD0)
    row += 2
    put(ws, row, 1, "Network parts", bold=True)
    header(ws, row + 1, ["Period", "Pool", "Item", "SKU", "Quantity", "Unit USD", "Extended USD"])
    first = row + 2
    for i, n in enumerate(plan.network, start=first):
        for col, value in enumerate([n.period, n.pool, n.item, n.sku], start=1):
            put(ws, i, col, value)
        put(ws, i, 5, n.quantity, NUM0)
        put(ws, i, 6, n.unit_usd, USD0)
        formula(ws, i, 7, f"=E{i}*F{i}", USD0, value=n.quantity * n.unit_usd)
    last = first + len(plan.network) - 1
    put(ws, last + 1, 5, "Network total", bold=True)
    column_total(ws, last + 1, 7, first, last, (n.quantity * n.unit_usd for n in plan.network), USD0)
    ws.freeze_panes = "A5"
    _fit(ws, {1: 9, 2: 40, 3: 30, 4: 40, 5: 22, 6: 9, 7: 13, 8: 14, 9: 16, 10: 40, 11: 26})
    print_setup(ws)


# ---------------------------------------------------------------- Timetable (Gantt)


def _timetable(ws: Worksheet, plan: FleetPlan) -> None:
    row = title(
        ws, "Training timetable", "each run holds its nodes for whole quarters; the chart shows them per quarter"
    )
    periods = plan.periods
    names = ["Job", "Where", "Nodes", "GPUs", "TFLOPs/GPU", "Days of compute", "Done by", "Deadline",
             "Quarters late", "Start (quarters in)", "Quarters held", "Parallel layout"]  # fmt: skip
    header(ws, row, names + periods)
    first = row + 1
    for i, r in enumerate(plan.jobs, start=first):
        start = periods.index(r.start)
        used = f"{r.layout or 'data parallel'}, {RECOMPUTE_WORDS.get(r.checkpointing, r.checkpointing)}"
        values = [r.job, r.where, r.nodes, r.gpus, r.achieved_tflops_per_gpu, r.days, r.finish_date, r.deadline,
                  r.late_periods, start, len(r.periods), used]  # fmt: skip
        formats = [None, None, NUM0, NUM0, NUM1, NUM0, None, None, NUM0, NUM0, NUM0, None]
        for col, (value, fmt) in enumerate(zip(values, formats, strict=True), start=1):
            put(ws, i, col, value, fmt)
        late_from = periods.index(r.deadline) + 1
        for j, label in enumerate(periods):
            if label in r.periods:
                cell = put(ws, i, len(names) + 1 + j, r.nodes, NUM0)
                cell.fill = LATE_FILL if j >= late_from else RUN_FILL
    last = first + len(plan.jobs) - 1
    if plan.jobs:  # a Gantt chart over quarter names: each run a series of the nodes it holds per quarter
        chart = BarChart()
        chart.type, chart.grouping, chart.overlap = "col", "stacked", 100
        chart.title = "Training runs by quarter: nodes held"
        grid = len(names) + 1
        for i, r in enumerate(plan.jobs, start=first):
            values = Reference(ws, min_col=grid, max_col=grid + len(periods) - 1, min_row=i)
            chart.series.append(Series(values, title=r.job))
        chart.set_categories(Reference(ws, min_col=grid, max_col=grid + len(periods) - 1, min_row=row))
        chart.y_axis.title, chart.x_axis.title = "nodes", "quarter"
        chart.y_axis.scaling.min = 0
        _axes_visible(chart)
        chart.gapWidth = 20
        chart.height, chart.width = 9, 24
        ws.add_chart(chart, f"A{last + 3}")
    ws.freeze_panes = ws.cell(first, 2)
    _fit(ws, {1: 22, 2: 40, 3: 7, 4: 7, 5: 11, 6: 10, 7: 12, 8: 10, 9: 9, 10: 10, 11: 10, 12: 30})
    for j in range(len(periods)):
        ws.column_dimensions[get_column_letter(len(names) + 1 + j)].width = 8
    print_setup(ws)


# ---------------------------------------------------------------- Capacity and power


def _capacity(ws: Worksheet, plan: FleetPlan) -> None:
    row = title(ws, "Capacity per quarter", "nodes in service per pool, the share of their GPUs in use, site power")
    periods = plan.periods
    header(ws, row, ["Pool", "Topology", "Figure", *periods])
    r = row + 1
    for pool in plan.pools:
        rows = [("nodes", pool.nodes, NUM0), ("installed nodes", pool.installed, NUM0),
                ("GPUs busy", pool.gpus_busy, NUM1), ("leaf switches", pool.leaves, NUM0),
                ("spine switches", pool.spines, NUM0)]  # fmt: skip
        for label, values, fmt in rows:
            put(ws, r, 1, pool.name)
            put(ws, r, 2, pool.topology)
            put(ws, r, 3, label)
            for j, value in enumerate(values):
                put(ws, r, 4 + j, value, fmt)
            r += 1
    r += 1
    put(ws, r, 1, "Site power (kW)", bold=True)
    header(ws, r + 1, ["Figure", "", "", *periods])
    used, site = r + 2, r + 3
    put(ws, used, 1, "IT power in service (nameplate)")
    put(ws, site, 1, "Site limit")
    for j, c in enumerate(plan.cash_flow):
        put(ws, used, 4 + j, c.power_kw, NUM0)
        if c.site_kw is not None:
            put(ws, site, 4 + j, c.site_kw, NUM0)
    if plan.cash_flow:
        chart = LineChart()
        chart.title, chart.y_axis.title = "IT power vs the site", "kW"
        chart.add_data(Reference(ws, min_col=3, max_col=3 + len(periods), min_row=used, max_row=site),
                       from_rows=True, titles_from_data=True)  # fmt: skip
        chart.set_categories(Reference(ws, min_col=4, max_col=3 + len(periods), min_row=r + 1))
        _axes_visible(chart)
        chart.height, chart.width = 8, 18
        ws.add_chart(chart, f"A{site + 2}")
        put(ws, used, 3, "in service")
        put(ws, site, 3, "site limit")
    _fit(ws, {1: 42, 2: 22, 3: 16, **{4 + j: 9 for j in range(len(periods))}})
    print_setup(ws)


# ---------------------------------------------------------------- Inference


def _serving(ws: Worksheet, plan: FleetPlan) -> None:
    row = title(ws, "Inference capacity", "replicas per service, resource and quarter (fractions share GPU time)")
    names = ["Service", "Period", "Demand tokens/s", "Where", "Replicas", "TP/EP", "GPUs each", "Batch",
             "ms per token", "Tokens/s"]  # fmt: skip
    header(ws, row, names)
    for i, p in enumerate(plan.placements, start=row + 1):
        values = [p.service, p.period, p.demand_tokens_per_s, p.where, p.replicas, p.layout, p.gpus_per_replica,
                  p.batch, p.ms_per_token, p.tokens_per_s]  # fmt: skip
        formats = [None, None, NUM0, None, NUM1, None, NUM0, NUM0, NUM1, NUM0]
        for col, (value, fmt) in enumerate(zip(values, formats, strict=True), start=1):
            put(ws, i, col, value, fmt)
    ws.freeze_panes = ws.cell(row + 1, 1)
    _fit(ws, {1: 18, 2: 8, 3: 12, 4: 34, 5: 9, 6: 7, 7: 9, 8: 7, 9: 9, 10: 10})
    print_setup(ws)


# ---------------------------------------------------------------- Cash flow


def _cash_flow(ws: Worksheet, plan: FleetPlan) -> None:
    row = title(ws, "Cash flow", "nominal USD per quarter; total, present value and cumulative are live formulas")
    names = ["Period", "Servers", "Network", "Energy", "Colocation", "Cloud", "Total", "Discount factor",
             "Present value", "Cumulative"]  # fmt: skip
    header(ws, row, names)
    first = row + 1
    columns: dict[int, list[float]] = {col: [] for col in (2, 3, 4, 5, 6, 7, 9)}  # the cached values, by column
    cumulative = 0.0
    for i, c in enumerate(plan.cash_flow, start=first):
        put(ws, i, 1, c.period)
        spend = [round(v, 2) for v in (c.servers_usd, c.network_usd, c.energy_usd, c.colocation_usd, c.cloud_usd)]
        for col, value in enumerate(spend, 2):
            put(ws, i, col, value, USD0)
            columns[col].append(value)
        total, cumulative = sum(spend), cumulative + sum(spend)
        formula(ws, i, 7, f"=SUM(B{i}:F{i})", USD0, value=total)
        put(ws, i, 8, c.discount, "0.0000")
        formula(ws, i, 9, f"=G{i}*H{i}", USD0, value=total * c.discount)
        formula(ws, i, 10, f"=G{i}" if i == first else f"=J{i - 1}+G{i}", USD0, value=cumulative)
        columns[7].append(total)
        columns[9].append(total * c.discount)
    last = first + len(plan.cash_flow) - 1
    put(ws, last + 1, 1, "Total", bold=True)
    for col, values in columns.items():
        column_total(ws, last + 1, col, first, last, values, USD0)
    total = last + 1
    heading = "The objective: present value, less the value left at the end, plus lateness penalties"
    put(ws, last + 3, 1, heading, bold=True)
    put(ws, last + 4, 1, "Residual value credited (discounted)")
    put(ws, last + 4, 9, plan.residual_usd, USD0)
    put(ws, last + 5, 1, "Lateness penalties")
    put(ws, last + 5, 9, plan.penalties_usd, USD0)
    put(ws, last + 6, 1, "Discounted cost (the plan's objective)", bold=True)
    objective = sum(columns[9]) - plan.residual_usd + plan.penalties_usd
    formula(ws, last + 6, 9, f"=I{total}-I{last + 4}+I{last + 5}", USD0, bold=True, value=objective)
    if plan.cash_flow:
        bars = BarChart()
        bars.type, bars.grouping, bars.overlap = "col", "stacked", 100
        bars.title, bars.y_axis.title = "Spend per quarter and cumulative", "USD"
        bars.add_data(Reference(ws, min_col=2, max_col=6, min_row=row, max_row=last), titles_from_data=True)
        bars.set_categories(Reference(ws, min_col=1, min_row=first, max_row=last))
        bars.y_axis.number_format = '"$"#,##0,,"M"'
        line = LineChart()
        line.add_data(Reference(ws, min_col=10, min_row=row, max_row=last), titles_from_data=True)
        line.y_axis.axId = 200
        line.y_axis.title = "cumulative USD"
        line.y_axis.number_format = '"$"#,##0,,"M"'
        line.y_axis.crosses = "max"
        _axes_visible(bars)
        _axes_visible(line)
        bars += line
        bars.height, bars.width = 10, 22
        ws.add_chart(bars, f"A{last + 9}")
    ws.freeze_panes = ws.cell(first, 2)
    _fit(ws, {1: 12, **{c: 15 for c in range(2, 11)}})
    print_setup(ws)


# ---------------------------------------------------------------- Cost by workload


def _attribution(ws: Worksheet, plan: FleetPlan) -> None:
    row = title(
        ws,
        "Cost by workload",
        "discounted; each pool's cost shared by GPU-quarters used, idle capacity on its own line; sums to the plan",
    )
    header(ws, row, ["Workload", "Kind", "GPU-quarters", "Owned USD", "Cloud USD", "Penalty USD", "Total USD"])
    first = row + 1
    for i, a in enumerate(plan.attribution, start=first):
        put(ws, i, 1, a.workload)
        put(ws, i, 2, a.kind)
        put(ws, i, 3, a.gpu_periods, NUM1)
        for col, value in enumerate([a.owned_usd, a.cloud_usd, a.penalty_usd], start=4):
            put(ws, i, col, value, USD0)
        formula(ws, i, 7, f"=SUM(D{i}:F{i})", USD0, value=a.owned_usd + a.cloud_usd + a.penalty_usd)
    last = first + len(plan.attribution) - 1
    put(ws, last + 1, 1, "Total", bold=True)
    column_total(
        ws, last + 1, 7, first, last, (a.owned_usd + a.cloud_usd + a.penalty_usd for a in plan.attribution), USD0
    )
    _fit(ws, {1: 24, 2: 11, 3: 13, 4: 15, 5: 15, 6: 15, 7: 15})
    print_setup(ws)


# ---------------------------------------------------------------- Assumptions


def _assumptions(ws: Worksheet, plan: FleetPlan) -> None:
    row = title(ws, "Assumptions", "what the figures rest on; docs/fleet.md states the formulation")
    first = row + 1
    row = _lines(ws, row, "Model", plan.assumptions)
    for line in range(first, first + len(plan.assumptions)):  # prose across the table's columns, wrapped
        ws.cell(line, 2).alignment = Alignment(wrap_text=True, vertical="top")
        ws.merge_cells(start_row=line, start_column=2, end_row=line, end_column=4)
    header(ws, row, ["Constant", "Value", "Unit", "Source"])
    constants = [
        S.HBM_EFFICIENCY,
        S.DECODE_COMPUTE_EFFICIENCY,
        S.STEP_OVERHEAD_MS,
        S.ALLREDUCE_BASE_US,
        S.ALLREDUCE_STEP_US,
        S.ACTIVATION_BYTES,
        S.EXPERT_DISPATCH_BYTES,
        A.KV_CACHE_BYTES,
        A.USABLE_HBM_FRACTION,
        A.FRAMEWORK_RESERVE_GIB,
    ]  # the serving engine's (planner/model/engine.py)
    for i, k in enumerate(constants, start=row + 1):
        put(ws, i, 1, k.name)
        put(ws, i, 2, k.value)
        put(ws, i, 3, k.unit)
        put(ws, i, 4, k.source)
    put(ws, row + len(constants) + 2, 1, f"Calibration: {plan.calibration}")
    _fit(ws, {1: 30, 2: 10, 3: 30, 4: 50})
    print_setup(ws)
