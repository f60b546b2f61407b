"""`planner catalog list | validate | schema | export`."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from planner.catalog.kinds import KINDS, SCHEMA_VERSION
from planner.cli.base import catalog_option, echo, main


@main.group()
def catalog() -> None:
    """Inspect and validate price catalogs.

    \b
    Example:
      planner catalog validate my-quote.xlsx
    """


@catalog.command("list")
@click.argument("kind", required=False, type=click.Choice(KINDS, case_sensitive=False))
@click.option("--all", "all_columns", is_flag=True, help="Show every column, not just the main ones.")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
@catalog_option
def catalog_list(kind: str | None, all_columns: bool, fmt: str, catalog_paths: Sequence[str]) -> None:
    """List catalog rows of KIND, or a summary of every kind.

    \b
    Examples:
      planner catalog list
      planner catalog list switches --all
      planner catalog list gpus --catalog my-gpus.csv --format csv
    """
    from planner.catalog.load import load_catalog
    from planner.catalog.rows import ROW_TYPES
    from planner.report.terminal import format_table

    loaded = load_catalog(catalog_paths)
    if kind is None:
        _print_summary(loaded)
        return
    kind = kind.lower()
    frame = loaded.frame(kind)
    if not all_columns:
        frame = frame[list(ROW_TYPES[kind].display) + ["origin_file", "origin_row"]]
    if fmt == "csv":
        from planner.report.csvtext import csv_frame

        frame = csv_frame(frame)  # catalog text is never a formula
        frame.to_csv(sys.stdout, index=False)
    elif fmt == "json":
        echo(frame.to_json(orient="records", indent=2))
    else:
        records = frame.drop(columns=["origin_file", "origin_row"]).to_dict("records")
        echo(format_table(records, [c for c in frame.columns if not c.startswith("origin_")]))


def _print_summary(loaded) -> None:
    from planner.report.terminal import format_table

    records = []
    for kind in KINDS:
        rows = loaded.items(kind)
        files = sorted({loaded.origin(r).file for r in rows})
        records.append({"kind": kind, "rows": len(rows), "from": ", ".join(files)})
    echo(format_table(records, ["kind", "rows", "from"], max_width=100))


@catalog.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option(
    "--no-defaults",
    is_flag=True,
    help="Validate the files alone, without the shipped catalogs "
    "(references such as a server's GPU must then resolve within them).",
)
def catalog_validate(paths: Sequence[str], no_defaults: bool) -> None:
    """Check catalog files (CSV, folder, or .xlsx); report every problem, not just the first.

    Exit 0 with a one-line summary when valid, 1 with one line per problem when not.

    \b
    Examples:
      planner catalog validate catalogs/
      planner catalog validate vendor-quote.xlsx extra-nics.csv
    """
    from planner.catalog.load import load_catalog

    loaded = load_catalog(paths, defaults=not no_defaults)
    mine = {Path(f).resolve() for f in loaded.files if any(_under(f, p) for p in paths)}
    # resolve each origin file once, not once per row (100k rows took 10 s)
    given = {f: any(_under(f, p) for p in paths) for f in {o.file for o in loaded.origins.values()}}
    counts = {}
    for kind in KINDS:
        n = sum(1 for r in loaded.items(kind) if given[loaded.origin(r).file])
        if n:
            counts[kind] = n
    _refuse_empty(loaded, paths, sum(counts.values()))
    detail = ", ".join(f"{k} {n}" for k, n in counts.items())
    echo(f"OK: {len(mine)} file(s), {sum(counts.values())} rows valid ({detail})")
    for label, state in loaded.hidden_sheets.items():
        if any(_under(label, p) for p in paths):
            echo(
                f"not read: {label} is a {state} sheet; planner reads only the sheets a person sees (a hidden "
                "row's price would decide plans unseen): unhide it to use its rows"
            )


def _refuse_empty(loaded, paths: Sequence[str], n_rows: int) -> None:
    """A table with a header and no rows, or files that give no row at all, are a problem here: validating
    nothing is not a pass (the other commands use such a file as adding nothing)."""
    from planner.base.errors import CatalogError, CatalogProblem

    empty = [label for label in loaded.empty_tables if any(_under(label, p) for p in paths)]
    problems = [CatalogProblem(t, None, None, None, "a header and no rows; add rows, or leave it out") for t in empty]
    if not problems and not n_rows:
        hidden = " (its sheets are hidden: unhide them)" if loaded.hidden_sheets else ""
        problems = [CatalogProblem(", ".join(paths), None, None, None, f"no catalog rows{hidden}")]
    if problems:
        raise CatalogError(problems)


def _under(file: str, path: str) -> bool:
    file_path, root = Path(file.split("[", 1)[0]).resolve(), Path(path).resolve()
    return file_path == root or root in file_path.parents


@catalog.command("export")
@click.argument("folder", type=click.Path(file_okay=False))
@click.option("--force", is_flag=True, help="Replace catalog files of the same name already in FOLDER.")
def catalog_export(folder: str, force: bool) -> None:
    """Copy the shipped catalogs into FOLDER (created if missing) to edit them.

    Then plan with your copy: rows whose key (name, sku, provider+instance+region) matches a shipped row
    replace it and new rows are added, and every bill-of-materials line cites the file and row it was read
    from.

    \b
    Example:
      planner catalog export my-catalogs
      planner plan examples/llama-70b-h100.yaml --catalog my-catalogs
    """
    from planner.base.errors import PlannerError
    from planner.base.fileio import Outputs
    from planner.base.resources import catalogs_dir

    target, shipped = Path(folder), sorted(catalogs_dir().glob("*.csv"))
    if target.exists() and not target.is_dir():
        raise PlannerError(f"{folder}: not a folder; give a folder to copy the catalogs into")
    clash = [p.name for p in shipped if (target / p.name).exists()]
    if clash and not force:
        raise PlannerError(
            f"{folder} already holds {', '.join(clash)}: nothing was copied; pick an empty folder or add --force"
        )
    target.mkdir(parents=True, exist_ok=True)
    outputs = Outputs([("shipped catalogs", catalogs_dir())])
    for path in shipped:
        data = path.read_bytes()
        outputs.add("", target / path.name, lambda tmp, data=data: tmp.write_bytes(data))
    outputs.commit()
    echo(f"copied {len(shipped)} catalog files to {target}/ (schema {SCHEMA_VERSION}); edit them and pass "
               f"--catalog {target}")  # fmt: skip


@catalog.command("schema")
@click.argument("kind", type=click.Choice(KINDS, case_sensitive=False))
def catalog_schema(kind: str) -> None:
    """Print the JSON schema of one catalog row of KIND (for editors and your own checks).

    \b
    Example:
      planner catalog schema nics > nics.schema.json
    """
    from planner.catalog.rows import ROW_TYPES

    row_type = ROW_TYPES[kind.lower()]
    schema = row_type.model_json_schema()
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"planner catalog row: {kind.lower()} (schema {SCHEMA_VERSION})",
        **{k: v for k, v in schema.items() if k != "title"},
    }
    echo(json.dumps(schema, indent=2))
