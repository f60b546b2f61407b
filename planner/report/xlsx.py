"""Low-level, safe cell writing for openpyxl workbooks, laid out to print.

Text is always written as text: openpyxl turns any string that starts with "=" into a formula, and Excel
evaluates cells starting with = + - @ (and tab/CR) when a file is opened or a cell edited. Only `formula()`
writes formulas, and its text is built by planner code, never from catalog or scenario text.

Every formula also carries the value it evaluates to (computed by the caller from the same figures), written
into the file as the cell's cached value when it is saved: a previewer that does not recalculate (a mail
client, a web viewer, openpyxl with data_only=True) shows the totals, and Excel and LibreOffice still
recalculate on load.

Layout: column widths come from the content (`fit_widths`), text wider than its column wraps, and rows of
wrapped text get the height their lines need (`fit_heights`), so nothing is cut and no page is shrunk to
fit one long line.
"""

from __future__ import annotations

import functools
import gc
import io
import math
import re
import sys
import zipfile
from pathlib import Path
from xml.etree import ElementTree

from openpyxl import Workbook
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.utils.indexed_list import IndexedList
from openpyxl.worksheet.worksheet import Worksheet

from planner.base.fileio import WriteError, write_atomic
from planner.base.text import printable
from planner.report.csvtext import FORMULA_LEADS

USD = '"$"#,##0.00'
USD0 = '"$"#,##0'
PCT = "0.0%"
NUM1 = "#,##0.0"
NUM0 = "#,##0"
NUM3 = "0.000"
BOLD = Font(bold=True)
TITLE = Font(bold=True, size=14)
HEADER_FILL = PatternFill("solid", fgColor="DDE7F0")
INPUT_FILL = PatternFill("solid", fgColor="FFF2CC")
DANGEROUS = FORMULA_LEADS
MAX_SHEET_NAME = 31  # Excel's limit
LINE_HEIGHT_PT = 15.0  # one line of 11 pt text
BOLD_WIDTH = 1.1  # bold text is about a tenth wider
# Widths count the digit "0" of Calibri 11; where Calibri is missing LibreOffice draws a wider substitute
# (DejaVu Sans, about a fifth wider), so text is measured with that slack: extra space in Excel, nothing
# cut or overlapping anywhere.
FONT_SLACK = 1.2
CACHE = "_planner_cached_values"  # worksheet attribute: cell coordinate -> the value its formula gives


def put(ws: Worksheet, row: int, col: int, value: object, fmt: str | None = None, bold: bool = False):
    """Write a value; strings are forced to text (never a formula), numbers keep their type.

    Defence in depth: inputs are validated, but a control character that got through anyway (openpyxl
    raises IllegalCharacterError on it, after the whole run succeeded) becomes U+FFFD, text is cut to
    Excel's 32,767 characters, and inf/NaN (which Excel reports as a corrupt file) are written as text."""
    cell = ws.cell(row=row, column=col)
    if isinstance(value, float) and not math.isfinite(value):
        value = str(value)
    if isinstance(value, str):
        value = printable(value)
        cell.value = value
        cell.data_type = "s"
        if value.startswith(DANGEROUS):
            cell.quotePrefix = True  # Excel and LibreOffice show it as typed, and keep it text when edited
    else:
        cell.value = value
    if fmt:
        cell.number_format = fmt
    if bold:
        cell.font = BOLD
    return cell


def formula(
    ws: Worksheet,
    row: int,
    col: int,
    text: str,
    fmt: str | None = None,
    bold: bool = False,
    *,
    value: float | str | None = None,
):
    """Write a live formula and the value it gives (cached in the file; None: no cached value). `text` must
    be built by planner code only (cell references and numbers)."""
    if not text.startswith("="):
        raise ValueError("a formula starts with '='")
    cell = ws.cell(row=row, column=col)
    cell.value = text
    if fmt:
        cell.number_format = fmt
    if bold:
        cell.font = BOLD
    if isinstance(value, str):
        value = printable(value)  # as put(): no control character reaches the file
    if value is not None and not (isinstance(value, float) and not math.isfinite(value)):
        cached(ws)[cell.coordinate] = value  # (inf/NaN is no cached value: Excel calls such a file corrupt)
    return cell


def cached(ws: Worksheet) -> dict[str, float | str]:
    if not hasattr(ws, CACHE):
        setattr(ws, CACHE, {})
    return getattr(ws, CACHE)


def column_total(ws: Worksheet, row: int, col: int, first: int, last: int, values, fmt: str | None = None):
    """A bold live total of column `col` over rows first..last (=0 when there are none) with its value, the sum
    of `values` (what those rows' cells hold)."""
    letter = get_column_letter(col)
    text = f"=SUM({letter}{first}:{letter}{last})" if last >= first else "=0"
    return formula(ws, row, col, text, fmt, bold=True, value=sum(values))


def header(ws: Worksheet, row: int, names: list[str]) -> None:
    for col, name in enumerate(names, start=1):
        cell = put(ws, row, col, name, bold=True)
        cell.fill = HEADER_FILL
        cell.alignment = Alignment(wrap_text=True, vertical="top")


def title(ws: Worksheet, text: str, subtitle: str = "") -> int:
    put(ws, 1, 1, text).font = TITLE
    if subtitle:
        put(ws, 2, 1, subtitle)
    return 4


def paragraph(ws: Worksheet, row: int, text: str, last_col: int, bold: bool = False) -> None:
    """A line of prose across columns 1..last_col, wrapped (fit_heights gives it the rows it needs)."""
    cell = put(ws, row, 1, text, bold=bold)
    cell.alignment = Alignment(wrap_text=True, vertical="top")
    if last_col > 1:
        ws.merge_cells(start_row=row, start_column=1, end_row=row, end_column=last_col)


def widths(ws: Worksheet, columns: dict[int, float]) -> None:
    for col, width in columns.items():
        ws.column_dimensions[get_column_letter(col)].width = width


def shown(cell) -> str:
    """The text a spreadsheet shows for a cell (numbers in their format; formulas as their cached value)."""
    value = cached(cell.parent).get(cell.coordinate, cell.value) if cell.data_type == "f" else cell.value
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    fmt = cell.number_format
    if fmt == USD:
        return f"${value:,.2f}"
    if fmt == USD0:
        return f"${value:,.0f}"
    if fmt == PCT:
        return f"{value * 100:.1f}%"
    if fmt == NUM1:
        return f"{value:,.1f}"
    if fmt == NUM0:
        return f"{value:,.0f}"
    if re.fullmatch(r"0\.0+", fmt):
        return f"{value:.{len(fmt) - 2}f}"
    return f"{value:.10g}"


def _text_width(cell) -> float:
    longest = max((len(line) for line in shown(cell).split("\n")), default=0)
    return longest * (BOLD_WIDTH if _font_of(cell).b else 1.0)


def _merged_anchor_cells(ws: Worksheet) -> set[str]:
    return {r.start_cell.coordinate for r in ws.merged_cells.ranges}


def fit_widths(ws: Worksheet, limits: dict[int, tuple[float, float]], from_row: int = 3) -> None:
    """Each listed column as wide as its longest text (rows from `from_row`; titles above may span),
    within (min, max); text wider than the column wraps. Merged cells span columns and are left alone."""
    merged = _merged_anchor_cells(ws)
    right_edge = _right_edges(ws)
    for col, (low, high) in limits.items():
        cells = [
            c
            for row in ws.iter_rows(min_row=from_row, min_col=col, max_col=col)
            for c in row
            if c.value is not None and c.coordinate not in merged
        ]
        # text with an empty cell to its right overflows into it (as section headings should), so only
        # text a neighbour would cut, or in the last column, sets the width; beyond `high` it wraps
        bounded = [(c, _text_width(c)) for c in cells if _has_right_neighbour(c, right_edge)]
        need = max((text for _, text in bounded), default=0.0) * FONT_SLACK + 2  # and a gap
        width = min(max(need, low), high)
        ws.column_dimensions[get_column_letter(col)].width = width
        for c, text in bounded:
            if text * FONT_SLACK + 1 > width:
                _realign(c, wrap_text=True, vertical="top")
    separate_columns(ws, from_row)


def fit_columns(ws: Worksheet, columns: dict[int, float], widest: float, from_row: int = 4) -> None:
    """Columns at least as wide as given and wider for longer text (up to `widest`, then it wraps); rows with
    wrapped text (headers included) as tall as their lines, so nothing is cut or overlaps."""
    fit_widths(ws, {col: (width, max(width, widest)) for col, width in columns.items()}, from_row=from_row)
    fit_heights(ws)


def separate_columns(ws: Worksheet, from_row: int = 3) -> None:
    """Left-aligned text right after a right-aligned figure gets an indent, so the two never touch
    ("$29,440,000.00catalogs/...")."""
    for row in ws.iter_rows(min_row=from_row, min_col=2):
        for c in row:
            neighbour = ws.cell(c.row, c.column - 1)
            left = cached(ws).get(neighbour.coordinate) if neighbour.data_type == "f" else neighbour.value
            if c.data_type == "s" and isinstance(left, int | float) and not isinstance(left, bool):
                _realign(c, indent=max(1, _alignment_of(c).indent or 0))


def _right_edges(ws: Worksheet) -> tuple[int, dict[int, int]]:
    """The sheet's last column and, per row, the last column holding a value (one pass over the cells: the
    sheet's max_column is itself a pass, too slow to ask for every cell)."""
    last: dict[int, int] = {}
    for (row, col), cell in ws._cells.items():
        if cell.value is not None and col > last.get(row, 0):
            last[row] = col
    return ws.max_column, last


def _has_right_neighbour(cell, right_edge: tuple[int, dict[int, int]]) -> bool:
    """A cell to the right holds something, or there is no column to the right to overflow into."""
    max_column, last = right_edge
    return cell.column >= max_column or last.get(cell.row, 0) > cell.column


def _stored(cell, collection: str, index: str):
    """A cell's font or alignment as the workbook stores it (read it, never change it: it is shared). openpyxl
    keeps a cell's style as indices into the workbook's lists, and cell.font and cell.alignment copy the entry
    into a new proxy on every read, which the layout passes make thousands of times a sheet."""
    style = cell._style  # None: the default style, every index 0
    return getattr(cell.parent.parent, collection)[getattr(style, index) if style is not None else 0]


def _font_of(cell):
    return _stored(cell, "_fonts", "fontId")


def _alignment_of(cell) -> Alignment:
    return _stored(cell, "_alignments", "alignmentId")


def _aligned(cell, **changes) -> Alignment:
    """The cell's alignment with some attributes changed (horizontal, indent and the rest kept)."""
    a = _alignment_of(cell)
    keep = {"horizontal": a.horizontal, "vertical": a.vertical, "wrap_text": a.wrap_text, "indent": a.indent}
    merged = keep | changes
    return _alignment(merged["horizontal"], merged["vertical"], merged["wrap_text"], merged["indent"])


def _realign(cell, **changes) -> None:
    """The cell's alignment with some attributes changed, unless they hold already (the layout passes ask again
    for cells they wrapped before, and every style set hashes the style; alignments here set no other field)."""
    current = _alignment_of(cell)
    if any(getattr(current, name) != value for name, value in changes.items()):
        cell.alignment = _aligned(cell, **changes)


@functools.cache
def _alignment(horizontal, vertical, wrap_text, indent) -> Alignment:
    """One Alignment per distinct value (a sheet asks for a few kinds thousands of times; a cell stores only
    the style's index, so sharing one object is safe)."""
    return Alignment(horizontal=horizontal, vertical=vertical, wrap_text=wrap_text, indent=indent)


def _column_width(ws: Worksheet, col: int) -> float:
    dim = ws.column_dimensions.get(get_column_letter(col))
    return dim.width if dim is not None and dim.width else 8.43  # Excel's default width


def _char_width(ch: str) -> float:
    """Width of a character in units of the digit "0" (what column widths count), for a proportional font."""
    if ch in " .,:;'|!ilIjft()[]-/":
        return 0.5
    if ch in "MWmw@%":
        return 1.3
    return 1.0 if ch.isupper() or ch.isdigit() or ch in "$#&_" else 0.85


@functools.lru_cache(maxsize=1 << 16)
def _word_width(word: str) -> float:
    return sum(_char_width(ch) for ch in word)


@functools.lru_cache(maxsize=1 << 12)  # the same cells are measured again as their columns narrow
def wrapped_lines(text: str, width: float) -> int:
    """Lines a spreadsheet needs to show `text` word-wrapped in `width` units (a word longer than the
    line breaks where it must)."""
    lines, used = 1, 0.0
    for word in text.split(" "):
        size = _word_width(word)
        if used and used + _char_width(" ") + size > width:
            lines, used = lines + 1, 0.0
        used += (_char_width(" ") if used else 0.0) + size
        while used > width:  # a word wider than the line
            lines, used = lines + 1, used - width
    return lines


def fit_heights(ws: Worksheet) -> None:
    """Rows holding wrapped text get the height of their longest cell's lines (spreadsheets do not grow a
    row for wrapped text by themselves when a file is opened, so text would overlap the next row)."""
    spans = {r.start_cell.coordinate: (r.min_col, r.max_col) for r in ws.merged_cells.ranges}
    column_width = functools.cache(lambda col: _column_width(ws, col))
    for row in _rows_with_values(ws):
        lines = 1
        for c in row:
            if not _alignment_of(c).wrap_text:
                continue
            first, last = spans.get(c.coordinate, (c.column, c.column))
            width = sum(column_width(k) for k in range(first, last + 1)) - 1
            factor = BOLD_WIDTH if _font_of(c).b else 1.0
            room = width / (factor * FONT_SLACK)
            lines = max(lines, sum(wrapped_lines(part, room) for part in shown(c).split("\n")))
        if lines > 1:
            # a line in four of headroom: the estimate counts characters, a spreadsheet wraps on glyph widths
            lines += lines // 4
            ws.row_dimensions[row[0].row].height = lines * LINE_HEIGHT_PT
            for c in row:  # figures beside wrapped text line up with its first line
                if _alignment_of(c).vertical != "top":
                    c.alignment = _aligned(c, vertical="top")


def _rows_with_values(ws: Worksheet) -> list[list]:
    """The cells holding a value, row by row (rows without one left out): the cells a sheet holds, not every
    cell of its rectangle, which iter_rows visits and creates (most of a report's rectangle is empty)."""
    rows: dict[int, list] = {}
    for (row, _), cell in sorted(ws._cells.items()):
        if cell.value is not None:
            rows.setdefault(row, []).append(cell)
    return list(rows.values())


def print_setup(ws: Worksheet, landscape: bool = True, title_rows: str | None = None, pages_tall: int = 0) -> None:
    """Fit to one page wide and `pages_tall` pages tall (0: as many as it takes); header rows repeated on
    every page when given ("4:4")."""
    ws.page_setup.orientation = "landscape" if landscape else "portrait"
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = pages_tall
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.print_options.gridLines = False
    ws.page_margins.left = ws.page_margins.right = 0.4
    ws.page_margins.top = ws.page_margins.bottom = 0.5
    if title_rows:
        ws.print_title_rows = title_rows


# Printed text stays readable: body text is 11 pt, so no sheet prints below 73% (8 pt); a sheet wider than
# that allows prints across pages (its header rows and first column repeated) instead of shrinking further.
BODY_PT, MIN_PRINTED_PT = 11.0, 8.0
# The narrowest printable width of the two paper sizes (Letter and A4), less print_setup's 0.4 in margins.
PRINTABLE_IN = {"landscape": 11.0 - 0.8, "portrait": 8.27 - 0.8}


# A column's printed width at 100% per character of its width, and its padding: LibreOffice prints about 7 pt per
# character (measured on this project's workbooks: Carlito 11 pt; 7.2 keeps a margin), wider than Excel's 7 px
# (5.25 pt); the wider is used, so Excel prints at least as large.
COLUMN_PT_PER_CHAR, COLUMN_PAD_PT = 7.2, 5.0


def _column_pt(ws: Worksheet, col: int) -> float:
    dim = ws.column_dimensions.get(get_column_letter(col))
    if dim is not None and dim.hidden:
        return 0.0  # a hidden column does not print
    return COLUMN_PT_PER_CHAR * _column_width(ws, col) + COLUMN_PAD_PT


def _left_pt(ws: Worksheet, col: int) -> float:
    """The printed distance at 100% from the sheet's left edge to column `col` (from 0: A is 0)."""
    return sum(_column_pt(ws, k) for k in range(1, col + 1))


def printed_width_pt(ws: Worksheet) -> float:
    """The sheet's width at 100%: its used columns, or a chart's right edge beyond them."""
    edges = [0.0]
    for col in range(1, ws.max_column + 1):
        edges.append(edges[-1] + _column_pt(ws, col))
    return max([edges[-1], *(_chart_right_pt(ws, chart) for chart in getattr(ws, "_charts", []))])


# A text column narrows to no less than this share of its fitted width: narrower, most of its cells wrap at every
# hyphen and the rows grow taller than the pages saved (the rest prints across pages).
NARROWEST_SHARE = 0.5


def _narrowable(ws: Worksheet) -> dict[int, float]:
    """The text columns and the width (characters) each may narrow to by wrapping: its longest word (a part
    number or path to its longest piece between hyphens and slashes), so no word breaks elsewhere, its widest
    figure, and NARROWEST_SHARE of its width (cells in merged ranges wrap over their span and are left out)."""
    merged, floors, figures = _merged_anchor_cells(ws), {}, {}
    for row in ws.iter_rows(min_row=3):
        for c in row:
            if c.value is None or c.coordinate in merged:
                continue
            if c.data_type != "s":  # a figure does not wrap: "###" where it does not fit
                figures[c.column] = max(figures.get(c.column, 0.0), _text_width(c) * FONT_SLACK + 2)
                continue
            factor = BOLD_WIDTH if _font_of(c).b else 1.0
            pieces = re.split(r"\s+|(?<=[-/])", str(c.value))  # a line may break after a hyphen or a slash
            word = max((len(w) for w in pieces), default=0) * factor * FONT_SLACK + 2  # as fit_widths counts
            floors[c.column] = max(floors.get(c.column, 10.0), word)
    floors = {
        col: max(floor, figures.get(col, 0.0), NARROWEST_SHARE * _column_width(ws, col))
        for col, floor in floors.items()
    }
    return {col: floor for col, floor in floors.items() if _column_width(ws, col) > floor}


def narrow_to_fit(ws: Worksheet, width_pt: float) -> None:
    """Narrow the text columns (each at most to its floor, _narrowable, in proportion to its room) until the
    sheet is `width_pt` wide, if they can; the cells that no longer fit wrap, and rows grow to hold them."""
    excess = (printed_width_pt(ws) - width_pt) / COLUMN_PT_PER_CHAR
    floors = _narrowable(ws)
    room = {col: _column_width(ws, col) - floor for col, floor in floors.items()}
    if excess <= 0 or sum(room.values()) < excess:  # it would not fit: it prints across pages as it is
        return
    share = min(1.0, excess / sum(room.values()))
    for col, spare in room.items():
        new = _column_width(ws, col) - spare * share
        ws.column_dimensions[get_column_letter(col)].width = new
        for (c,) in ws.iter_rows(min_row=3, min_col=col, max_col=col):
            if c.data_type == "s" and c.value and _text_width(c) * FONT_SLACK + 1 > new:
                _realign(c, wrap_text=True, vertical="top")
    fit_heights(ws)


# Chart text prints at the sheet's scale too: 11 pt like the body (a chart's default is 10 pt), titles 12 pt.
CHART_TEXT_PT, CHART_TITLE_PT = 11.0, 12.0
CM_PER_ROW = 15 / 72 * 2.54  # a 15 pt row


def _text_properties(size_pt: float, bold: bool = False):
    from openpyxl.chart.text import RichText
    from openpyxl.drawing.text import CharacterProperties, Paragraph, ParagraphProperties

    font = CharacterProperties(sz=int(size_pt * 100), b=bold)
    return RichText(p=[Paragraph(pPr=ParagraphProperties(defRPr=font), endParaRPr=font)])


def _sized_title(title, size_pt: float) -> None:
    """A chart or axis title's runs at `size_pt`, bold."""
    from openpyxl.drawing.text import CharacterProperties

    for para in title.tx.rich.p if title is not None and title.tx is not None and title.tx.rich else []:
        for run in para.r or []:
            run.rPr = CharacterProperties(sz=int(size_pt * 100), b=True)


def readable_chart(chart) -> None:
    """Axis labels, legend and data labels at CHART_TEXT_PT, titles at CHART_TITLE_PT (a chart combined with
    another, `chart + line`, carries the second's axes too)."""
    _sized_title(chart.title, CHART_TITLE_PT)
    charts = [chart, *getattr(chart, "_charts", [])]
    for part in charts:
        for axis in (getattr(part, "x_axis", None), getattr(part, "y_axis", None)):
            if axis is None:
                continue
            axis.txPr = _text_properties(CHART_TEXT_PT)
            _sized_title(axis.title, CHART_TEXT_PT)
        if getattr(part, "dataLabels", None) is not None:
            part.dataLabels.txPr = _text_properties(CHART_TEXT_PT)
    if chart.legend is not None:
        chart.legend.txPr = _text_properties(CHART_TEXT_PT)


def _anchor_cell(chart) -> tuple[int, int]:
    """A chart's top-left cell as (column index from 0, row from 1)."""
    from openpyxl.utils.cell import column_index_from_string, coordinate_from_string

    if isinstance(chart.anchor, str):
        letters, row = coordinate_from_string(chart.anchor)
        return column_index_from_string(letters) - 1, row
    start = getattr(chart.anchor, "_from", None)
    return (start.col, start.row + 1) if start is not None else (0, 1)  # an absolute anchor: as at A1


def charts_below(ws: Worksheet, width_pt: float) -> None:
    """A chart beside a table that would reach past `width_pt` moves below the sheet's cells and the other
    charts, at column A (a chart split over two pages prints as two halves)."""
    for chart in getattr(ws, "_charts", []):
        col, _ = _anchor_cell(chart)
        if col == 0 or _chart_right_pt(ws, chart) <= width_pt:
            continue
        others = [c for c in ws._charts if c is not chart]
        bottom = max([ws.max_row, *(_anchor_cell(c)[1] + math.ceil(c.height / CM_PER_ROW) for c in others)])
        chart.anchor = f"A{bottom + 2}"


def _chart_right_pt(ws: Worksheet, chart) -> float:
    return _left_pt(ws, _anchor_cell(chart)[0]) + chart.width / 2.54 * 72  # chart width in cm


def paginate(ws: Worksheet) -> None:
    """Print the text at MIN_PRINTED_PT or more. A sheet too wide for one page at that size first narrows its
    text columns (wrapping) and moves a chart beside its table below it; one that still does not fit prints at
    that size exactly (not fitted: a fit would shrink it further) across as many pages wide as it takes, its
    first column repeated on each (the header rows are print_setup's)."""
    if not ws.sheet_properties.pageSetUpPr or not ws.sheet_properties.pageSetUpPr.fitToPage:
        return
    for chart in getattr(ws, "_charts", []):
        readable_chart(chart)
    _chart_pages(ws)
    for orientation in ("portrait", "landscape") if ws.page_setup.orientation == "portrait" else ("landscape",):
        ws.page_setup.orientation = orientation  # a narrow sheet split in two reads worse than turned
        one_page = PRINTABLE_IN[orientation] * 72 * BODY_PT / MIN_PRINTED_PT
        if printed_width_pt(ws) > one_page:
            charts_below(ws, one_page)
            narrow_to_fit(ws, one_page)
        if printed_width_pt(ws) <= one_page + 0.5:  # (half a point: the narrowing's rounding)
            ws.page_setup.fitToWidth = 1
            _wrap_subtitle(ws)
            return
    _wrap_subtitle(ws)
    ws.sheet_properties.pageSetUpPr.fitToPage = False
    ws.page_setup.scale = math.ceil(100 * MIN_PRINTED_PT / BODY_PT)
    first_page_pt = PRINTABLE_IN[ws.page_setup.orientation] * 72 * 100 / ws.page_setup.scale
    _paragraphs_on_first_page(ws, first_page_pt)
    if not ws.print_title_cols:
        ws.print_title_cols = "A:A"
        for chart in getattr(ws, "_charts", []):  # column A repeats on every page: a chart there would too
            col, row = _anchor_cell(chart)
            if col == 0:
                chart.anchor = f"B{row}"
    _charts_on_first_page(ws, first_page_pt)


def _first_page_edge_pt(ws: Worksheet, room_pt: float) -> tuple[int, float]:
    """The last column of the first page of a sheet printed across pages, `room_pt` wide (a page ends at a
    column's edge), and that edge."""
    last, edge = 1, _column_pt(ws, 1)
    while last < ws.max_column and edge + _column_pt(ws, last + 1) <= room_pt:
        last, edge = last + 1, edge + _column_pt(ws, last + 1)
    return last, edge


def _charts_on_first_page(ws: Worksheet, room_pt: float) -> None:
    """A chart reaching past the first page's last column is narrowed to end there (across a page's edge its
    rest would print beside the repeated first column), to no less than 8 cm."""
    _, edge = _first_page_edge_pt(ws, room_pt)
    for chart in getattr(ws, "_charts", []):
        if _chart_right_pt(ws, chart) > edge:
            chart.width = max((edge - _left_pt(ws, _anchor_cell(chart)[0])) / 72 * 2.54, 8.0)


def _paragraphs_on_first_page(ws: Worksheet, room_pt: float) -> None:
    """Text merged over a row from column A wraps within the columns of the first page (`room_pt` wide): over
    a page's edge the next page would print its rest beside the repeated first column, over it."""
    last, _ = _first_page_edge_pt(ws, room_pt)
    wide = [r for r in ws.merged_cells.ranges if r.min_col == 1 and r.max_col > last and r.min_row == r.max_row]
    for r in wide:
        ws.unmerge_cells(str(r))
        ws.merge_cells(start_row=r.min_row, start_column=1, end_row=r.min_row, end_column=last)
    if wide:
        fit_heights(ws)


def _wrap_subtitle(ws: Worksheet) -> None:
    """A subtitle longer than the sheet is wide (it would run on past the last column, and a spreadsheet prints
    text that runs on, widening the page) wraps over the used columns instead."""
    cell, last = ws.cell(2, 1), max(ws.max_column, 1)
    if cell.data_type != "s" or not cell.value or last < 2 or ws.cell(2, 2).value is not None:
        return
    room = sum(_column_width(ws, k) for k in range(1, last + 1))
    if _text_width(cell) * FONT_SLACK <= room or any(cell.coordinate in r for r in ws.merged_cells.ranges):
        return
    ws.merge_cells(start_row=2, start_column=1, end_row=2, end_column=last)
    cell.alignment = _aligned(cell, wrap_text=True, vertical="top")
    fit_heights(ws)


def _chart_pages(ws: Worksheet) -> None:
    """A chart below a table whose header rows repeat on every page starts a page of its own: across a page
    break the repeated header would print over it."""
    if not ws.print_title_rows:
        return
    from openpyxl.worksheet.pagebreak import Break

    header_end = int(str(ws.print_title_rows).split(":")[-1].strip("$"))
    taken = {b.id for b in ws.row_breaks.brk}
    for chart in getattr(ws, "_charts", []):
        _, row = _anchor_cell(chart)
        if row > header_end + 1 and row - 1 not in taken:
            ws.row_breaks.append(Break(id=row - 1))
            taken.add(row - 1)


class _StyleList(IndexedList):
    """A workbook's list of fonts, fills, alignments or borders that finds a style object it already holds by
    identity: openpyxl hashes every field of a style each time one is set on a cell (twice: to look it up and to
    add it), while planner sets a few shared, never-changed objects (BOLD, HEADER_FILL, the cached alignments) on
    thousands of cells. An object not seen before is looked up by value, as openpyxl does."""

    def __init__(self, iterable=None):
        super().__init__(iterable)
        self._by_identity: dict[int, tuple[object, int]] = {}

    def add(self, value) -> int:
        seen = self._by_identity.get(id(value))
        if seen is not None and seen[0] is value:
            return seen[1]
        index = super().add(value)
        self._by_identity[id(value)] = (value, index)  # (the object kept alive: its id is not reused)
        return index


def new_workbook() -> Workbook:
    """An empty workbook whose style lists are _StyleLists (the same contents and indices as openpyxl's)."""
    workbook = Workbook()
    for name in ("_fonts", "_fills", "_alignments", "_borders"):
        setattr(workbook, name, _StyleList(getattr(workbook, name)))
    return workbook


def sheet(workbook: Workbook, name: str) -> Worksheet:
    return workbook.create_sheet(name[:MAX_SHEET_NAME])


def ref(ws: Worksheet, row: int, col: int, absolute: bool = False) -> str:
    letter = get_column_letter(col)
    local = f"${letter}${row}" if absolute else f"{letter}{row}"
    return f"'{ws.title}'!{local}"


def save(workbook: Workbook, path: Path) -> None:
    """The workbook, with every formula's value, written atomically (a temporary beside path, renamed into
    place; inside a command's Outputs transaction that temporary is itself renamed at the commit). Built in
    memory first: a full disk then fails one plain write (one error line, nothing changed), not openpyxl's
    zip file half-written and left open (whose clean-up at exit printed a traceback)."""

    for ws in workbook.worksheets:
        paginate(ws)
    buffer = io.BytesIO()
    _save_or_raise(workbook, buffer, path)
    values = {ws.title: dict(cached(ws)) for ws in workbook.worksheets}
    data = with_cached_values(buffer.getvalue(), values)
    write_atomic(Path(path), lambda tmp: tmp.write_bytes(data))


def _save_or_raise(workbook: Workbook, buffer: io.BytesIO, path: Path) -> None:
    """workbook.save, whose sheets go through temporary files (a full temporary folder fails it): on failure
    openpyxl leaves its sheet writers open, and their clean-up at the next garbage collection printed a
    traceback after planner's one-line error. They are collected here, silently, then a WriteError for path
    raised (outside the except block, so it holds none of openpyxl's frames)."""
    failure = None
    try:
        workbook.save(buffer)
    except OSError as exc:
        failure = WriteError(path, exc.strerror or type(exc).__name__)
    if failure is None:
        return
    hook = sys.unraisablehook
    sys.unraisablehook = lambda _unraisable: None
    try:
        gc.collect()
    finally:
        sys.unraisablehook = hook
    raise failure


# ---------------------------------------------------------------- cached values in the saved file

_NS = {
    "m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
    "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "rel": "http://schemas.openxmlformats.org/package/2006/relationships",
}


def _sheet_parts(z: zipfile.ZipFile) -> dict[str, str]:
    """Sheet title -> its XML part, from the workbook and its relationships (the file openpyxl just wrote)."""
    book = ElementTree.fromstring(z.read("xl/workbook.xml"))
    rels = ElementTree.fromstring(z.read("xl/_rels/workbook.xml.rels"))
    targets = {r.get("Id"): r.get("Target") for r in rels.findall("rel:Relationship", _NS)}
    parts = {}
    for s in book.findall("m:sheets/m:sheet", _NS):
        target = targets[s.get(f"{{{_NS['r']}}}id")].lstrip("/")
        parts[s.get("name")] = target if target.startswith("xl/") else f"xl/{target}"
    return parts


def _with_values(xml: str, values: dict[str, float | str]) -> str:
    """Fill each formula cell's empty <v/> with its value (t="str" for text results)."""

    def fill(match: re.Match) -> str:
        start, coordinate, body = match.group(1), match.group(2), match.group(3)
        if coordinate not in values:
            return match.group(0)
        value = values[coordinate]
        if isinstance(value, str):
            start = start[:-1] + ' t="str">'
            text = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        else:
            text = repr(float(value))
        return f"{start}{body}<v>{text}</v></c>"

    return re.sub(r'(<c r="([A-Z]+[0-9]+)"[^>]*>)(<f>[^<]*</f>)(?:<v\s*/>|<v></v>)</c>', fill, xml)


def with_cached_values(data: bytes, values_by_sheet: dict[str, dict[str, float | str]]) -> bytes:
    """The saved .xlsx (its bytes) with the cached value of every formula that has one."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        entries = [(info, z.read(info.filename)) for info in z.infolist()]
        parts = _sheet_parts(z)
    changed = {
        parts[title]: _with_values(next(d for i, d in entries if i.filename == parts[title]).decode("utf-8"), values)
        for title, values in values_by_sheet.items()
        if values
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for info, data in entries:
            z.writestr(info, changed[info.filename].encode("utf-8") if info.filename in changed else data)
    return out.getvalue()


LEFT = Alignment(horizontal="left", vertical="top")


def pairs(ws: Worksheet, row: int, heading: str, items: list[tuple[str, object]]) -> int:
    """A heading, then label/value rows (a value may be (number, format)); returns the next free row."""
    put(ws, row, 1, heading, bold=True)
    row += 1
    for label, value in items:
        put(ws, row, 1, label).alignment = Alignment(vertical="top")
        if isinstance(value, tuple):
            cell = put(ws, row, 2, value[0], value[1])
        else:
            cell = put(ws, row, 2, value if isinstance(value, int | float) else str(value))
        cell.alignment = LEFT  # a column of mixed text and figures reads better aligned one way
        row += 1
    return row + 1
