"""pytest fixtures every test module may use: the CLI run in-process, and files written to a fresh folder. The
shared helpers (catalogs, scenarios) are in support.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli import main


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
