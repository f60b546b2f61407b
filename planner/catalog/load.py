"""Load and validate price catalogs: the packaged defaults, then the user's files on top.

A user row whose key (name, sku, or provider+instance+region; case-insensitive) matches a default row
replaces it; other rows are added. Every problem in every file is collected and reported together,
each naming file, row, column, value and the fix.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import gc
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from pydantic import ValidationError

from planner.base.errors import CatalogError, CatalogProblem, PlannerError
from planner.base.resources import catalogs_dir, display_name
from planner.catalog.read import RawTable, read_path
from planner.catalog.rows import (
    KINDS,
    ROW_TYPES,
    SCHEMA_VERSION,
    CatalogRow,
    GpuRow,
    ModelRow,
    NicRow,
    ServerRow,
    error_text,
)


@dataclass(frozen=True)
class Origin:
    file: str
    row: int


@dataclass
class Catalog:
    """Validated rows per kind, keyed by their lower-cased key, with where each row came from."""

    rows: dict[str, dict[tuple[str, ...], CatalogRow]] = field(default_factory=lambda: {k: {} for k in KINDS})
    origins: dict[tuple[str, tuple[str, ...]], Origin] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # file -> sha256, in load order
    hidden_sheets: dict[str, str] = field(default_factory=dict)  # "file[sheet]" -> "hidden"/"very hidden": not read
    empty_tables: list[str] = field(default_factory=list)  # tables with a header and no rows

    def items(self, kind: str) -> list[CatalogRow]:
        return list(self.rows[kind].values())

    def origin(self, row: CatalogRow) -> Origin:
        return self.origins[(row.catalog_kind, row.key())]

    def cited(self, row: CatalogRow) -> str:
        """Where a row came from as reports cite it: "catalogs/servers.csv:8" (the file as display_name shows it)."""
        origin = self.origin(row)
        return f"{display_name(origin.file)}:{origin.row}"

    def counts(self) -> dict[str, int]:
        return {kind: len(self.rows[kind]) for kind in KINDS}

    def frame(self, kind: str) -> pd.DataFrame:
        """One row per catalog row, all columns, plus origin_file and origin_row."""
        records = []
        with _gc_paused():
            self._records(kind, records)
        columns = list(ROW_TYPES[kind].model_fields) + ["origin_file", "origin_row"]
        return pd.DataFrame.from_records(records, columns=columns)

    def _records(self, kind: str, records: list[dict]) -> None:
        for key, row in self.rows[kind].items():
            record = dict(row.__dict__)  # the field values as they are: model_dump is ~10x slower per row
            for name, value in record.items():
                if isinstance(value, list):
                    record[name] = ";".join(_cell(v) for v in value)
            origin = self.origins[(kind, key)]
            records.append({**record, "origin_file": origin.file, "origin_row": origin.row})

    # -- lookups by name, case-insensitive, aliases accepted; unknown names suggest close ones --

    def gpu(self, name: str) -> GpuRow:
        return _lookup(self.items("gpus"), name, "GPU", "gpus")  # type: ignore[return-value]

    def model(self, name: str) -> ModelRow:
        return _lookup(self.items("models"), name, "model", "models")  # type: ignore[return-value]

    def server(self, name: str) -> ServerRow:
        return _lookup(self.items("servers"), name, "server", "servers")  # type: ignore[return-value]

    def nic(self, sku: str) -> NicRow:
        return _lookup(self.items("nics"), sku, "NIC", "nics")  # type: ignore[return-value]

    def port_modes(self, sku: str) -> list[NicRow]:
        """A card and every other port mode of it (ConnectX-8: XDR InfiniBand, or 2x400GbE)."""
        card = self.nic(sku).card.lower()
        return [n for n in self.items("nics") if n.card.lower() == card]

    def switch(self, sku: str) -> CatalogRow:
        return _lookup(self.items("switches"), sku, "switch", "switches")


def _cell(value: object) -> str:
    """A list item as written in a catalog cell (an orderable length: METRES:PART)."""
    if isinstance(value, tuple):
        return f"{value[0]:g}:{value[1]}"
    return str(value)


def _names(row: CatalogRow) -> list[str]:
    primary = str(getattr(row, row.key_fields[0]))
    return [primary, *getattr(row, "aliases", [])]


def _lookup(rows: Iterable[CatalogRow], name: str, what: str, kind: str) -> CatalogRow:
    wanted = name.strip().lower()
    rows = list(rows)
    for row in rows:
        if wanted in (n.lower() for n in _names(row)):
            return row
    raise PlannerError(unknown_name_message(what, name, [n for r in rows for n in _names(r)], kind))


def unknown_name_message(what: str, name: str, known: Sequence[str], kind: str) -> str:
    by_lower = {k.lower(): k for k in known}
    # names that contain what was typed ("DGX A100" -> "DGX A100 640GB (list 2021-06)"), then close spellings
    containing = [k for k in by_lower if name.strip().lower() in k] if name.strip() else []
    close = list(dict.fromkeys(containing + difflib.get_close_matches(name.lower(), list(by_lower), n=3, cutoff=0.5)))
    close = close[:3]
    hint = f"did you mean {', '.join(by_lower[c] for c in close)}? " if close else ""
    return f"unknown {what} {name!r}: {hint}(see `planner catalog list {kind}`, or add it with --catalog)"


# ---------------------------------------------------------------- loading


def load_catalog(paths: Sequence[str | Path] = (), defaults: bool = True) -> Catalog:
    """Defaults (unless defaults=False), then each path in order. Raises CatalogError listing all problems."""
    sources = ([catalogs_dir()] if defaults else []) + [Path(p) for p in paths]
    catalog, problems = Catalog(), []
    with _gc_paused():
        _load_sources(catalog, sources, problems)
    problems += _check_references(catalog)
    if not problems:  # connector claims are checked on rows that parsed and resolve
        from planner.catalog.connectors import catalog_problems

        problems += catalog_problems(catalog) + _check_server_nics(catalog)
    if problems:
        raise CatalogError(problems)
    return catalog


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Bulk loading creates one long-lived object per row, none cyclic garbage: the cyclic collector would
    rescan them all again and again (a third of the time of a 100k-row catalog)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _load_sources(catalog: Catalog, sources: list[Path], problems: list[CatalogProblem]) -> None:
    """Each source in order; a later source's row replaces an earlier one of the same key, but within one
    source (a file, a folder, a workbook's sheets) a key may appear once: a second row of it in another
    sheet or file is a problem naming both places, never a silent replacement."""
    for source in sources:
        tables, read_problems = read_path(source)
        problems += read_problems
        seen: dict[tuple[str, tuple[str, ...]], Origin] = {}  # (kind, key) -> where this source first gave it
        for table in tables:
            catalog.files.setdefault(table.file, table.sha256)  # the digest of the bytes parsed
            problems += _merge_table(catalog, table, seen)


def _kind_of(table: RawTable) -> tuple[str | None, CatalogProblem | None]:
    if table.kind_hint in ROW_TYPES:
        return table.kind_hint, None

    def fits(row_type: type[CatalogRow]) -> bool:
        columns = set(_current_names(table.header, row_type)[0]) - {""}
        return _required(row_type) <= columns <= set(row_type.model_fields)

    matches = [kind for kind, row_type in ROW_TYPES.items() if fits(row_type)]
    if len(matches) == 1:
        return matches[0], None
    message = (
        f"cannot tell which catalog kind this is; name the file or sheet after its kind "
        f"({', '.join(KINDS)}) or start it with the line '# planner catalog: KIND, schema {SCHEMA_VERSION}'"
    )
    return None, CatalogProblem(table.label, None, None, None, message)


def _required(row_type: type[CatalogRow]) -> set[str]:
    return {name for name, f in row_type.model_fields.items() if f.is_required()}


def _merge_table(
    catalog: Catalog, table: RawTable, seen: dict[tuple[str, tuple[str, ...]], Origin]
) -> list[CatalogProblem]:
    if table.hidden:
        catalog.hidden_sheets[table.label] = table.hidden
        return []
    if not table.header:
        return [CatalogProblem(table.label, None, None, None, "empty: no header row found")]
    kind, problem = _kind_of(table)
    if problem:
        return [problem]
    if table.schema is not None and table.schema > SCHEMA_VERSION:
        message = (
            f"written for catalog schema {table.schema}; this planner reads schema {SCHEMA_VERSION}: upgrade planner"
        )
        return [CatalogProblem(table.label, None, None, None, message)]
    row_type = ROW_TYPES[kind]
    header, written_as = _current_names(table.header, row_type)
    problems = _check_header(table, row_type, header, written_as)
    if problems:
        return problems
    if not table.rows:
        catalog.empty_tables.append(table.label)
    for number, values in table.rows:
        record = {c: v for c, v in zip(header, values, strict=False) if c and v is not None}
        extra = [v for v in values[len(table.header) :] if v is not None]
        if extra:
            problems.append(CatalogProblem(table.label, number, None, extra[0], "more cells than header columns"))
            continue
        try:
            row = row_type.model_validate(record)
        except ValidationError as exc:
            found = [problem_from_pydantic(table.label, number, err) for err in exc.errors()]
            problems += [dataclasses.replace(p, column=written_as.get(p.column, p.column)) for p in found]
            continue
        key = row.key()
        first = seen.setdefault((kind, key), Origin(table.label, number))
        if first.row != number or first.file != table.label:
            problems.append(_duplicate(table.label, number, row, first))
            continue
        catalog.rows[kind][key] = row
        catalog.origins[(kind, key)] = Origin(table.label, number)
    return problems


def _duplicate(label: str, number: int, row: CatalogRow, first: Origin) -> CatalogProblem:
    what = "/".join(row.key_fields)
    if first.file == label:
        message = f"duplicate {what} (also on row {first.row}); keep one row per {what}"
    else:
        message = (
            f"duplicate {what} (also in {first.file}, row {first.row}); keep one row per {what} in one --catalog "
            "file, folder or workbook (a later --catalog replaces an earlier one's row)"
        )
    return CatalogProblem(label, number, row.key_fields[0], getattr(row, row.key_fields[0]), message)


def _current_names(header: list[str], row_type: type[CatalogRow]) -> tuple[list[str], dict[str, str]]:
    """The header in the row type's current column names, and {current name: the name the file used} for the
    columns an earlier schema named otherwise (messages name the column as the file does)."""
    renamed = row_type.renamed_columns
    names = [renamed.get(c, c) for c in header]
    return names, {renamed[c]: c for c in header if c in renamed}


def _check_header(
    table: RawTable, row_type: type[CatalogRow], header: list[str], written_as: dict[str, str]
) -> list[CatalogProblem]:
    known = list(row_type.model_fields)
    problems = []
    for column in header:
        if column and column not in known:
            close = difflib.get_close_matches(column, known, n=1)
            fix = f"did you mean '{close[0]}'?" if close else f"valid columns: {', '.join(known)}"
            problems.append(CatalogProblem(table.label, table.header_row, column, None, f"unknown column; {fix}"))
    duplicated = {c for c in header if c and header.count(c) > 1}
    for column in sorted(duplicated):
        message = (
            f"column appears twice: '{written_as[column]}' is its earlier name; keep one of them"
            if column in written_as and column in table.header
            else "column appears twice"
        )
        problems.append(CatalogProblem(table.label, table.header_row, column, None, message))
    for column in sorted(_required(row_type) - set(header)):
        message = f"required column missing from the header (kind {row_type.catalog_kind}); add it"
        problems.append(CatalogProblem(table.label, table.header_row, column, None, message))
    return problems


def problem_from_pydantic(label: str, number: int, err: dict) -> CatalogProblem:
    """One pydantic error on one row as a file:row: column: message problem."""
    column = str(err["loc"][0]) if err["loc"] else err.get("ctx", {}).get("column")  # ctx: a whole-row check
    value = None if err["type"] == "missing" else err.get("input")
    if not err["loc"] and column is not None and isinstance(value, dict):
        value = value.get(column)
    message = error_text(err)
    return CatalogProblem(label, number, column, value, message)


def _check_references(catalog: Catalog) -> list[CatalogProblem]:
    """Names that point into other kinds must exist; GPU references are made canonical."""
    problems = _check_alias_clashes(catalog) + _resolve_port_modes(catalog)
    gpus = catalog.items("gpus")
    gpu_names = {n.lower(): g.name for g in gpus for n in _names(g)}
    nic_skus = {n.sku.lower() for n in catalog.items("nics")}
    for kind in ("servers", "cloud"):
        for key, row in list(catalog.rows[kind].items()):
            origin = catalog.origins[(kind, key)]
            canonical = gpu_names.get(row.gpu.lower())
            if canonical is None:
                message = unknown_name_message("GPU", row.gpu, [n for g in gpus for n in _names(g)], "gpus")
                problems.append(CatalogProblem(origin.file, origin.row, "gpu", row.gpu, message))
            elif canonical != row.gpu:
                catalog.rows[kind][key] = row.model_copy(update={"gpu": canonical})
            nic = getattr(row, "included_nic", None)
            if nic and nic.lower() not in nic_skus:
                message = unknown_name_message("NIC", nic, [n.sku for n in catalog.items("nics")], "nics")
                problems.append(CatalogProblem(origin.file, origin.row, "included_nic", nic, message))
            if kind == "servers" and bool(nic) != (row.included_nics > 0):
                message = "included_nic and included_nics go together: give both or neither"
                problems.append(CatalogProblem(origin.file, origin.row, "included_nics", row.included_nics, message))
    return problems


def _resolve_port_modes(catalog: Catalog) -> list[CatalogProblem]:
    """A NIC row that is another port mode of a card takes that card's price, power and part number (one
    price per part); the card must be a row of its own, not itself a mode."""
    problems = []
    nics = catalog.rows["nics"]
    for key, row in list(nics.items()):
        if not row.mode_of:
            continue
        card = nics.get((row.mode_of.lower(),))
        if card is None or card.mode_of:
            origin = catalog.origins[("nics", key)]
            cards = [n.sku for n in nics.values() if not n.mode_of]
            message = (
                unknown_name_message("NIC", row.mode_of, cards, "nics")
                if card is None
                else f"{card.sku} is itself a port mode of {card.mode_of}: name the card"
            )
            problems.append(CatalogProblem(origin.file, origin.row, "mode_of", row.mode_of, message))
            continue
        update = {"price_usd": card.price_usd, "power_w": card.power_w, "mode_of": card.sku}
        nics[key] = row.model_copy(update=update | {"part_number": row.part_number or card.part_number})
    return problems


def _check_server_nics(catalog: Catalog) -> list[CatalogProblem]:
    """A server's NIC configuration must be one it can be built with: its storage NIC exists, fixed NICs are
    included ones, its NIC counts fit its slots, and its own NIC cages hold whole NIC ports."""
    problems = []
    skus = {n.sku.lower(): n for n in catalog.items("nics")}
    for server in catalog.items("servers"):
        origin = catalog.origin(server)

        def add(column: str, value: object, message: str, origin=origin) -> None:
            problems.append(CatalogProblem(origin.file, origin.row, column, value, message))

        if server.storage_nic and server.storage_nic.lower() not in skus:
            add("storage_nic", server.storage_nic, unknown_name_message("NIC", server.storage_nic, list(skus), "nics"))
        if server.nics_fixed and not (server.included_nic and server.included_nics):
            add("nics_fixed", True, "fixed NICs are the included ones: give included_nic and included_nics")
        for count in server.nic_counts:
            if count > server.max_nics_per_host:
                add("nic_counts", count, f"more NICs than max_nics_per_host ({server.max_nics_per_host}) slots")
        nic = skus.get((server.included_nic or "").lower())
        if server.nic_cage and nic is not None and (server.included_nics * nic.ports) % (server.nic_cage_ports or 1):
            add(
                "nic_cage_ports",
                server.nic_cage_ports,
                f"{server.included_nics} x {nic.ports}-port NICs do not fill whole cages",
            )
    return problems


def _check_alias_clashes(catalog: Catalog) -> list[CatalogProblem]:
    problems = []
    for kind in ("gpus", "models"):
        owner: dict[str, str] = {}
        for row in catalog.items(kind):
            for name in _names(row):
                first = owner.setdefault(name.lower(), row.name)
                if first != row.name:
                    origin = catalog.origin(row)
                    message = f"name/alias also used by {first!r}; an alias must name one row only"
                    problems.append(CatalogProblem(origin.file, origin.row, "aliases", name, message))
    return problems
