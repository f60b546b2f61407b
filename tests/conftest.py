from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli import main

# DeepSpeed issue #2928: 176B on 384 V100 in 16-GPU nodes at 2048 tokens per GPU per micro-step
DS2928 = ["--params", "176B", "--gpu", "V100", "--gpus", "384", "--gpus-per-node", "16", "--tokens-per-gpu", "2048"]


@pytest.fixture
def run():
    """Run the CLI in-process; returns the click Result (exit_code, stdout, stderr)."""
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(main, [str(a) for a in args], catch_exceptions=False)

    return invoke


@pytest.fixture
def write(tmp_path: Path):
    """write("name.csv", text) -> path, in a fresh temporary folder."""

    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    return _write


def make_catalog(**rows_by_kind):
    """An in-memory catalog from row dicts per kind (source/date/confidence filled in)."""
    from planner.catalog import Catalog, Origin
    from planner.models import ROW_TYPES

    catalog = Catalog()
    for kind, rows in rows_by_kind.items():
        for i, values in enumerate(rows, start=2):
            row = ROW_TYPES[kind].model_validate({"source": "test", "date": "2026", "confidence": "solid", **values})
            catalog.rows[kind][row.key()] = row
            catalog.origins[(kind, row.key())] = Origin(f"{kind}.csv", i)
    return catalog
