"""The one writer table: for each kind of result a command writes, the file formats it can be written as.

A command asks `format_for(kind, option, path)` before any work (a wrong suffix fails in a second, not after
the solve, and the message lists what the table holds) and then writes with `Format.write(report, tmp)`
through planner.base.fileio.Outputs (atomic, all files or none). A new output format is one function and
one entry in WRITERS; a new result kind is one entry of its own.

The heavy renderers (openpyxl for workbooks) are imported by the writer that needs them, when it runs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.base.errors import UsageError
from planner.report.jsonout import dumps


def _nothing(report: Any) -> None:
    return None


@dataclass(frozen=True)
class Format:
    """A file format of one kind of result: what it is called in messages, its writer, and the work it needs
    done before any output file is opened (so the temporary files exist only while bytes are written)."""

    what: str
    write: Callable[[Any, Path], None]  # (the command's report, the temporary path to write)
    prepare: Callable[[Any], None] = _nothing


@dataclass(frozen=True)
class PlanReport:
    """What `planner plan` writes: the plan, its buy-vs-rent comparison (when asked for), and the quote
    workbook's context, built only when a workbook is written (its sweeps re-plan the scenario)."""

    plan: Any  # planner.results.Plan
    comparison: Any = None  # planner.results.BuyVsRent
    compared: bool = False
    build_context: Callable[[], Any] | None = None  # -> planner.report.excel.PlanContext

    @functools.cached_property
    def workbook_context(self) -> Any:
        return self.build_context()

    def document(self) -> dict:
        cloud = {"cloud_comparison": self.comparison.model_dump() if self.comparison else None}
        return {**self.plan.model_dump(), **(cloud if self.compared else {})}


@dataclass(frozen=True)
class BandwidthReport:
    """What `planner bandwidth` writes: the sweep, the bandwidth each fabric needs, a heading, the fit."""

    table: Any  # pandas.DataFrame
    needed: list[dict]
    heading: str
    calibration: Any  # planner.model.calibration.Calibration


@dataclass(frozen=True)
class ScenarioReport:
    """What `--save-scenario` writes: the scenario mapping a run implied (its file with every option applied)."""

    data: dict


def _scenario_yaml(report: ScenarioReport) -> str:
    import yaml

    head = "# the scenario of one `planner plan` run (its file and options together); plan it with planner plan FILE\n"
    return head + yaml.safe_dump(report.data, sort_keys=False, allow_unicode=False, width=100)


def document(report: Any) -> str:
    """The JSON document of a report (what --json prints and -o FILE.json writes)."""
    body = report.document() if isinstance(report, PlanReport) else report.model_dump()
    return dumps(body)


def _text(render: Callable[[Any], str]) -> Callable[[Any, Path], None]:
    def write(report: Any, tmp: Path) -> None:
        text = render(report)
        tmp.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")

    return write


def _plan_workbook(report: PlanReport, tmp: Path) -> None:
    from planner.report.excel import write_plan

    write_plan(report.plan, report.workbook_context, tmp)


def _bom(report: PlanReport) -> str:
    from planner.report.plan_text import bom_csv

    return bom_csv(report.plan)


def _cloud_workbook(result, tmp: Path) -> None:
    from planner.report.workbooks import write_cloud

    write_cloud(result, tmp)


def _inference_workbook(result, tmp: Path) -> None:
    from planner.report.workbooks import write_inference

    write_inference(result, tmp)


def _serving_workbook(result, tmp: Path) -> None:
    from planner.report.serving_xlsx import write_serving

    write_serving(result, tmp)


def _fleet_workbook(result, tmp: Path) -> None:
    from planner.report.fleet_xlsx import write_fleet

    write_fleet(result, tmp)


def _sweep_workbook(result, tmp: Path) -> None:
    from planner.report.sweep_xlsx import write_sweep

    write_sweep(result, tmp)


def _bandwidth_workbook(report: BandwidthReport, tmp: Path) -> None:
    from planner.report.workbooks import write_bandwidth

    write_bandwidth(report.table, report.needed, report.heading, report.calibration, tmp)


JSON = Format("the whole plan", _text(document))
BOM = Format("bill of materials", _text(_bom))
WRITERS: dict[str, dict[str, Format]] = {
    "plan": {
        ".xlsx": Format("quote workbook", _plan_workbook, prepare=lambda report: report.workbook_context),
        ".json": JSON,
        ".csv": BOM,
    },
    "bill of materials": {".csv": BOM},
    "scenario": {
        ".yaml": Format("scenario file", _text(_scenario_yaml)),
        ".yml": Format("scenario file", _text(_scenario_yaml)),
    },
    "cloud": {".xlsx": Format("workbook", _cloud_workbook), ".json": JSON},
    "inference": {".xlsx": Format("workbook", _inference_workbook), ".json": JSON},
    "serving": {".xlsx": Format("workbook with a chart", _serving_workbook), ".json": JSON},
    "fleet": {".xlsx": Format("workbook with charts", _fleet_workbook), ".json": JSON},
    "bandwidth": {".xlsx": Format("workbook", _bandwidth_workbook)},
    "sweep": {
        ".xlsx": Format("workbook with charts", _sweep_workbook),
        ".json": Format("the whole sweep", _text(document)),
    },
}


def format_for(kind: str, option: str, path: str | Path | None) -> Format | None:
    """The format `path` is written in (None: no path given), or a UsageError that names the formats."""
    if path is None:
        return None
    formats = WRITERS[kind]
    found = formats.get(Path(path).suffix.lower())
    if found is None:
        listed = [f"{suffix} ({f.what})" for suffix, f in formats.items()]
        choices = listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + " or " + listed[-1]
        raise UsageError(f"{option} {path}: write {choices}")
    return found
