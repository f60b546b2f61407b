"""Workbooks of `planner bandwidth -o`, `planner cloud -o` and `planner inference -o` (the plan's quote
workbook is planner/report/excel.py). Same conventions: formulas carry their values, widths come from the
content, long text wraps, no sheet prints text under 8 pt (planner.report.xlsx.paginate)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
from openpyxl.chart import LineChart, Reference, ScatterChart, Series
from openpyxl.styles import Alignment
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from planner import __version__
from planner.model.calibration import Calibration
from planner.report.excel import _show_axes, bandwidth_block
from planner.report.perf_text import FABRIC_LABEL
from planner.report.xlsx import (
    INPUT_FILL,
    NUM0,
    NUM1,
    NUM3,
    USD,
    USD0,
    column_total,
    fit_heights,
    fit_widths,
    formula,
    header,
    new_workbook,
    pairs,
    paragraph,
    print_setup,
    put,
    save,
    sheet,
    title,
)
from planner.results import CloudChoice, CloudPlan, InferencePlan

# ---------------------------------------------------------------- planner bandwidth -o


def write_bandwidth(
    table: pd.DataFrame, needed: list[dict], heading: str, calibration: Calibration, path: Path
) -> None:
    workbook = new_workbook()
    ws = workbook.active
    ws.title = "Bandwidth"
    row = title(ws, heading, f"planner {__version__}; calibration: {calibration.source}")
    header(ws, row, ["Fabric", "ZeRO++", "Node Gbps needed", "Ceiling TFLOPs/GPU", "Note"])
    for i, n in enumerate(needed, start=row + 1):
        put(ws, i, 1, FABRIC_LABEL[n["fabric"]])
        put(ws, i, 2, "yes" if n["zeropp"] else "no")
        if n["node_gbps_needed"] not in (None, float("inf")):
            put(ws, i, 3, float(n["node_gbps_needed"]), NUM0)
        put(ws, i, 4, float(n["ceiling_tflops_per_gpu"]), NUM1)
        put(ws, i, 5, bandwidth_note(n))
    bandwidth_block(ws, row + len(needed) + 2, table, "Achieved TFLOPs per GPU vs node bandwidth", chart_below=True)
    fit_widths(ws, {1: (12, 14), 2: (12, 14), 3: (12, 16), 4: (12, 16), 5: (30, 40)}, from_row=row)
    fit_heights(ws)
    print_setup(ws, landscape=False, pages_tall=1)  # the tables above their chart, on one page
    save(workbook, path)


def bandwidth_note(n: dict) -> str:
    """What the terminal warns about, in the row it concerns: memory first (nothing else matters if the
    model does not fit), then why the target is out of reach."""
    notes = []
    if not n.get("fits_memory", True):
        notes.append(
            f"does not fit in GPU memory: needs {n['memory_per_gpu_gib']:.1f} GiB per GPU; add GPUs"
            + ("" if n.get("usable_hbm_gib") is None else f" (usable {n['usable_hbm_gib']:.1f})")
        )
    if n["node_gbps_needed"] in (None, float("inf")):
        notes.append(f"unreachable: limited by {n['unreachable_because']}")
    elif n.get("unreachable_because"):
        notes.append(str(n["unreachable_because"]))
    return "; ".join(notes)


# ---------------------------------------------------------------- planner cloud -o


RANKING_COLUMNS = [
    ("provider", "Provider", None),
    ("offering", "Instance (region)", None),
    ("gpu", "GPU", None),
    ("pricing", "Pricing", None),
    ("instances", "Instances", NUM0),
    ("micro_batch", "Micro-batch", NUM0),
    ("fabric", "Fabric", None),
    ("tflops_per_gpu", "TFLOPs/GPU", NUM1),
    ("days", "Days (calendar)", NUM1),
    ("billed_days", "Days billed", NUM1),
    ("usd_per_h", "USD per hour", USD),
    ("cost_usd", "Cost (USD)", USD0),
    ("usd_per_pflop_day", "USD per PFLOP-day", USD),
    ("price", "Price date (confidence)", None),
]
COST_COL, DAYS_COL = 12, 9


def write_cloud(result: CloudPlan, path: Path) -> None:
    workbook = new_workbook()
    ws = workbook.active
    ws.title = "Ranking"
    ranking_sheet(ws, result)
    if result.choice:
        _cost_over_time(sheet(workbook, "Cost over time"), result.choice, result.cost_basis)
    _excluded(sheet(workbook, "Excluded"), result)
    save(workbook, path)


def ranking_sheet(ws: Worksheet, result: CloudPlan) -> None:
    row = title(
        ws,
        f"Cloud options: {result.scenario}",
        f"{result.cost_basis}, cheapest first; calibration: {result.calibration}",
    )
    header(ws, row, [label for _, label, _ in RANKING_COLUMNS])
    first = row + 1
    for i, record in enumerate(result.ranking):
        for col, (key, _, fmt) in enumerate(RANKING_COLUMNS, start=1):
            value = _cell(record, key)
            if value is not None:
                put(ws, first + i, col, value if isinstance(value, int | float) else str(value), fmt)
    last = first + max(len(result.ranking), 1) - 1
    ws.auto_filter.ref = f"A{row}:{get_column_letter(len(RANKING_COLUMNS))}{last}"
    ws.freeze_panes = ws.cell(first, 1)
    below = last + 2
    put(ws, below, 1, "Terms assumed", bold=True)
    for i, term in enumerate(result.terms, start=1):
        paragraph(ws, below + i, f"- {term}", len(RANKING_COLUMNS))
    if result.ranking and result.ranking[0].days is not None:
        providers = _per_provider_columns(ws, result, first)
        ws.add_chart(_cost_vs_days(ws, first, last, providers), f"B{below + len(result.terms) + 2}")
    limits = {1: (8, 13), 2: (14, 36), 3: (9, 12), 4: (10, 17), 5: (9, 10), 6: (8, 11), 7: (7, 8)}
    limits |= {8: (9, 11), 9: (9, 10), 10: (8, 9), 11: (12, 14), 12: (12, 14), 13: (12, 14), 14: (12, 19)}
    fit_widths(ws, limits, from_row=row)
    fit_heights(ws)
    print_setup(ws, title_rows=f"{row}:{row}")


def _cell(record, key: str):
    """A ranking cell: the instance with its region, the price's date and confidence ("2025 (old), medium"),
    else the field."""
    if key == "offering":
        return f"{record.instance} ({record.region})"
    if key == "price":
        return f"{record.price_date}{' (old)' if record.stale else ''}, {record.confidence}"
    return getattr(record, key)


def _per_provider_columns(ws: Worksheet, result: CloudPlan, first: int) -> dict[str, int]:
    """Each provider's costs in a hidden column of their own (blank on the other providers' rows), so the
    chart can name each point's provider in its legend; the column of each, by provider."""
    columns: dict[str, int] = {}
    for i, record in enumerate(result.ranking):
        name = str(_cell(record, "provider"))
        col = columns.setdefault(name, len(RANKING_COLUMNS) + 2 + len(columns))
        cost = _cell(record, "cost_usd")
        if isinstance(cost, int | float):
            put(ws, first + i, col, cost, USD0)
    for col in columns.values():
        ws.column_dimensions[get_column_letter(col)].hidden = True
    return columns


def _cost_vs_days(ws: Worksheet, first: int, last: int, providers: dict[str, int]) -> ScatterChart:
    """Cost against calendar days, one marker per offering in its provider's colour, named in the legend
    (filled: an unfilled marker renders as nothing)."""
    chart = ScatterChart()
    chart.title, chart.x_axis.title, chart.y_axis.title = "Cost vs days, by provider", "days", "USD"
    chart.style = 13
    chart.visible_cells_only = False  # the per-provider columns are hidden
    chart.display_blanks = "gap"  # another provider's row is no point
    for k, (name, col) in enumerate(sorted(providers.items())):
        series = Series(
            Reference(ws, min_col=col, min_row=first, max_row=last),
            Reference(ws, min_col=DAYS_COL, min_row=first, max_row=last),
            title=name,
        )
        colour = MARKER_COLOURS[k % len(MARKER_COLOURS)]
        series.marker.symbol, series.marker.size = MARKER_SYMBOLS[k % len(MARKER_SYMBOLS)], 7
        series.marker.graphicalProperties.solidFill = colour
        series.marker.graphicalProperties.line.solidFill = colour
        series.graphicalProperties.line.noFill = True
        chart.series.append(series)
    chart.x_axis.scaling.min = 0
    chart.y_axis.scaling.min = 0
    chart.y_axis.numFmt = '"$"#,##0'
    _show_axes(chart)
    chart.height, chart.width = 9, 18
    return chart


# distinct markers for up to eight providers (then repeated)
MARKER_COLOURS = ["1F77B4", "D62728", "2CA02C", "FF7F0E", "9467BD", "8C564B", "E377C2", "17BECF"]
MARKER_SYMBOLS = ["circle", "diamond", "triangle", "square", "circle", "diamond", "triangle", "square"]


def _cost_over_time(ws: Worksheet, choice: CloudChoice, basis: str) -> None:
    rates = choice.usd_per_instance_h
    hourly = sum(rates[p] * k for p, k in choice.pricing_mix.items() if p != "capacity-block")
    upfront = sum(
        rates[p] * k * choice.billed_days.get(p, 0) * 24 for p, k in choice.pricing_mix.items() if p == "capacity-block"
    )
    end = choice.days if choice.days is not None else 30.0
    days = [float(d) for d in range(int(math.floor(end)) + 1) if d < end - 1e-9] + [end]
    title(
        ws,
        "Cost over time of the chosen option",
        f"{choice.instances} x {choice.provider} {choice.instance} ({', '.join(choice.pricing_mix)}), "
        f"{choice.layout or 'data parallel'} at micro-batch {choice.micro_batch}; the rates (B4, B5) are inputs",
    )
    put(ws, 4, 1, "USD per hour, billed by the hour")
    put(ws, 4, 2, hourly, USD).fill = INPUT_FILL
    put(ws, 5, 1, "USD paid up front (Capacity Blocks)")
    put(ws, 5, 2, upfront, USD).fill = INPUT_FILL
    header(ws, 7, ["Day", "Cumulative cost (USD)"])
    for i, day in enumerate(days):
        r = 8 + i
        put(ws, r, 1, day, NUM1)
        formula(ws, r, 2, f"=$B$5+$B$4*24*A{r}", USD0, value=upfront + hourly * 24 * day)
    last = 8 + len(days) - 1
    paragraph(
        ws,
        last + 2,
        f"The last row is the stated training time, {end:.1f} calendar days, and its cost is the stated {basis}, "
        f"${choice.cost_usd:,.0f}.",
        3,
    )
    chart = LineChart()
    chart.title, chart.x_axis.title, chart.y_axis.title = "Cumulative cost", "day", "USD"
    chart.add_data(Reference(ws, min_col=2, min_row=7, max_row=last), titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=1, min_row=8, max_row=last))
    chart.y_axis.scaling.min = 0
    _show_axes(chart)
    chart.height, chart.width = 8, 16
    ws.add_chart(chart, "D7")
    fit_widths(ws, {1: (12, 36), 2: (16, 22), 3: (10, 40)}, from_row=4)
    fit_heights(ws)
    print_setup(ws, title_rows="7:7")


def _excluded(ws: Worksheet, result: CloudPlan) -> None:
    row = title(ws, "Excluded offerings", "and why each cannot run the scenario")
    header(ws, row, ["Provider", "Instance", "Region", "GPU", "Reason"])
    for i, e in enumerate(result.excluded, start=row + 1):
        for col, key in enumerate(["provider", "instance", "region", "gpu", "reason"], start=1):
            put(ws, i, col, getattr(e, key))
    fit_widths(ws, {1: (9, 13), 2: (12, 34), 3: (10, 14), 4: (9, 11), 5: (30, 80)}, from_row=row)
    fit_heights(ws)
    print_setup(ws, title_rows=f"{row}:{row}")


# ---------------------------------------------------------------- planner inference -o


def write_inference(result: InferencePlan, path: Path) -> None:
    workbook = new_workbook()
    ws = workbook.active
    ws.title = "Inference"
    c = result.choice
    row = title(
        ws,
        f"Inference: {result.weights_gb:,.0f} GB of weights within {result.latency_target_s:g} s per token",
        f"planner {__version__}; needs {result.required_gb_per_s:,.0f} GB/s of streaming bandwidth",
    )
    items = [
        ("Machines", c.machines),
        ("Server", c.server),
        ("GPUs", f"{c.gpus} x {c.gpu}"),
        ("NVMe per machine", f"{c.nvme_per_machine} x {c.nvme}" if c.nvme else "none"),
        ("NICs per machine", f"{c.nics_per_machine} x {c.nic}" if c.nic else "none"),
        ("Network", c.network or "none"),
        ("Latency per generated token (s)", (c.latency_s, NUM3)),
        ("Bottleneck", c.bottleneck),
        ("Cost (USD)", (c.usd, USD0)),
        ("Power (kW)", (c.power_kw, NUM1)),
    ]
    row = pairs(ws, row, "Chosen configuration", items)
    row = _cost_lines(ws, row, c)
    paragraph(
        ws,
        row,
        "Latency is per generated token (one decode step reads every weight once); prefill (time to first "
        "token) and the KV cache are not modelled.",
        6,
    )
    row += 2
    put(ws, row, 1, "Bandwidth ladder (one machine)", bold=True)
    header(ws, row + 1, ["Link", "GB/s", "GB per pass", "Seconds", "Detail", "Bottleneck"])
    for i, r in enumerate(result.ladder, start=row + 2):
        put(ws, i, 1, r.link)
        for col, key in ((2, "gb_per_s"), (3, "gb_per_pass")):
            value = getattr(r, key)
            if value is not None and value != float("inf"):
                put(ws, i, col, float(value), NUM1)
        put(ws, i, 4, float(r.seconds), "0.0000")
        put(ws, i, 5, r.detail).alignment = Alignment(indent=1)
        put(ws, i, 6, "yes" if r.bottleneck else "")
    row += len(result.ladder) + 3
    put(ws, row, 1, "Latency by machine count", bold=True)
    header(ws, row + 1, ["Machines", "Latency (s)", "Bottleneck"])
    first = row + 2
    sweep = result.machine_sweep
    for i, s in enumerate(sweep, start=first):
        put(ws, i, 1, s.machines, NUM0)
        if s.fits:
            put(ws, i, 2, float(s.latency_s), NUM3)
        put(ws, i, 3, s.bottleneck if s.fits else "does not fit")
    if len(sweep) > 1:
        chart = LineChart()
        chart.title, chart.x_axis.title, chart.y_axis.title = "Latency vs machines", "machines", "seconds"
        chart.add_data(
            Reference(ws, min_col=2, min_row=first - 1, max_row=first + len(sweep) - 1), titles_from_data=True
        )
        chart.set_categories(Reference(ws, min_col=1, min_row=first, max_row=first + len(sweep) - 1))
        _show_axes(chart)
        chart.height, chart.width = 8, 16
        ws.add_chart(chart, f"E{row}")
    fit_widths(ws, {1: (14, 34), 2: (12, 40), 3: (12, 14), 4: (10, 12), 5: (20, 60), 6: (10, 12)}, from_row=4)
    fit_heights(ws)
    print_setup(ws)
    _inference_alternatives(sheet(workbook, "Alternatives"), result)
    save(workbook, path)


def _cost_lines(ws: Worksheet, row: int, c) -> int:
    """The chosen configuration's price line by line, extended and total as live formulas."""
    if not c.lines:
        return row
    put(ws, row, 1, "Cost by line", bold=True)
    header(ws, row + 1, ["Item", "Quantity", "Unit USD", "Extended USD"])
    first = row + 2
    for i, line in enumerate(c.lines, start=first):
        put(ws, i, 1, line.item)
        put(ws, i, 2, line.quantity, NUM0)
        put(ws, i, 3, line.unit_usd, USD0)
        formula(ws, i, 4, f"=B{i}*C{i}", USD0, value=line.quantity * line.unit_usd)
    last = first + len(c.lines) - 1
    put(ws, last + 1, 3, "Total", bold=True)
    column_total(ws, last + 1, 4, first, last, (line.quantity * line.unit_usd for line in c.lines), USD0)
    return last + 3


def _inference_alternatives(alt: Worksheet, result: InferencePlan) -> None:
    c = result.choice
    arow = title(alt, "Alternatives", "next-best distinct configurations; the delta is a live formula against G3")
    put(alt, 3, 1, "Chosen configuration's cost (USD)", bold=True)
    put(alt, 3, 7, float(c.usd), USD0)
    header(alt, arow, ["Machines", "Server", "NVMe", "NIC", "Latency (s)", "Bottleneck", "Cost (USD)", "Delta (USD)"])
    for i, a in enumerate(result.alternatives, start=arow + 1):
        for col, value in enumerate(
            [a.machines, a.server, f"{a.nvme_per_machine} x {a.nvme}" if a.nvme else "none", a.nic or "none"],
            start=1,
        ):
            put(alt, i, col, value)
        put(alt, i, 5, float(a.latency_s), NUM3)
        put(alt, i, 6, a.bottleneck)
        put(alt, i, 7, float(a.usd), USD0)
        formula(alt, i, 8, f"=G{i}-$G$3", USD0, value=float(a.usd) - float(c.usd))
    limits = {1: (10, 18), 2: (16, 44), 3: (8, 24), 4: (8, 24), 5: (10, 12), 6: (12, 20), 7: (12, 14), 8: (12, 14)}
    fit_widths(alt, limits, from_row=arow)
    fit_heights(alt)
    print_setup(alt, title_rows=f"{arow}:{arow}")
