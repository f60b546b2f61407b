"""Read raw tables (header + rows with the row numbers a person sees) from CSV files and XLSX sheets.

No validation of content here: catalog.py turns tables into typed rows. Problems reading a file become
CatalogProblem entries, never exceptions, so one run reports every broken file at once.
"""

from __future__ import annotations

import csv
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from planner.errors import CatalogProblem

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


def read_csv(path: Path) -> tuple[list[RawTable], list[CatalogProblem]]:
    label = str(path)
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle)
            numbered = []
            start = 1
            for values in reader:
                numbered.append((start, [v if v.strip() else None for v in values]))
                start = reader.line_num + 1
    except UnicodeDecodeError as exc:
        return [], [CatalogProblem(label, None, None, None, f"not UTF-8 text ({exc.reason}); save it as UTF-8 CSV")]
    except csv.Error as exc:
        return [], [CatalogProblem(label, None, None, None, f"not valid CSV ({exc}); check the quoting")]
    except OSError as exc:
        return [], [CatalogProblem(label, None, None, None, f"cannot read: {exc.strerror}")]
    return [_table_from_rows(label, path.stem.lower(), numbered)], []


def read_xlsx(path: Path) -> tuple[list[RawTable], list[CatalogProblem]]:
    """One table per sheet. openpyxl parses with defusedxml when it is installed (a hard dependency of
    planner), so entity-expansion bombs are refused instead of exhausting memory."""
    import openpyxl
    from openpyxl.utils.exceptions import InvalidFileException

    label = str(path)
    try:
        workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (zipfile.BadZipFile, InvalidFileException, KeyError, OSError, ValueError) as exc:
        cause = exc.__cause__ or exc.__context__
        if cause is not None and type(cause).__module__.startswith("defusedxml"):
            problem = (
                f"refused: its XML declares entities or a DTD ({type(cause).__name__}), as XML bombs do; "
                "re-export it from Excel or as CSV"
            )
        else:
            reason = type(exc).__name__ if not str(exc) else str(exc).splitlines()[0]
            problem = f"not a readable .xlsx workbook ({reason}); save it from Excel as .xlsx or export CSV"
        return [], [CatalogProblem(label, None, None, None, problem)]
    tables, problems = [], []
    try:
        for sheet in workbook.worksheets:
            sheet_label = f"{label}[{sheet.title}]"
            try:
                numbered = [
                    (n, [v.strip() if isinstance(v, str) else v for v in values])
                    for n, values in enumerate(sheet.iter_rows(min_row=1, values_only=True), start=1)
                ]
            except Exception as exc:  # a corrupt sheet part: report it, keep reading the others
                problems.append(CatalogProblem(sheet_label, None, None, None, f"unreadable sheet ({exc})"))
                continue
            tables.append(_table_from_rows(sheet_label, sheet.title.strip().lower(), numbered))
    finally:
        workbook.close()
    return tables, problems


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
