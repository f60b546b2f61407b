"""Workbooks of `planner bandwidth -o`, `planner cloud -o` and `planner inference -o` (the plan's quote
workbook is planner/report/excel.py)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from openpyxl import Workbook
from openpyxl.chart import LineChart, Reference
from openpyxl.worksheet.worksheet import Worksheet

from planner import __version__
from planner.calibration import Calibration
from planner.report.excel import bandwidth_block
from planner.report.perf_text import FABRIC_LABEL
from planner.report.xlsx import (
    INPUT_FILL,
    NUM0,
    NUM1,
    USD,
    USD0,
    formula,
    header,
    pairs,
    print_setup,
    put,
    save,
    sheet,
    title,
    widths,
)
from planner.results import CloudChoice, CloudPlan, InferencePlan

# ---------------------------------------------------------------- planner bandwidth -o


def write_bandwidth(
    table: pd.DataFrame, needed: list[dict], heading: str, calibration: Calibration, path: Path
) -> None:
    workbook = Workbook()
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
        put(ws, i, 5, n["unreachable_because"] or "")
    bandwidth_block(ws, row + len(needed) + 2, table, "Achieved TFLOPs per GPU vs node bandwidth")
    widths(ws, {1: 12, 2: 10, 3: 18, 4: 18, 5: 30})
    print_setup(ws)
    save(workbook, path)


# ---------------------------------------------------------------- planner cloud -o


RANKING_COLUMNS = [
    ("provider", "Provider", None),
    ("instance", "Instance", None),
    ("region", "Region", None),
    ("gpu", "GPU", None),
    ("pricing", "Pricing", None),
    ("instances", "Instances", NUM0),
    ("micro_batch", "Micro-batch", NUM0),
    ("fabric", "Fabric", None),
    ("tflops_per_gpu", "TFLOPs/GPU", NUM1),
    ("days", "Days", NUM1),
    ("usd_per_h", "USD per hour", USD),
    ("cost_usd", "Cost (USD)", USD0),
    ("usd_per_pflop_day", "USD per PFLOP-day", USD),
]


def write_cloud(result: CloudPlan, path: Path) -> None:
    workbook = Workbook()
    ws = workbook.active
    ws.title = "Ranking"
    ranking_sheet(ws, result)
    if result.choice:
        _cost_over_time(sheet(workbook, "Cost over time"), result.choice)
    excluded = sheet(workbook, "Excluded")
    row = title(excluded, "Excluded offerings", "and why")
    header(excluded, row, ["Provider", "Instance", "Region", "GPU", "Reason"])
    for i, e in enumerate(result.excluded, start=row + 1):
        for col, key in enumerate(["provider", "instance", "region", "gpu", "reason"], start=1):
            put(excluded, i, col, getattr(e, key))
    widths(excluded, {1: 12, 2: 34, 3: 14, 4: 12, 5: 100})
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
            value = getattr(record, key)
            if value is not None:
                put(ws, first + i, col, value if isinstance(value, int | float) else str(value), fmt)
    last = first + max(len(result.ranking), 1) - 1
    ws.auto_filter.ref = f"A{row}:M{last}"
    ws.freeze_panes = ws.cell(first, 1)
    if result.ranking and result.ranking[0].days is not None:
        from openpyxl.chart import ScatterChart, Series

        chart = ScatterChart()
        chart.title, chart.x_axis.title, chart.y_axis.title = "Cost vs days", "days", "USD"
        chart.style = 13
        series = Series(
            Reference(ws, min_col=12, min_row=first, max_row=last),
            Reference(ws, min_col=10, min_row=first, max_row=last),
            title="offerings",
        )
        series.marker.symbol, series.graphicalProperties.line.noFill = "circle", True
        chart.series.append(series)
        chart.height, chart.width = 9, 18
        ws.add_chart(chart, f"B{last + 3}")
    widths(ws, {1: 10, 2: 34, 3: 14, 4: 11, 5: 10, 6: 10, 7: 11, 8: 8, 9: 11, 10: 8, 11: 14, 12: 16, 13: 18})
    print_setup(ws)


def _cost_over_time(ws: Worksheet, choice: CloudChoice) -> None:
    title(
        ws,
        "Cost over time of the chosen option",
        f"{choice.instances} x {choice.provider} {choice.instance}; the hourly rate (B4) is an input",
    )
    put(ws, 4, 1, "USD per hour")
    put(ws, 4, 2, choice.usd_per_h, USD).fill = INPUT_FILL
    header(ws, 6, ["Day", "Cumulative cost (USD)"])
    days = int(-(-(choice.days or 30) // 1))
    for i in range(days + 1):
        put(ws, 7 + i, 1, i, NUM0)
        formula(ws, 7 + i, 2, f"=$B$4*24*A{7 + i}", USD0)
    chart = LineChart()
    chart.title, chart.x_axis.title, chart.y_axis.title = "Cumulative cost", "day", "USD"
    chart.add_data(Reference(ws, min_col=2, min_row=6, max_row=7 + days), titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=1, min_row=7, max_row=7 + days))
    chart.height, chart.width = 8, 16
    ws.add_chart(chart, "D6")
    widths(ws, {1: 16, 2: 22})
    print_setup(ws)


# ---------------------------------------------------------------- planner inference -o


def write_inference(result: InferencePlan, path: Path) -> None:
    workbook = Workbook()
    ws = workbook.active
    ws.title = "Inference"
    c = result.choice
    row = title(
        ws,
        f"Inference: {result.weights_gb:,.0f} GB of weights within {result.latency_target_s:g} s",
        f"planner {__version__}; needs {result.required_gb_per_s:,.0f} GB/s of streaming bandwidth",
    )
    items = [
        ("Machines", c.machines),
        ("Server", c.server),
        ("GPUs", f"{c.gpus} x {c.gpu}"),
        ("NVMe per machine", f"{c.nvme_per_machine} x {c.nvme}" if c.nvme else "none"),
        ("NICs per machine", f"{c.nics_per_machine} x {c.nic}" if c.nic else "none"),
        ("Network", c.network or "none"),
        ("Latency (s)", (c.latency_s, "0.000")),
        ("Bottleneck", c.bottleneck),
        ("Cost (USD)", (c.usd, USD0)),
        ("Power (kW)", (c.power_kw, NUM1)),
    ]
    row = pairs(ws, row, "Chosen configuration", items)
    put(ws, row, 1, "Bandwidth ladder (one machine)", bold=True)
    header(ws, row + 1, ["Link", "GB/s", "GB per pass", "Seconds", "Detail", "Bottleneck"])
    for i, r in enumerate(result.ladder, start=row + 2):
        put(ws, i, 1, r.link)
        for col, key in ((2, "gb_per_s"), (3, "gb_per_pass")):
            value = getattr(r, key)
            if value is not None and value != float("inf"):
                put(ws, i, col, float(value), NUM1)
        put(ws, i, 4, float(r.seconds), "0.0000")
        put(ws, i, 5, r.detail)
        put(ws, i, 6, "yes" if r.bottleneck else "")
    row += len(result.ladder) + 3
    put(ws, row, 1, "Latency by machine count", bold=True)
    header(ws, row + 1, ["Machines", "Latency (s)", "Bottleneck"])
    first = row + 2
    sweep = result.machine_sweep
    for i, s in enumerate(sweep, start=first):
        put(ws, i, 1, s.machines, NUM0)
        if s.fits:
            put(ws, i, 2, float(s.latency_s), "0.000")
        put(ws, i, 3, s.bottleneck if s.fits else "does not fit")
    if len(sweep) > 1:
        chart = LineChart()
        chart.title, chart.x_axis.title, chart.y_axis.title = "Latency vs machines", "machines", "seconds"
        chart.add_data(
            Reference(ws, min_col=2, min_row=first - 1, max_row=first + len(sweep) - 1), titles_from_data=True
        )
        chart.set_categories(Reference(ws, min_col=1, min_row=first, max_row=first + len(sweep) - 1))
        chart.height, chart.width = 8, 16
        ws.add_chart(chart, f"H{row}")
    alt = sheet(workbook, "Alternatives")
    arow = title(alt, "Alternatives", "next-best distinct configurations")
    header(alt, arow, ["Machines", "Server", "NVMe", "NIC", "Latency (s)", "Bottleneck", "Cost (USD)", "Delta (USD)"])
    for i, a in enumerate(result.alternatives, start=arow + 1):
        for col, value in enumerate(
            [
                a.machines,
                a.server,
                f"{a.nvme_per_machine} x {a.nvme}" if a.nvme else "none",
                a.nic or "none",
            ],
            start=1,
        ):
            put(alt, i, col, value)
        put(alt, i, 5, float(a.latency_s), "0.000")
        put(alt, i, 6, a.bottleneck)
        put(alt, i, 7, float(a.usd), USD0)
        formula(alt, i, 8, f"=G{i}-{c.usd:.2f}", USD0)
    widths(ws, {1: 30, 2: 16, 3: 14, 4: 12, 5: 60, 6: 12})
    widths(alt, {1: 10, 2: 44, 3: 24, 4: 16, 5: 12, 6: 18, 7: 16, 8: 16})
    print_setup(ws)
    print_setup(alt)
    save(workbook, path)
