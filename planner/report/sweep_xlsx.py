"""The sweep workbook (`planner sweep ... -o sweep.xlsx`): the answer, the purchases by probability of being the
cheapest (with a chart), the regret table (with a chart), the chosen purchase's distributions as histograms,
and the assumptions; for a fleet, the two first-stage policies across the futures. Cells go through
report/xlsx.py (text is never a formula; the file is written atomically)."""

from __future__ import annotations

from pathlib import Path

from openpyxl.chart import BarChart, Reference
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from planner import __version__
from planner.base.units import format_usd
from planner.report.xlsx import (
    NUM0,
    NUM1,
    PCT,
    USD0,
    fit_columns,
    fit_heights,
    fit_widths,
    formula,
    header,
    new_workbook,
    pairs,
    print_setup,
    put,
    readable_chart,
    save,
    sheet,
    title,
)
from planner.results import Distribution, Sweep, SweepChoice

MAX_TEXT_WIDTH = 70
CHART_BARS = 12  # purchases in a bar chart: more would not read
SHEET_ROWS = 60  # purchases a sheet lists (with the point plan and the recommended one): a few printed pages


def write_sweep(s: Sweep, path: Path) -> None:
    workbook = new_workbook()
    summary = workbook.active
    summary.title = "Summary"
    _summary(summary, s)
    if s.kind == "fleet":
        _policies(sheet(workbook, "Futures"), s)
    else:
        _purchases(sheet(workbook, f"{s.noun.capitalize()}s"), s)
        _regret(sheet(workbook, "Regret"), s)
        _histograms(sheet(workbook, "Distributions"), s)
    _assumptions(sheet(workbook, "Assumptions"), s)
    save(workbook, path)


def _fit(ws: Worksheet, columns: dict[int, float], from_row: int = 4) -> None:
    fit_columns(ws, columns, MAX_TEXT_WIDTH, from_row)


def _summary(ws: Worksheet, s: Sweep) -> None:
    what = "futures" if s.kind == "fleet" else "draws"
    row = title(ws, f"Sweep: {s.scenario}", f"{s.draws:,} {what}, seed {s.seed}; planner {__version__}")
    items: list[tuple[str, object]] = [("Draws ran", s.engine), ("Seconds", (s.seconds, NUM1))]
    if s.kind != "fleet":
        items += [
            ("Objective", s.objective + (f" (P(deadline) >= {s.p_deadline:.0%})" if s.p_deadline else "")),
            (f"Deadline (days from {'its start' if s.kind == 'rent' else 'delivery'})", (s.deadline_days, NUM1)),
            ("Late cost per day (USD)", (s.late_usd_per_day, USD0)),
            ("Late cost basis", s.late_basis),
            ("Compared", s.compared),
        ]
    row = pairs(ws, row, "The sweep", items)
    put(ws, row, 1, "The answer", bold=True)
    for line in s.risk:
        row += 1
        put(ws, row, 1, line)
        ws.merge_cells(start_row=row, start_column=1, end_row=row, end_column=2)
    row += 2
    if s.kind != "fleet" and s.point and s.chosen:
        row = pairs(ws, row, "Point plan", _choice_items(s.point))
        if s.chosen.label != s.point.label:
            pairs(ws, row, "Recommended by the objective", _choice_items(s.chosen))
    _fit(ws, {1: 34, 2: 90})
    print_setup(ws, landscape=False)


def _choice_items(c: SweepChoice) -> list[tuple[str, object]]:
    return [
        ("Choice", c.label),
        ("GPUs", (c.gpus, NUM0)),
        ("Point cost (USD)", (c.point_cost_usd, USD0)),
        ("P(cheapest)", (c.p_optimal, PCT)),
        ("P(deadline met)", (c.p_deadline_met, PCT)),
        ("Expected total (USD)", (c.expected_total_usd, USD0)),
        ("Cost p10 / p90 (USD)", f"${c.cost_p10_usd:,.0f} / ${c.cost_p90_usd:,.0f}"),
        ("Training days p50 / p90", f"{c.days_p50:.1f} / {c.days_p90:.1f}"),
        ("Delivery weeks (stated / p90)", f"{c.delivery_weeks:g} / {c.delivery_weeks_p90:.0f}"),
        ("Expected regret (USD)", (c.expected_regret_usd, USD0)),
        ("Worst-decile regret (USD)", (c.worst_decile_regret_usd, USD0)),
    ]


COLUMNS = [
    ("Choice", None),
    ("GPUs", NUM0),
    ("P(cheapest)", PCT),
    ("P(deadline met)", PCT),
    ("Expected total, late cost counted (USD)", USD0),
    ("Expected regret (USD)", USD0),
    ("Worst-decile regret (USD)", USD0),
    ("Total over the point plan's (USD)", USD0),
]
WIDTHS = {1: 44, 2: 7, 3: 9, 4: 9, 5: 14, 6: 13, 7: 13, 8: 13}  # characters: fits a landscape page at ~85%
TOTAL = get_column_letter(5)  # the expected total's column, which the last column subtracts the point plan's from


def _values(c: SweepChoice) -> list[object]:
    return [
        c.label,
        c.gpus,
        c.p_optimal,
        c.p_deadline_met,
        c.expected_total_usd,
        c.expected_regret_usd,
        c.worst_decile_regret_usd,
    ]


def _choice_table(ws: Worksheet, s: Sweep, rows: list[SweepChoice], heading: str) -> tuple[int, int]:
    """The purchases as rows (the last column a live difference to the point plan's row); (first, last) row."""
    top = title(ws, heading, f"{s.scenario}: {s.draws:,} draws, seed {s.seed}; * marks the recommended {s.noun}")
    header(ws, top, [name for name, _ in COLUMNS])
    point_row = next(i for i, c in enumerate(rows) if s.point and c.label == s.point.label) + top + 1
    for i, c in enumerate(rows):
        r = top + 1 + i
        values = _values(c)
        values[0] = ("* " if s.chosen and c.label == s.chosen.label else "") + c.label
        for col, (value, (_, fmt)) in enumerate(zip(values, COLUMNS, strict=False), start=1):
            put(ws, r, col, value, fmt)
        formula(
            ws, r, len(COLUMNS), f"={TOTAL}{r}-${TOTAL}${point_row}", USD0,
            value=c.expected_total_usd - s.point.expected_total_usd if s.point else None,
        )  # fmt: skip
    ws.freeze_panes = ws.cell(row=top + 1, column=2)
    fit_widths(ws, {col: (width, width) for col, width in WIDTHS.items()}, from_row=top)
    fit_heights(ws)
    print_setup(ws, title_rows=f"{top}:{top}")
    return top + 1, top + len(rows)


def _bar_chart(ws: Worksheet, col: int, first: int, last: int, heading: str, axis: str, anchor: str) -> None:
    chart = BarChart()
    chart.type = "bar"
    chart.title, chart.y_axis.title = heading, axis
    last = min(last, first + CHART_BARS - 1)
    chart.add_data(Reference(ws, min_col=col, min_row=first - 1, max_row=last), titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=1, min_row=first, max_row=last))
    chart.x_axis.scaling.orientation = "maxMin"  # the first row on top
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    chart.legend = None
    chart.width, chart.height = 24, 12
    readable_chart(chart)
    ws.add_chart(chart, anchor)


def _purchases(ws: Worksheet, s: Sweep) -> None:
    rows = s.with_point_and_chosen([c for c in s.choices if c.p_optimal > 0][:SHEET_ROWS])
    heading = (
        f"{s.noun.capitalize()}s by how often each is the cheapest ({len(rows)} of {len(s.choices)}; --json lists all)"
    )
    first, last = _choice_table(ws, s, rows, heading)
    _bar_chart(ws, 3, first, last, f"Probability of being the cheapest {s.noun}", "share of draws", f"A{last + 3}")


def _regret(ws: Worksheet, s: Sweep) -> None:
    rows = sorted(s.choices, key=lambda c: c.worst_decile_regret_usd)
    rows = s.with_point_and_chosen(rows[:SHEET_ROWS])
    heading = f"{s.noun.capitalize()}s by worst-decile regret, least first"
    heading += f" ({len(rows)} of {len(s.choices)}; --json lists all)"
    first, last = _choice_table(ws, s, rows, heading)
    _bar_chart(ws, 7, first, last, "Worst-decile regret", "USD", f"A{last + 3}")


def _histograms(ws: Worksheet, s: Sweep) -> None:
    who = f"the recommended {s.noun}" if s.chosen and s.point and s.chosen.label != s.point.label else "the point plan"
    row = title(ws, f"Distributions of {who} over the draws", s.chosen.label if s.chosen else "")
    for d in s.distributions:
        row = _histogram(ws, row, d)
    _fit(ws, {1: 22, 2: 22, 3: 12, 4: 12})
    print_setup(ws, landscape=False)


def _histogram(ws: Worksheet, row: int, d: Distribution) -> int:
    money = d.unit.startswith("USD")
    fmt = USD0 if money else NUM1
    show = format_usd if money else (lambda v: f"{v:,.1f}")
    put(ws, row, 1, f"{d.name} ({d.unit}): p10 {show(d.p10)}, p50 {show(d.p50)}, p90 {show(d.p90)}", bold=True)
    header(ws, row + 1, ["From", "To", "Draws", "Share"])
    first = row + 2
    last = first + len(d.counts) - 1
    total = sum(d.counts)
    for i, count in enumerate(d.counts):
        r = first + i
        put(ws, r, 1, d.edges[i], fmt)
        put(ws, r, 2, d.edges[i + 1], fmt)
        put(ws, r, 3, count, NUM0)
        formula(ws, r, 4, f"=C{r}/SUM($C${first}:$C${last})", PCT, value=count / total if total else 0.0)
    chart = BarChart()
    chart.type, chart.gapWidth = "col", 10
    chart.title, chart.y_axis.title, chart.x_axis.title = d.name, "draws", f"from ({d.unit})"
    chart.add_data(Reference(ws, min_col=3, min_row=first - 1, max_row=last), titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=1, min_row=first, max_row=last))
    chart.x_axis.number_format = "#,##0" if money and d.p50 >= 1000 else "#,##0.00" if money else "0.0"
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    chart.legend = None
    chart.width, chart.height = 16, 7.5
    readable_chart(chart)
    ws.add_chart(chart, f"F{row}")
    return max(last + 2, row + 17)


def _policies(ws: Worksheet, s: Sweep) -> None:
    top = title(ws, "First purchase across sampled futures", f"{s.draws} futures, seed {s.seed}")
    names = ["Policy", "P(cheaper)", "Expected (USD)", "p10 (USD)", "p50 (USD)", "p90 (USD)", "Worst (USD)",
             "Expected regret (USD)"]  # fmt: skip
    header(ws, top, names)
    for i, p in enumerate(s.policies):
        r = top + 1 + i
        values = [p.policy, p.p_cheaper, p.expected_cost_usd, p.cost_p10_usd, p.cost_p50_usd, p.cost_p90_usd,
                  p.worst_cost_usd, p.expected_regret_usd]  # fmt: skip
        for col, value in enumerate(values, start=1):
            put(ws, r, col, value, PCT if col == 2 else USD0 if col > 2 else None)
    row = top + len(s.policies) + 2
    header(ws, row, ["Future", *(p.policy for p in s.policies), "Difference (USD)"])
    first = row + 1
    count = max((len(p.costs_usd) for p in s.policies), default=0)
    for k in range(count):
        r = first + k
        put(ws, r, 1, k + 1, NUM0)
        costs = [p.costs_usd[k] if k < len(p.costs_usd) else None for p in s.policies]
        for j, cost in enumerate(costs, start=2):
            put(ws, r, j, cost, USD0)
        if len(costs) == 2 and None not in costs:
            formula(ws, r, 4, f"=B{r}-C{r}", USD0, value=costs[0] - costs[1])
    if count:
        chart = BarChart()
        chart.type, chart.title, chart.y_axis.title = "col", "Discounted fleet cost per future", "USD"
        chart.add_data(
            Reference(ws, min_col=2, max_col=1 + len(s.policies), min_row=first - 1, max_row=first + count - 1),
            titles_from_data=True,
        )
        chart.set_categories(Reference(ws, min_col=1, min_row=first, max_row=first + count - 1))
        chart.x_axis.delete = False
        chart.y_axis.delete = False
        chart.width, chart.height = 24, 10
        readable_chart(chart)
        ws.add_chart(chart, f"F{row}")
    _fit(ws, {1: 16, **{c: 16 for c in range(2, 9)}}, from_row=top)
    print_setup(ws)


def _assumptions(ws: Worksheet, s: Sweep) -> None:
    row = title(ws, "Assumptions", "what the draws rest on (planner/assumptions/uncertainty.py and hardware.py)")
    header(ws, row, ["Name", "Value", "Unit", "Source"])
    for i, a in enumerate(s.assumptions, start=1):
        put(ws, row + i, 1, a["name"])
        put(ws, row + i, 2, a["value"] if a["value"] is not None else "")
        put(ws, row + i, 3, a["unit"])
        put(ws, row + i, 4, a["source"])
    put(ws, row + len(s.assumptions) + 2, 1, f"Calibration: {s.calibration}")
    _fit(ws, {1: 28, 2: 10, 3: 30, 4: 70}, from_row=row)
    print_setup(ws)
