"""`planner serve -o serve.xlsx`: the quote (machines, units, unit price and extended price as live formulas),
each kind's replicas and operating point, the latency/throughput curve with its chart, the ranking and the
assumptions. Catalog text goes through put() (never a formula)."""

from __future__ import annotations

from pathlib import Path

from openpyxl.chart import Reference, ScatterChart, Series
from openpyxl.worksheet.worksheet import Worksheet

from planner import __version__
from planner.report.excel import _show_axes
from planner.report.xlsx import (
    NUM0,
    NUM1,
    NUM3,
    PCT,
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
from planner.results import ServingPlan


def write_serving(plan: ServingPlan, path: Path) -> None:
    workbook = new_workbook()
    _quote(workbook.active, plan)
    _curve(sheet(workbook, "Latency curve"), plan)
    _ranking(sheet(workbook, "Ranking"), plan)
    _assumptions(sheet(workbook, "Assumptions"), plan)
    save(workbook, path)


def _rented(plan: ServingPlan) -> bool:
    return plan.usd_per_hour is not None


def _quote(ws: Worksheet, plan: ServingPlan) -> None:
    ws.title = "Serving"
    p = f"p{plan.percentile * 100:g}"
    targets = ", ".join(
        f"{name} {p} <= {value * 1e3:,.0f} ms"
        for name, value in (("TTFT", plan.ttft_target_s), ("TPOT", plan.tpot_target_s))
        if value is not None
    )
    row = title(
        ws,
        f"Serving {plan.model} at {plan.rate_per_s:g} requests/s "
        f"({plan.input_tokens:,} in, {plan.output_tokens:,} out)",
        f"planner {__version__}; {targets}; {plan.purchase}; {plan.status} ({plan.solver})",
    )
    unit = USD if _rented(plan) else USD0
    items = [
        ("Capacity within the targets (requests/s)", (plan.capacity_per_s, NUM1)),
        ("Share of it the asked rate uses", (plan.utilisation, PCT)),
        ("GPUs", plan.gpus),
        ("Output tokens/s per GPU at the asked rate", (plan.output_tokens_per_s_per_gpu, NUM0)),
        (
            "USD per million output tokens",
            (plan.usd_per_million_output_tokens, '"$"0.000'),
        ),
    ]
    items += (
        [("On-demand USD per hour", (plan.usd_per_hour, USD))]
        if _rented(plan)
        else [
            ("Capex (servers only)", (plan.capex_usd, USD0)),
            (f"TCO over {plan.years:g} years (as planner plan counts it)", (plan.tco_usd, USD0)),
            ("Minimised", plan.objective),
            ("Power, nameplate (kW)", (plan.power_w / 1e3, NUM1)),
        ]
    )
    row = pairs(ws, row, "The answer", items)
    put(ws, row, 1, "Quote" + (" (per hour, on demand)" if _rented(plan) else ""), bold=True)
    header(
        ws, row + 1, ["Item", "Quantity", "Unit USD" + ("/h" if _rented(plan) else ""), "Extended", "Source", "Date"]
    )
    first = row + 2
    for i, m in enumerate(plan.mix, start=first):
        put(ws, i, 1, m.server)
        put(ws, i, 2, m.servers, NUM0)
        put(ws, i, 3, m.unit_usd, unit)
        formula(ws, i, 4, f"=B{i}*C{i}", unit, value=m.servers * m.unit_usd)
        put(ws, i, 5, m.source)
        put(ws, i, 6, m.price_date)
    last = first + len(plan.mix) - 1
    put(ws, last + 1, 3, "Total", bold=True)
    column_total(ws, last + 1, 4, first, last, (m.servers * m.unit_usd for m in plan.mix), unit)
    row = last + 3
    for m in plan.mix:  # one block per kind: the sheet stays one page wide
        pools = (
            f"{m.replicas} of {m.replica_gpus} GPU(s), {m.layout.upper()} {m.replica_gpus}"
            if m.mode == "aggregated"
            else f"{m.prefill_replicas} prefill of {m.prefill_replica_gpus} GPU(s) ({m.prefill_layout.upper()} "
            f"{m.prefill_replica_gpus}) and {m.replicas} decode of {m.replica_gpus} "
            f"({m.layout.upper()} {m.replica_gpus})"
        )
        row = pairs(
            ws,
            row,
            f"{m.server}: replicas at the design rate",
            [
                ("Mode", m.mode),
                ("Replicas", pools),
                ("Precision", m.precision),
                ("Weights per GPU (GiB)", (m.weights_gib_per_gpu, NUM1)),
                ("Requests/s per (decode) replica", (m.rate_per_replica, NUM3)),
                ("Batch (sequences decoded together)", (m.batch, NUM0)),
                (f"TTFT {p} (s)", (m.ttft_s, NUM3)),
                (f"TPOT {p} (s)", (m.tpot_s, "0.0000")),
                ("Output tokens/s per GPU at that rate", (m.output_tokens_per_s_per_gpu, NUM0)),
                ("Bound by", m.binds),
            ],
        )
    paragraph(
        ws,
        row,
        "Servers only: the front-end network, racks and storage are not included. The model: docs/model.md section "
        "10 (continuous batching with chunked prefill, Poisson arrivals, "
        + (
            f"gamma-distributed request lengths: cv in {plan.input_cv:.2g}, out {plan.output_cv:.2g}"
            if plan.input_cv or plan.output_cv
            else "fixed request lengths"
        )
        + "); its error against published measurements: planner validate --serving.",
        6,
    )
    fit_widths(ws, {1: (28, 46), 2: (10, 16), 3: (12, 14), 4: (12, 16), 5: (16, 26), 6: (10, 12)})
    fit_heights(ws)
    print_setup(ws)


def _curve(ws: Worksheet, plan: ServingPlan) -> None:
    p = f"p{plan.percentile * 100:g}"
    row = title(ws, f"Latency and throughput of one {plan.curve_server}", "its chosen layout at 10-100% of its rate")
    header(ws, row, ["Requests/s per machine", f"TTFT {p} (ms)", f"TPOT {p} (ms)", "Batch", "Output tokens/s per GPU"])
    first = row + 1
    for i, point in enumerate(plan.curve, start=first):
        put(ws, i, 1, point.rate_per_server, NUM3)
        put(ws, i, 2, point.ttft_s * 1e3, NUM1)
        put(ws, i, 3, point.tpot_s * 1e3, NUM1)
        put(ws, i, 4, point.batch, NUM0)
        put(ws, i, 5, point.output_tokens_per_s_per_gpu, NUM0)
    last = first + len(plan.curve) - 1
    x = Reference(ws, min_col=1, min_row=first, max_row=last)
    for col, name, anchor in ((2, "TTFT", "A"), (3, "TPOT", "D")):  # apart: TPOT is ms where TTFT is 100s of ms
        chart = ScatterChart()
        chart.title, chart.x_axis.title, chart.y_axis.title = f"{name} {p} vs load", "requests/s per machine", "ms"
        chart.style = 13
        series = Series(Reference(ws, min_col=col, min_row=first - 1, max_row=last), x, title_from_data=True)
        series.marker.symbol = "circle"
        chart.series.append(series)
        chart.x_axis.number_format, chart.y_axis.number_format = "0.0", "0"
        chart.legend = None
        _show_axes(chart)
        chart.height, chart.width = 7, 11
        ws.add_chart(chart, f"{anchor}{last + 2}")
    fit_widths(ws, {1: (14, 24), 2: (12, 16), 3: (12, 16), 4: (8, 12), 5: (12, 24)})
    fit_heights(ws)
    print_setup(ws)


def _ranking(ws: Worksheet, plan: ServingPlan) -> None:
    rented = _rented(plan)
    row = title(ws, "Each kind alone", "the cheapest number of one kind that serves the whole rate within the targets")
    header(
        ws,
        row,
        ["Machine", "GPU", "Count", "Price" + (" per hour" if rented else ""), "Mode", "Layout", "Precision",
         "Requests/s per machine", "Bound by"],
    )  # fmt: skip
    for i, o in enumerate(plan.ranking, start=row + 1):
        layout = f"{o.layout.upper()} {o.replica_gpus}" + (
            f" (prefill {o.prefill_layout.upper()} {o.prefill_replica_gpus})" if o.mode != "aggregated" else ""
        )
        for col, value in enumerate([o.server, o.gpu], start=1):
            put(ws, i, col, value)
        put(ws, i, 3, o.servers, NUM0)
        put(ws, i, 4, o.capex_usd, USD if rented else USD0)
        for col, value in enumerate([o.mode, layout, o.precision], start=5):
            put(ws, i, col, value)
        put(ws, i, 8, o.rate_per_server, NUM3)
        put(ws, i, 9, o.binds)
    last = row + len(plan.ranking) + 2
    if plan.not_serving:
        put(ws, last, 1, "Cannot serve", bold=True)
        for i, text in enumerate(plan.not_serving, start=last + 1):
            put(ws, i, 1, text)
    fit_widths(
        ws,
        {
            1: (28, 52),
            2: (8, 12),
            3: (6, 8),
            4: (11, 14),
            5: (13, 14),
            6: (12, 22),
            7: (9, 10),
            8: (10, 12),
            9: (8, 14),
        },
    )
    fit_heights(ws)
    print_setup(ws)


def _assumptions(ws: Worksheet, plan: ServingPlan) -> None:
    row = title(ws, "Assumptions", "every constant the serving figures depend on, with its unit and source")
    header(ws, row, ["Constant", "Value", "Unit", "Source"])
    for i, c in enumerate(plan.assumptions, start=row + 1):
        put(ws, i, 1, c["name"])
        put(ws, i, 2, c["value"])
        put(ws, i, 3, c["unit"])
        put(ws, i, 4, c["source"])
    fit_widths(ws, {1: (20, 36), 2: (8, 12), 3: (12, 40), 4: (30, 90)})
    fit_heights(ws)
    print_setup(ws)
