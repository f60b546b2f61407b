"""Read raw tables (header + rows with the row numbers a person sees) from CSV files and XLSX sheets.

No validation of content here: catalog.py turns tables into typed rows. Problems reading a file become
CatalogProblem entries, never exceptions, so one run reports every broken file at once.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from planner.base import limits as L
from planner.base.errors import CatalogProblem
from planner.base.fileio import InputFileError, decode_text, read_bytes

# "# planner catalog: gpus, schema 1" on the first line of a CSV (or first cell of a sheet)
_MARKER = re.compile(r"^#\s*planner catalog:\s*(?P<kind>[\w-]+)\s*(?:,\s*schema\s*(?P<schema>\d+))?", re.I)


@dataclass
class RawTable:
    """One table: the header and its data rows, each with its 1-based row number in the file."""

    label: str  # "path" or "path[sheet]", used in every message
    kind_hint: str | None  # from the marker comment, sheet name or file name; None = infer
    schema: int | None
    header_row: int
    header: list[str]
    rows: list[tuple[int, list[object]]] = field(default_factory=list)
    hidden: str | None = None  # "hidden" or "very hidden": a sheet nobody sees, never read (see read_xlsx)
    file: str = ""  # the file it was read from
    sha256: str = ""  # of the bytes parsed (the file as read, not as it may be by the time a report is written)


def normalise_column(name: object) -> str:
    return re.sub(r"[\s\-]+", "_", str(name).strip().lower()) if name is not None else ""


def _is_blank(values: list[object]) -> bool:
    return all(v is None or (isinstance(v, str) and not v.strip()) for v in values)


def _table_from_rows(label: str, kind_hint: str | None, numbered: list[tuple[int, list[object]]]) -> RawTable:
    """First non-blank, non-comment row is the header; a leading marker comment may name the kind."""
    schema = None
    for i, (number, values) in enumerate(numbered):
        if _is_blank(values):
            continue
        first = str(values[0]).strip() if values[0] is not None else ""
        if first.startswith("#"):
            marker = _MARKER.match(",".join(str(v) for v in values if v is not None))
            if marker:
                kind_hint = marker["kind"].lower()
                schema = int(marker["schema"]) if marker["schema"] else None
            continue
        header = [normalise_column(v) for v in values]
        while header and not header[-1]:
            header.pop()
        body = [(n, v) for n, v in numbered[i + 1 :] if not _is_blank(v) and not _comment(v)]
        return RawTable(label, kind_hint, schema, number, header, body)
    return RawTable(label, kind_hint, schema, 0, [], [])


def _comment(values: list[object]) -> bool:
    return isinstance(values[0], str) and values[0].lstrip().startswith("#")


class _TooBig(Exception):
    """A table beyond MAX_TABLE_ROWS or MAX_TABLE_COLUMNS; the message says which."""


def read_csv(
    path: Path, max_bytes: int = L.MAX_CATALOG_BYTES, what: str = "catalog"
) -> tuple[list[RawTable], list[CatalogProblem]]:
    """One table. The file is read whole but at most max_bytes (refused beyond), as UTF-8 (BOM or not)."""
    label = str(path)
    try:
        data = read_bytes(path, max_bytes, what)
        text = decode_text(path, data, what, nul_ok=True)
        read_from = _read_from(path, data)
    except InputFileError as exc:
        return [], [CatalogProblem(label, None, None, None, exc.reason)]
    reader = csv.reader(io.StringIO(text, newline=""))
    numbered = []
    start = 1
    try:
        for values in reader:
            _check_size(len(numbered), len(values), start)
            numbered.append((start, [v if v.strip() else None for v in values]))
            start = reader.line_num + 1
    except csv.Error as exc:
        problem = f"not valid CSV on line {reader.line_num} ({exc}); check the quoting"
        return [], [CatalogProblem(label, None, None, None, problem)]
    except _TooBig as exc:
        return [], [CatalogProblem(label, None, None, None, str(exc))]
    return [read_from(_table_from_rows(label, path.stem.lower(), numbered))], []


def _read_from(path: Path, data: bytes) -> Callable[[RawTable], RawTable]:
    """Marks each table of one file with the file and the digest of its bytes (hashed once per file)."""
    where = {"file": str(path), "sha256": hashlib.sha256(data).hexdigest()}
    return lambda table: dataclasses.replace(table, **where)


def _check_size(rows_so_far: int, columns: int, row: int) -> None:
    if rows_so_far >= L.MAX_TABLE_ROWS:
        raise _TooBig(f"more than {L.MAX_TABLE_ROWS:,} rows, the limit for one table; split it into several files")
    if columns > L.MAX_TABLE_COLUMNS:
        raise _TooBig(f"row {row} has {columns:,} cells, more than the limit of {L.MAX_TABLE_COLUMNS} columns")


def check_xlsx_archive(label: str, data: bytes) -> str | None:
    """Why the zip directory of an .xlsx refuses it (too many members, too large once uncompressed), or
    None. Declared sizes bind: Python's zipfile stops decompressing a member at its declared size."""
    try:
        members = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        return f"not a readable .xlsx workbook ({exc}); save it from Excel as .xlsx or export CSV"
    if len(members) > L.MAX_XLSX_MEMBERS:
        return f"refused: {len(members):,} parts in the archive, more than {L.MAX_XLSX_MEMBERS:,}; export CSV instead"
    total = sum(m.file_size for m in members)
    if total > L.MAX_XLSX_UNCOMPRESSED_BYTES:
        return (
            f"refused: {total / L.MIB:,.0f} MiB once uncompressed, more than the "
            f"{L.MAX_XLSX_UNCOMPRESSED_BYTES / L.MIB:g} MiB limit for a workbook (a zip bomb, or a very large "
            "sheet); export the catalog as CSV"
        )
    return None


_HIDDEN = {"hidden": "hidden", "veryHidden": "very hidden"}


def read_xlsx(path: Path) -> tuple[list[RawTable], list[CatalogProblem]]:
    """One table per sheet. The zip directory is checked first (check_xlsx_archive); openpyxl then parses
    with defusedxml (a hard dependency of planner), so entity-expansion bombs are refused too.

    A hidden or very hidden sheet is not read: a price that decides a plan must be one a person can see in
    the workbook (a quote's very hidden sheet repeating a SKU at $1 would otherwise set it). It comes back as
    an empty table marked `hidden`, so validation and the workbooks can name it."""
    import openpyxl
    from openpyxl.utils.exceptions import InvalidFileException

    label = str(path)
    try:
        data = read_bytes(path, L.MAX_CATALOG_BYTES, "catalog")
    except InputFileError as exc:
        return [], [CatalogProblem(label, None, None, None, exc.reason)]
    refused = check_xlsx_archive(label, data)
    if refused:
        return [], [CatalogProblem(label, None, None, None, refused)]
    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (zipfile.BadZipFile, InvalidFileException, KeyError, OSError, ValueError) as exc:
        cause = exc.__cause__ or exc.__context__
        if cause is not None and type(cause).__module__.startswith("defusedxml"):
            problem = (
                f"refused: its XML declares entities or a DTD ({type(cause).__name__}), as XML bombs do; "
                "re-export it from Excel or as CSV"
            )
        else:
            reason = type(exc).__name__ if not str(exc) else L.cut(str(exc).splitlines()[0], 200)
            problem = f"not a readable .xlsx workbook ({reason}); save it from Excel as .xlsx or export CSV"
        return [], [CatalogProblem(label, None, None, None, problem)]
    tables, problems = [], []
    read_from = _read_from(path, data)
    try:
        for sheet in workbook.worksheets:
            sheet_label = f"{label}[{L.cut(sheet.title, 40)}]"
            if sheet.sheet_state in _HIDDEN:
                hidden = RawTable(sheet_label, None, None, 0, [], hidden=_HIDDEN[sheet.sheet_state])
                tables.append(read_from(hidden))
                continue
            try:
                numbered = _sheet_rows(sheet)
            except _TooBig as exc:
                problems.append(CatalogProblem(sheet_label, None, None, None, str(exc)))
                continue
            except Exception as exc:  # a corrupt sheet part: report it, keep reading the others
                reason = L.cut(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, 200)
                problems.append(CatalogProblem(sheet_label, None, None, None, f"unreadable sheet ({reason})"))
                continue
            tables.append(read_from(_table_from_rows(sheet_label, sheet.title.strip().lower(), numbered)))
    finally:
        workbook.close()
    return tables, problems


EXCEL_MAX_ROWS = 1_048_576  # no real sheet has more; a hostile row number (r="999999999") stops here


def _sheet_rows(sheet) -> list[tuple[int, list[object]]]:
    """Numbered non-blank rows, trailing empty cells dropped; at most MAX_TABLE_ROWS of MAX_TABLE_COLUMNS
    (openpyxl is told the bounds, so a sheet claiming A1:XFD1048576 is not padded to that size)."""
    declared = sheet.max_column  # from the sheet's <dimension> tag (None when absent)
    if declared and declared > L.MAX_TABLE_COLUMNS:
        raise _TooBig(f"the sheet declares {declared:,} columns, more than the limit of {L.MAX_TABLE_COLUMNS}")
    numbered = []
    width = L.MAX_TABLE_COLUMNS + 1  # (without a dimension, cells past this column are not read)
    rows = sheet.iter_rows(min_row=1, max_row=EXCEL_MAX_ROWS, max_col=width, values_only=True)
    for n, row in enumerate(rows, start=1):
        if row.count(None) == len(row):  # the gaps openpyxl fills in: skip them fast
            continue
        values = [v.strip() if isinstance(v, str) else v for v in row]
        while values and values[-1] is None:
            values.pop()
        _check_size(len(numbered), len(values), n)
        numbered.append((n, values))
    return numbered


def read_path(path: Path) -> tuple[list[RawTable], list[CatalogProblem]]:
    """A CSV file, an .xlsx workbook, or a folder of them."""
    if not path.exists():
        return [], [CatalogProblem(str(path), None, None, None, "file not found; check the path")]
    if path.is_dir():
        members = sorted(p for p in path.iterdir() if p.suffix.lower() in (".csv", ".xlsx") and p.is_file())
        if not members:
            return [], [CatalogProblem(str(path), None, None, None, "folder holds no .csv or .xlsx catalog files")]
        tables, problems = [], []
        for member in members:
            t, p = read_path(member)
            tables += t
            problems += p
        return tables, problems
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return read_csv(path)
    if suffix == ".xlsx":
        return read_xlsx(path)
    problem = f"unsupported file type {suffix or '(none)'!r}; give a .csv, an .xlsx or a folder of them"
    return [], [CatalogProblem(str(path), None, None, None, problem)]
