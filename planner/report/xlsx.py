"""Low-level, safe cell writing for openpyxl workbooks.

Text is always written as text: openpyxl turns any string that starts with "=" into a formula, and Excel
evaluates cells starting with = + - @ (and tab/CR) when a file is opened or a cell edited. Only `formula()`
writes formulas, and its text is built by planner code, never from catalog or scenario text.
"""

from __future__ import annotations

import math
from pathlib import Path

from openpyxl import Workbook
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from planner.fileio import write_atomic
from planner.limits import printable
from planner.report.csvtext import FORMULA_LEADS

USD = '"$"#,##0.00'
USD0 = '"$"#,##0'
PCT = "0.0%"
NUM1 = "#,##0.0"
NUM0 = "#,##0"
BOLD = Font(bold=True)
TITLE = Font(bold=True, size=14)
HEADER_FILL = PatternFill("solid", fgColor="DDE7F0")
INPUT_FILL = PatternFill("solid", fgColor="FFF2CC")
DANGEROUS = FORMULA_LEADS
MAX_SHEET_NAME = 31  # Excel's limit


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


def formula(ws: Worksheet, row: int, col: int, text: str, fmt: str | None = None, bold: bool = False):
    """Write a live formula. `text` must be built by planner code only (cell references and numbers)."""
    if not text.startswith("="):
        raise ValueError("a formula starts with '='")
    cell = ws.cell(row=row, column=col)
    cell.value = text
    if fmt:
        cell.number_format = fmt
    if bold:
        cell.font = BOLD
    return cell


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


def widths(ws: Worksheet, columns: dict[int, float]) -> None:
    for col, width in columns.items():
        ws.column_dimensions[get_column_letter(col)].width = width


def print_setup(ws: Worksheet, landscape: bool = True) -> None:
    """Fit to one page wide, any number tall."""
    ws.page_setup.orientation = "landscape" if landscape else "portrait"
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True


def sheet(workbook: Workbook, name: str) -> Worksheet:
    return workbook.create_sheet(name[:MAX_SHEET_NAME])


def ref(ws: Worksheet, row: int, col: int, absolute: bool = False) -> str:
    letter = get_column_letter(col)
    local = f"${letter}${row}" if absolute else f"{letter}{row}"
    return f"'{ws.title}'!{local}"


def save(workbook: Workbook, path: Path) -> None:
    """Atomically: a temporary file in the same folder, renamed into place."""
    write_atomic(Path(path), lambda tmp: workbook.save(tmp))
