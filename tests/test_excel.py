"""The quote workbook: sheets, live formulas, charts, injection safety, atomic writes, LibreOffice recalc."""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile

import openpyxl
import pytest
from support import CAL, DS2928, GPU, NICS, OPTICS, SERVER, SWITCHES, make_catalog, scenario

from planner.answers import buy as purchase
from planner.base.errors import CatalogError
from planner.catalog.load import load_catalog
from planner.report.excel import PlanContext, write_plan

INJECTION = '=HYPERLINK("http://x","y")'
SHEETS = ["Summary", "Quote", "Alternatives", "Sensitivity", "Assumptions"]


@pytest.fixture(scope="module")
def planned():
    """A plan over a tiny catalog whose NIC description is a formula, and its workbook context."""
    nics = [dict(NICS[0], name=INJECTION, vendor="+cmd|' /C calc'!A0"), NICS[1]]
    catalog = make_catalog(gpus=[GPU], servers=[SERVER], nics=nics, switches=SWITCHES, optics=OPTICS)
    sc = scenario()
    plan = purchase.run(catalog, sc, CAL)
    moves = purchase.sensitivity(catalog, sc, plan, CAL)
    context = PlanContext(sc.model_dump(), CAL, dict(catalog.files), moves.bandwidth_sweep, moves.cost_curve)
    return plan, context


@pytest.fixture
def workbook_path(planned, tmp_path):
    path = tmp_path / "plan.xlsx"
    write_plan(*planned, path)
    return path


def test_every_sheet_present_and_non_empty(workbook_path):
    wb = openpyxl.load_workbook(workbook_path)
    assert wb.sheetnames == SHEETS
    for name in SHEETS:
        assert wb[name].max_row > 3, name
        assert len(name) <= 31


def test_totals_are_live_formulas(workbook_path, planned):
    ws = openpyxl.load_workbook(workbook_path)["Quote"]
    cells = {ws.cell(r, 4).value: ws.cell(r, 7) for r in range(1, ws.max_row + 1) if ws.cell(r, 4).value}
    assert cells["Grand total"].data_type == "f" and cells["Grand total"].value.startswith("=")
    assert cells["Hardware subtotal"].value.startswith("=SUM(")
    lines = [r for r in range(5, ws.max_row + 1) if ws.cell(r, 3).value]
    assert lines and all(ws.cell(r, 7).value == f"=E{r}*F{r}" for r in lines)
    assert ws.freeze_panes and ws.auto_filter.ref
    summary = openpyxl.load_workbook(workbook_path)["Summary"]
    assert any(str(c.value).startswith("='Quote'!") for row in summary.iter_rows() for c in row)


def test_charts_exist(workbook_path):
    wb = openpyxl.load_workbook(workbook_path)
    assert len(wb["Sensitivity"]._charts) == 2


def test_catalog_text_never_becomes_a_formula(workbook_path):
    ws = openpyxl.load_workbook(workbook_path)["Quote"]
    texts = [c for row in ws.iter_rows() for c in row if isinstance(c.value, str) and "HYPERLINK" in c.value]
    assert texts and all(c.data_type == "s" and c.value == INJECTION for c in texts)
    vendor = [c for row in ws.iter_rows() for c in row if c.value == "+cmd|' /C calc'!A0"]
    assert vendor and vendor[0].data_type == "s"
    with zipfile.ZipFile(workbook_path) as z:
        sheets = "".join(z.read(n).decode() for n in z.namelist() if n.startswith("xl/worksheets/"))
    assert "<f>HYPERLINK" not in sheets and "<f>+cmd" not in sheets


def test_failed_write_leaves_existing_file_untouched(planned, tmp_path, monkeypatch):
    path = tmp_path / "plan.xlsx"
    path.write_bytes(b"previous quote")

    def broken_save(self, filename):  # a file name or the in-memory buffer planner builds the workbook in
        if isinstance(filename, str | os.PathLike):
            with open(filename, "wb") as handle:
                handle.write(b"half a workbook")
        else:
            filename.write(b"half a workbook")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(openpyxl.Workbook, "save", broken_save)
    with pytest.raises(Exception, match="nothing was changed"):
        write_plan(*planned, path)
    assert path.read_bytes() == b"previous quote"
    assert sorted(os.listdir(tmp_path)) == ["plan.xlsx"]


def test_xml_bomb_catalog_is_refused(tmp_path):
    book = openpyxl.Workbook()
    book.active.title = "gpus"
    book.active.append(["name", "vendor"])
    book.active.append(["lol", "x"])
    plain = tmp_path / "plain.xlsx"
    book.save(plain)
    bomb = tmp_path / "bomb.xlsx"
    laughs = (
        '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">'
        '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;">]>'
    )
    with zipfile.ZipFile(plain) as src, zipfile.ZipFile(bomb, "w") as dst:
        for item in src.namelist():
            data = src.read(item)
            if item == "xl/worksheets/sheet1.xml":
                body = data.split(b"?>", 1)[1] if data.startswith(b"<?xml") else data
                data = laughs.encode() + body.replace(b"<v>", b"<v>&lol3;", 1)
            dst.writestr(item, data)
    with pytest.raises(CatalogError, match=r"refused: its XML declares entities or a DTD \(EntitiesForbidden\)"):
        load_catalog([bomb])


def test_bandwidth_workbook(run, tmp_path):
    path = tmp_path / "bw.xlsx"
    result = run(
        "bandwidth",
        *DS2928,
        "--target-tflops",
        "40",
        "-o",
        path,
    )
    assert result.exit_code == 0, result.output
    ws = openpyxl.load_workbook(path)["Bandwidth"]
    assert len(ws._charts) == 1 and ws.max_row > 10


def test_plan_cli_writes_xlsx(run, tmp_path):
    from planner.base.resources import examples_dir

    path = tmp_path / "plan.xlsx"
    assert run("plan", examples_dir() / "bloom-176b-v100.yaml", "-q", "-o", path).exit_code == 0
    assert openpyxl.load_workbook(path).sheetnames == SHEETS


# ---------------------------------------------------------------- a real spreadsheet program recomputes it

SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")


@pytest.mark.libreoffice
@pytest.mark.skipif(
    not SOFFICE and not os.environ.get("CI"),
    reason="LibreOffice (soffice) not installed; .ci/run installs libreoffice-calc-nogui",
)
def test_libreoffice_recomputes_the_planners_totals(workbook_path, planned, tmp_path):
    from test_workbooks import strip_cached_values

    assert SOFFICE, "CI must have LibreOffice: .ci/run installs libreoffice-calc-nogui"
    blank = tmp_path / "blank" / "plan.xlsx"  # without the cached values, so LibreOffice must compute them
    blank.parent.mkdir()
    strip_cached_values(workbook_path, blank)
    out = tmp_path / "recalculated"
    subprocess.run(
        [
            SOFFICE,
            "--headless",
            "--norestore",
            f"-env:UserInstallation=file://{tmp_path}/lo-profile",
            "--convert-to",
            "xlsx",
            "--outdir",
            str(out),
            str(blank),
        ],
        check=True,
        capture_output=True,
        timeout=180,
    )
    wb = openpyxl.load_workbook(out / "plan.xlsx", data_only=True)
    plan = planned[0]
    quote = wb["Quote"]
    values = {quote.cell(r, 4).value: quote.cell(r, 7).value for r in range(1, quote.max_row + 1)}
    assert round(values["Grand total"], 2) == round(plan.cost.capex_usd, 2)
    assert round(values["Hardware subtotal"], 2) == round(plan.cost.capex_usd, 2)
    for section, amount in plan.cost.by_section.items():  # the Quote groups lines by BOM section
        assert round(values[f"Subtotal {section}"], 2) == round(amount, 2), section
    for line in plan.bom:
        row = next(
            r
            for r in range(1, quote.max_row + 1)
            if quote.cell(r, 3).value == line.sku and quote.cell(r, 5).value == line.quantity
        )
        assert round(quote.cell(row, 7).value, 2) == round(line.extended_usd, 2)
    texts = [c.value for row in quote.iter_rows() for c in row if isinstance(c.value, str) and "HYPERLINK" in c.value]
    assert texts == [INJECTION]  # still text after a real spreadsheet program opened and saved it
    summary = wb["Summary"]
    assert plan.cost.capex_usd in [summary.cell(r, 2).value for r in range(1, summary.max_row + 1)]


def test_unwritable_folder_is_a_clear_error(planned, tmp_path, monkeypatch):
    import tempfile

    from planner.base.errors import PlannerError

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with pytest.raises(PlannerError, match="cannot write .*Permission denied.*nothing was changed"):
        write_plan(*planned, tmp_path / "plan.xlsx")
