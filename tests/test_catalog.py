"""Catalog loading: shipped defaults, user overrides (CSV, folder, XLSX), and every kind of error."""

from __future__ import annotations

import csv
import json

import openpyxl
import pytest
from support import NIC_COLUMNS

from planner.base.errors import CatalogError, PlannerError
from planner.base.resources import catalogs_dir, examples_dir
from planner.catalog.load import load_catalog
from planner.catalog.rows import KINDS

GPU_HEADER = "name,aliases,vendor,peak_bf16_tflops,hbm_gib,hbm_gb_per_s,tdp_w,price_usd,source,date,confidence,notes\n"
GPU_ROW = "X1,x-one,Acme,500,96,4000,800,,Acme datasheet,2026-01,estimate,test row\n"


def problems_of(*paths, defaults=True) -> list[str]:
    with pytest.raises(CatalogError) as info:
        load_catalog(paths, defaults=defaults)
    return [str(p) for p in info.value.problems]


# ---------------------------------------------------------------- shipped defaults


def test_defaults_load_every_kind():
    catalog = load_catalog()
    for kind in KINDS:
        assert catalog.counts()[kind] > 0, kind


def test_every_shipped_row_has_source_date_and_confidence():
    for path in sorted(catalogs_dir().glob("*.csv")):
        with path.open(encoding="utf-8") as handle:
            lines = [line for line in handle if not line.startswith("#")]
        for number, row in enumerate(csv.DictReader(lines), start=2):
            assert row["source"].strip(), f"{path.name}:{number} has no source"
            assert row["date"].strip(), f"{path.name}:{number} has no date"
            assert row["confidence"] in ("solid", "medium", "low", "estimate"), f"{path.name}:{number}"


def test_estimates_say_how_they_were_derived():
    catalog = load_catalog()
    for kind in KINDS:
        for row in catalog.items(kind):
            if row.confidence == "estimate":
                assert row.notes, f"{kind} {row.key()} is an estimate without a derivation in notes"


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("V100", "V100-32GB"),
        ("v100-32gb", "V100-32GB"),
        ("V100-SXM3-32GB", "V100-32GB"),
        ("h100", "H100-SXM"),
        ("A100-80GB", "A100-80GB"),
        ("H200", "H200"),
        ("b200", "B200"),
        ("MI300X", "MI300X"),
    ],
)
def test_gpu_lookup_is_case_insensitive_and_accepts_aliases(name, canonical):
    assert load_catalog().gpu(name).name == canonical


@pytest.mark.parametrize(
    "model",
    [
        "GPT-3-175B",
        "BLOOM-176B",
        "Llama-2-7B",
        "Llama-2-13B",
        "Llama-2-70B",
        "Llama-3-8B",
        "Llama-3-70B",
        "Llama-3.1-405B",
    ],
)
def test_well_known_models_are_shipped(model):
    assert load_catalog().model(model).params > 1e9


def test_unknown_gpu_suggests_close_names():
    with pytest.raises(PlannerError, match=r"unknown GPU 'H1000'.*did you mean .*H100"):
        load_catalog().gpu("H1000")


def test_servers_reference_canonical_gpus():
    catalog = load_catalog()
    names = {g.name for g in catalog.items("gpus")}
    assert all(s.gpu in names for s in catalog.items("servers"))
    assert any(s.gpus_per_node == 16 for s in catalog.items("servers")), "a 16-GPU DGX-2 class server"


# ---------------------------------------------------------------- user files on top


def test_user_row_with_same_key_replaces_default(write):
    default = load_catalog().gpu("H100-SXM")
    row = ",".join(["h100-sxm", "", "NVIDIA", "989", "80", "3350", "700", "25000", "my quote", "2026-11", "solid", ""])
    path = write("gpus.csv", GPU_HEADER + row + "\n")
    catalog = load_catalog([path])
    assert catalog.gpu("H100-SXM").price_usd == 25000 != default.price_usd
    assert catalog.origin(catalog.gpu("H100-SXM")).file == str(path)
    assert catalog.counts()["gpus"] == load_catalog().counts()["gpus"]


def test_user_rows_are_added_and_units_parsed(write):
    row = 'X2,,Acme,2.5PFLOPs,192GiB,8TB/s,1.2kW,"$40,000",Acme quote,2026-10-01,medium,\n'
    catalog = load_catalog([write("gpus.csv", GPU_HEADER + GPU_ROW + row)])
    x2 = catalog.gpu("x2")
    assert (x2.peak_bf16_tflops, x2.hbm_gib, x2.hbm_gb_per_s, x2.tdp_w, x2.price_usd) == (2500, 192, 8000, 1200, 40000)
    assert catalog.gpu("X-ONE").name == "X1"


def test_later_files_win_and_folders_load(write):
    first = write("a/gpus.csv", GPU_HEADER + GPU_ROW)
    second = write("b/gpus.csv", GPU_HEADER + GPU_ROW.replace(",500,", ",600,"))
    catalog = load_catalog([first.parent, second])
    assert catalog.gpu("X1").peak_bf16_tflops == 600


def test_kind_from_marker_comment_or_columns(write):
    marked = write("quote-1.csv", "# planner catalog: gpus, schema 1\n" + GPU_HEADER + GPU_ROW)
    assert load_catalog([marked]).gpu("X1")
    inferred = write("quote-2.csv", GPU_HEADER + GPU_ROW.replace("X1,x-one", "X3,"))
    assert load_catalog([inferred]).gpu("X3")


def test_xlsx_one_sheet_per_kind(tmp_path):
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "GPUs"
    sheet.append(GPU_HEADER.strip().split(","))
    sheet.append(["X9", None, "Acme", 500, 96, 4000, "800W", 31000, "Acme quote", "2026-11-02", "solid", None])
    nics = book.create_sheet("nics")
    nics.append(NIC_COLUMNS)
    nics.append(["MY-NIC", "My NIC", "Acme", "400Gbps", 1, "both", "$1,500", 20, "quote", "2026-11", "solid"])
    path = tmp_path / "quote.xlsx"
    book.save(path)
    catalog = load_catalog([path])
    assert catalog.gpu("x9").tdp_w == 800
    assert catalog.nic("my-nic").price_usd == 1500
    assert catalog.origin(catalog.gpu("x9")).file == f"{path}[GPUs]"
    assert catalog.origin(catalog.gpu("x9")).row == 2


def test_xlsx_errors_name_sheet_row_and_column(tmp_path):
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "gpus"
    sheet.append(GPU_HEADER.strip().split(","))
    sheet.append(["X9", None, "Acme", 500, 96, 4000, 800, -5, "q", "2026", "solid", None])
    path = tmp_path / "quote.xlsx"
    book.save(path)
    assert problems_of(path) == [f"{path}[gpus]:2: column 'price_usd' = '-5': must be at least 0"]


def test_broken_xlsx_is_reported_not_raised(write):
    path = write("quote.xlsx", "this is not a zip file")
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}: not a readable .xlsx workbook")


# ---------------------------------------------------------------- every kind of error, with file:row:column


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        (GPU_ROW.replace(",500,", ",fast,"), "column 'peak_bf16_tflops' = 'fast': 'fast' is not a quantity"),
        (GPU_ROW.replace(",800,", ",-800,"), "column 'tdp_w' = '-800': must be at least 0"),
        (GPU_ROW.replace(",96,", ",0,"), "column 'hbm_gib' = '0': must be greater than 0"),
        (GPU_ROW.replace("2026-01", "Jan 2026"), "column 'date' = 'Jan 2026': write the date as YYYY"),
        (GPU_ROW.replace("estimate", "guess"), "column 'confidence' = 'guess': must be one of"),
        (GPU_ROW.replace("Acme datasheet", ""), "column 'source': is empty; this column is required"),
        (GPU_ROW.replace(",96,", ",80 apples,"), "unknown unit 'apples'"),
    ],
)
def test_bad_cells_name_file_row_column_and_fix(write, row, expected):
    path = write("gpus.csv", GPU_HEADER + row)
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:2: ")
    assert expected in problem


def test_every_problem_is_reported_not_just_the_first(write):
    rows = GPU_ROW.replace(",500,", ",fast,") + GPU_ROW.replace("X1,x-one", "X2,").replace(",800,", ",-1,")
    path = write("gpus.csv", GPU_HEADER + rows)
    found = problems_of(path)
    assert [p.split(": ")[0] for p in found] == [f"{path}:2", f"{path}:3"]


def test_unknown_and_missing_columns(write):
    header = GPU_HEADER.replace("tdp_w", "tdp_watts")
    found = problems_of(write("gpus.csv", header + GPU_ROW))
    assert any("column 'tdp_watts': unknown column; did you mean 'tdp_w'?" in p for p in found)
    assert any("column 'tdp_w': required column missing" in p for p in found)


def test_duplicate_key_in_one_file(write):
    path = write("gpus.csv", GPU_HEADER + GPU_ROW + GPU_ROW.replace("X1", "x1").replace("x-one", ""))
    (problem,) = problems_of(path)
    assert problem == f"{path}:3: column 'name' = 'x1': duplicate name (also on row 2); keep one row per name"


def test_comment_lines_keep_row_numbers_true(write):
    path = write(
        "gpus.csv",
        "# planner catalog: gpus, schema 1\n" + GPU_HEADER + "# a comment\n" + GPU_ROW.replace(",500,", ",x,"),
    )
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:4: ")


def test_server_with_unknown_gpu_suggests_names(write):
    header = (
        "name,vendor,gpu,gpus_per_node,price_usd,power_w,pcie_gen,pcie_lanes,pcie_lanes_per_gpu,"
        "intra_node_gb_per_s,max_nics_per_node,included_nic,included_nics,dram_gib,source,date,confidence,notes\n"
    )
    row = "My HGX,Acme,H1OO,8,250000,10200,5,128,16,450,8,CX9-NOPE,8,,quote,2026,solid,\n"
    path = write("servers.csv", header + row)
    found = problems_of(path)
    assert any(p.startswith(f"{path}:2: column 'gpu' = 'H1OO': unknown GPU 'H1OO': did you mean") for p in found)
    assert any(p.startswith(f"{path}:2: column 'included_nic' = 'CX9-NOPE': unknown NIC") for p in found)


def test_included_nic_needs_a_count(write):
    header = (
        "name,vendor,gpu,gpus_per_node,price_usd,power_w,pcie_gen,pcie_lanes,pcie_lanes_per_gpu,"
        "intra_node_gb_per_s,max_nics_per_node,included_nics,source,date,confidence\n"
    )
    path = write("servers.csv", header + "My HGX,Acme,H100,8,250000,10200,5,128,16,450,8,8,quote,2026,solid\n")
    (problem,) = problems_of(path)
    assert "included_nic and included_nics go together" in problem


def test_alias_clash_between_rows(write):
    path = write("gpus.csv", GPU_HEADER + GPU_ROW.replace("x-one", "H100"))
    (problem,) = problems_of(path)
    assert "column 'aliases' = 'H100': name/alias also used by 'H100-SXM'" in problem


@pytest.mark.parametrize(
    ("name", "text", "fragment"),
    [
        ("quote.csv", "a,b,c\n1,2,3\n", "cannot tell which catalog kind this is"),
        ("gpus.csv", "# planner catalog: gpus, schema 9\n" + GPU_HEADER + GPU_ROW, "written for catalog schema 9"),
        ("gpus.csv", "", "empty: no header row found"),
        ("gpus.txt", "x", "unsupported file type '.txt'"),
        ("gpus.csv", GPU_HEADER + GPU_ROW.strip() + ",extra\n", "more cells than header columns"),
    ],
)
def test_file_level_problems(write, name, text, fragment):
    (problem,) = problems_of(write(name, text))
    assert fragment in problem


def test_missing_file_and_non_utf8(tmp_path):
    assert "file not found" in problems_of(tmp_path / "nope.csv")[0]
    bad = tmp_path / "gpus.csv"
    bad.write_bytes(GPU_HEADER.encode() + b"X\xff\xfe,1\n")
    assert "not UTF-8 text" in problems_of(bad)[0]


def test_standalone_validation_without_defaults(write):
    path = write("gpus.csv", GPU_HEADER + GPU_ROW)
    catalog = load_catalog([path], defaults=False)
    assert catalog.counts()["gpus"] == 1 and catalog.counts()["servers"] == 0


def test_frame_has_origins():
    frame = load_catalog().frame("switches")
    assert {"origin_file", "origin_row", "price_usd", "fabric"} <= set(frame.columns)
    assert frame["origin_row"].min() >= 2


def test_unknown_name_suggests_the_names_that_contain_it():
    """A catalog name typed short ("DGX A100") suggests the full names holding it, which a spelling
    distance misses on long names."""
    from planner.catalog.load import unknown_name_message

    known = ["DGX A100 320GB (list 2020-05)", "DGX A100 640GB (list 2021-06)", "DGX H100 (reseller 2025-03)"]
    message = unknown_name_message("server", "DGX A100", known, "servers")
    assert "did you mean DGX A100 320GB (list 2020-05), DGX A100 640GB (list 2021-06)?" in message
    assert "DGX H100" not in message


# ---------------------------------------------------------------- exporting the shipped catalogs for editing


def test_export_copies_the_shipped_catalogs_and_plans_cite_the_copy(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("catalog", "export", "mine")
    assert result.exit_code == 0, result.output
    shipped = sorted(p.name for p in catalogs_dir().glob("*.csv"))
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == shipped
    assert (tmp_path / "mine" / "servers.csv").read_bytes() == (catalogs_dir() / "servers.csv").read_bytes()
    plan = run("plan", str(examples_dir() / "llama-70b-h100.yaml"), "--catalog", "mine", "--json", "-q")
    assert plan.exit_code == 0, plan.output
    bom = [line for line in json.loads(plan.stdout)["bom"] if line["category"] != "labour"]  # an assumption
    sources = {line["source"].rsplit(":", 1)[0] for line in bom}
    assert sources and all(s.startswith("mine/") for s in sources), sources  # the file that was read, not a label


def test_export_never_overwrites_unless_forced(run, tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "servers.csv").write_text("my edits\n", encoding="utf-8")
    result = run("catalog", "export", str(folder))
    assert result.exit_code == 1 and "already holds servers.csv: nothing was copied" in result.output
    assert (folder / "servers.csv").read_text(encoding="utf-8") == "my edits\n"
    assert run("catalog", "export", str(folder), "--force").exit_code == 0
    assert (folder / "servers.csv").read_bytes() == (catalogs_dir() / "servers.csv").read_bytes()


def test_a_shipped_catalog_outside_the_working_folder_is_cited_by_its_real_path(tmp_path, monkeypatch):
    from planner.base.resources import display_name

    monkeypatch.chdir(tmp_path)
    shipped = catalogs_dir() / "servers.csv"
    assert display_name(shipped) == str(shipped.resolve())
