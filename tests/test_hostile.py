"""Hostile and huge input (issue #14): every class ends fast with exit 1 or 2, one short message naming the
file and field, no traceback, and every file that existed before (inputs, outputs, devices) untouched."""

from __future__ import annotations

import csv
import io
import json
import os
import stat
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import openpyxl
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import NIC_COLUMNS, NIC_HEADER, refused

from planner.base import limits as L
from planner.base import safeyaml
from planner.base.errors import CatalogError, PlannerError, ScenarioError
from planner.base.fileio import Outputs, WriteError
from planner.base.resources import catalogs_dir, data_dir, examples_dir
from planner.base.units import parse_quantity
from planner.catalog.load import load_catalog
from planner.inputs.scenario import load_scenario

# A scenario that validates; the failing variants below never reach the solver, so they run in ~0.1 s.
SCENARIO = """name: hostile
workload:
  params: 7B
  seq_len: 2048
requirement:
  gpus: 64
target_tflops: 100
constraints:
  gpus: [H100]
"""
MEASUREMENTS = (
    "gpu,gpus,gpus_per_node,node_gbps,fabric,params,tokens_per_gpu,measured_tflops\n"
    "V100,384,16,100,ib,176B,2048,20\nV100,384,16,400,ib,176B,2048,35\n"
)
PREDICT = ["predict", "--params", "7B", "--gpu", "H100", "--gpus", "8", "--gpus-per-node", "8"]
PREDICT += ["--node-gbps", "400", "--tokens-per-gpu", "2048"]


def nic_row(sku: str, name: str = "NIC", ports: str = "1") -> str:
    return f"{sku},{name},Acme,400,{ports},both,1000,20,test,2026,solid\n"


def alias_bomb(levels: int, width: int = 9) -> str:
    lines = ["a0: &a0 [" + ",".join(["x"] * width) + "]"]
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def snapshot(*paths: Path) -> dict[str, tuple[int, bytes | None]]:
    """File type and content of each path, to show that nothing was touched."""
    out = {}
    for path in paths:
        st_ = os.lstat(path)
        content = path.read_bytes() if stat.S_ISREG(st_.st_mode) else None
        out[str(path)] = (stat.S_IFMT(st_.st_mode), content)
    return out


# ---------------------------------------------------------------- YAML: bombs, size, depth, duplicates


@pytest.mark.parametrize("levels", [6, 7, 9])
def test_alias_bomb_is_refused_not_expanded(run, write, levels):
    path = write("bomb.yaml", SCENARIO + alias_bomb(levels))
    start = time.monotonic()
    message = refused(run("plan", path, "-q"), 1, str(path), f"more than {L.MAX_DOCUMENT_NODES:,} values")
    assert time.monotonic() - start < 5
    assert message.count("\n") == 1


def test_alias_bomb_in_cloud_and_calibration(run, write):
    bomb = write("bomb.yaml", SCENARIO + alias_bomb(9))
    refused(run("cloud", bomb), 1, str(bomb), "values")
    calibration = write("cal.yaml", "fit:\n" + "".join("  " + line + "\n" for line in alias_bomb(9).splitlines()))
    refused(run("plan", write("s.yaml", SCENARIO), "-q", "--calibration", calibration), 1, str(calibration))


def test_million_element_list_and_20mb_of_comments_are_refused_by_size(run, write):
    biglist = write("list.yaml", SCENARIO + "junk: [" + ",".join(["1"] * 1_000_000) + "]\n")
    refused(run("plan", biglist, "-q"), 1, str(biglist), "larger than 1 MiB")
    comments = write("comments.yaml", SCENARIO + ("# " + "x" * 98 + "\n") * 200_000)
    refused(run("plan", comments, "-q"), 1, str(comments), "larger than 1 MiB")


def test_long_list_within_the_size_limit_stops_at_the_value_count(run, write):
    path = write("list.yaml", SCENARIO + "junk: [" + ",".join(["1"] * 100_000) + "]\n")
    refused(run("plan", path, "-q"), 1, str(path), "values")


@pytest.mark.parametrize("depth", [3_000, 5_000])
def test_deeply_nested_yaml(run, write, depth):
    flow = write("flow.yaml", SCENARIO + "junk: " + "[" * depth + "]" * depth + "\n")
    refused(run("plan", flow, "-q"), 1, str(flow), "nest")
    mapping = write("map.yaml", SCENARIO + "junk: " + "{a: " * depth + "1" + "}" * depth + "\n")
    refused(run("plan", mapping, "-q"), 1, str(mapping), "nest")


def test_deep_block_mapping_stops_at_the_depth_limit(write):
    text = SCENARIO + "junk:\n" + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(200)) + " " * 201 + "v\n"
    with pytest.raises(ScenarioError, match=f"nested more than {L.MAX_NESTING_DEPTH} levels"):
        load_scenario(write("deep.yaml", text))


def test_deep_calibration_json_and_yaml(run, write):
    scenario = write("s.yaml", SCENARIO)
    for name, text in (
        ("cal.json", "[" * 100_000 + "]" * 100_000),
        ("cal.yaml", "fit: " + "[" * 3_000 + "]" * 3_000 + "\n"),
        ("cal2.json", '{"fit": ' + '{"a": ' * 5_000 + "1" + "}" * 5_001),
    ):
        path = write(name, text)
        refused(run("plan", scenario, "-q", "--calibration", path), 1, str(path), "nest")


def test_duplicate_yaml_key_names_file_line_and_key(run, write):
    path = write("dup.yaml", SCENARIO + "target_tflops: 200\n")
    refused(run("plan", path, "-q"), 1, f"{path}: line 10", "'target_tflops' appears twice (first on line 7)")
    nested = write("dup2.yaml", SCENARIO + "  max_nodes: 8\n  max_nodes: 16\n")
    refused(run("plan", nested, "-q"), 1, "line 11", "'max_nodes' appears twice (first on line 10)")


def test_merge_keys_may_override(write):
    text = SCENARIO.replace("constraints:\n  gpus: [H100]\n", "base: &b {gpus: [H100], max_nodes: 8}\n")
    text = text.replace("name: hostile\n", "")
    data = safeyaml.load_yaml(text + "c:\n  <<: *b\n  max_nodes: 16\n")
    assert data["c"] == {"gpus": ["H100"], "max_nodes": 16}


@pytest.mark.parametrize("loader", [safeyaml._PyLoader, safeyaml._Loader], ids=["python", "default"])
@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (alias_bomb(9), "values"),
        ("a: &a [1, *a]", "contains it"),
        ("a: " + "[" * 40 + "]" * 40, "nest"),
        ("a: 1\nb: 2\na: 3\n", "'a' appears twice"),
        ("x: !!python/object:os.system {}", "constructor"),
    ],
)
def test_both_yaml_parsers_refuse_alike(loader, text, fragment):
    with pytest.raises(safeyaml.YamlProblem, match=fragment):
        safeyaml.load_yaml(text, loader)


def test_deep_set_key_and_value(run, write):
    scenario = write("s.yaml", SCENARIO)
    refused(run("plan", scenario, "-q", "--set", ".".join(["a"] * 10_000) + "=1"), 2, "dotted parts")
    refused(run("plan", scenario, "-q", "--set", "name=" + "[" * 3_000 + "]" * 3_000), 2, "--set", "nest")
    bomb = "{" + alias_bomb(9).strip().replace("\n", ", ") + "}"
    refused(run("plan", scenario, "-q", "--set", "name=" + bomb), 2, "--set", "values")


# ---------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("replace", "fragments"),
    [
        ("gpus: " + "9" * 400, ["requirement.gpus", "too long for a quantity"]),
        ("gpus: " + "9" * 100_000, ["requirement.gpus", "(100,000 characters)"]),
        ("gpus: '" + "9" * 400 + "'", ["requirement.gpus", "too long"]),
        ("gpus: 1e30", ["requirement.gpus", f"must be at most {L.MAX_GPUS:,}"]),
        ("gpus: 10000000000000000000000000000000", ["requirement.gpus", f"at most {L.MAX_GPUS:,}"]),
    ],
)
def test_huge_numbers_name_the_field_and_range(run, write, replace, fragments):
    path = write("s.yaml", SCENARIO.replace("gpus: 64", replace))
    message = refused(run("plan", path, "-q"), 1, str(path), *fragments)
    assert "99999999999" * 10 not in message  # the value is cut, not printed whole


@pytest.mark.parametrize(
    ("extra", "fragments"),
    [
        ("constraints:\n  max_nodes: 1e19\n", ["constraints.max_nodes", f"at most {L.MAX_NODES:,}"]),
        ("objective:\n  kind: tco\n  years: .inf\n", ["objective.years", "finite"]),
        ("objective:\n  years: 1000\n", ["objective.years", "at most 50"]),
        ("objective:\n  kind: tco\n  usd_per_kwh: .inf\n", ["objective.usd_per_kwh", "finite"]),
        ("objective:\n  pue: .nan\n", ["objective.pue", "finite"]),
        ("cloud:\n  max_instances: 100000\n", ["cloud.max_instances", f"at most {L.MAX_INSTANCES:,}"]),
        ("cloud:\n  max_instances: 1e9\n", ["cloud.max_instances", "at most"]),
        ("cloud:\n  quota: {p5.48xlarge: 1e12}\n", ["cloud.quota.p5.48xlarge", "at most 10,000"]),
        ("cabling:\n  switch_reach_m: .inf\n", ["cabling.switch_reach_m", "finite"]),
        ("cabling:\n  node_leaf_reach_m: 1.0e9\n", ["cabling.node_leaf_reach_m", "at most 100,000"]),
        ("confidence: .nan\n", ["confidence", "finite"]),
        ("confidence: 1\n", ["confidence", "less than 1"]),
        ("layout:\n  rack_kw: .inf\n", ["layout.rack_kw", "finite"]),
        ("layout:\n  racks_per_row: 1000000000\n", ["layout.racks_per_row", f"at most {L.MAX_RACKS_PER_ROW}"]),
        ("layout:\n  rack_units: 48\n  reserved_units: 48\n", ["layout.reserved_units (48) leaves no room"]),
        ("layout:\n  slack_m: 1.0e300\n", ["layout.slack_m", "at most"]),
        ("reliability:\n  restart_minutes: .inf\n", ["reliability.restart_minutes", "finite"]),
        (
            "reliability:\n  interruptions_per_1000_node_days: 1.0e300\n",
            ["interruptions_per_1000_node_days", "at most"],
        ),
        ("reliability:\n  checkpoint_bytes_per_param: 1.0e20\n", ["checkpoint_bytes_per_param", "at most 1000"]),
        ("reliability:\n  goodput: .nan\n", ["reliability.goodput", "finite"]),
        ("cloud:\n  spot_restart_minutes: .nan\n", ["cloud.spot_restart_minutes", "finite"]),
        ("cloud:\n  spot_interruptions_per_1000_instance_days: 1.0e300\n", ["spot_interruptions", "at most"]),
        ("objective:\n  colocation_usd_per_kw_month: 1.0e9\n", ["colocation_usd_per_kw_month", "at most 10,000"]),
        ("objective:\n  staff_fte: .inf\n", ["objective.staff_fte", "finite"]),
        ('include:\n  racks: "on\\0"\n', ["include.racks", "U+0000"]),
        ('constraints:\n  switches: ["\\x1b[31m"]\n', ["constraints.switches", "U+001B (ESC)"]),
        # a key holding a carriage return is quoted, not printed raw (it would start a spoofed line)
        ('cloud:\n  quota: {"\\r": ""}\n', ["cloud.quota = {'\\r': ''}", "contains a line break"]),
    ],
)
def test_out_of_range_scenario_values(run, write, extra, fragments):
    text = SCENARIO.replace("constraints:\n  gpus: [H100]\n", "") + extra
    path = write("s.yaml", text)
    refused(run("plan", path, "-q"), 1, str(path), *fragments)


def test_search_size_is_capped(run, write):
    scenario = write("s.yaml", SCENARIO)
    many = "[" + ",".join(str(i) for i in range(1, 1001)) + "]"
    refused(run("plan", scenario, "-q", "--set", f"workload.micro_batches={many}"), 1, "1000 combinations")
    message = refused(run("plan", scenario, "-q", "--set", "constraints.oversubscription=[1,2,3,4,5]"), 1)
    assert f"= 20 combinations to search; at most {L.MAX_SEARCH_PAIRS}" in message
    ones = "[" + ",".join(["1"] * 1001) + "]"
    refused(run("plan", scenario, "-q", "--set", f"workload.micro_batches={ones}"), 1, "1,001 items; at most 1,000")


def test_out_of_range_options(run, write):
    scenario = write("s.yaml", SCENARIO)
    refused(run("plan", scenario, "-q", "--max-nodes", "1" + "0" * 19), 1, "constraints.max_nodes", "at most")
    refused(run("plan", scenario, "-q", "--gpus", "1" + "0" * 30), 1, "requirement.gpus", "at most")
    refused(run("plan", scenario, "-q", "--set", "constraints.max_nodes=1e19"), 1, "constraints.max_nodes")
    refused(run("plan", scenario, "-q", "--budget", "1e400"), 2, "--budget")
    refused(run("plan", scenario, "-q", "--alternatives", "1000000"), 2, "--alternatives")
    refused(run("inference", "--params", "1e30", "--latency", "1s"), 2, "--params", "out of range")
    refused(run("plan", scenario, "-q", "--gap", "nan"), 2, "--gap", "not a finite number")
    refused(run("cloud", scenario, "--spot-share", "nan"), 2, "--spot-share", "not a finite number")
    refused(run("inference", "--params", "175B", "--latency", "1s", "--weight-bytes", "nan"), 2, "--weight-bytes")
    refused(run("inference", "--params", "175B", "--latency", "1s", "--batch", "1" + "0" * 30), 2, "--batch")
    refused(run("plan", scenario, "-q", "--confidence", "nan"), 2, "--confidence", "not a finite number")
    refused(run("plan", scenario, "-q", "--confidence", "inf"), 2, "--confidence")
    refused(run("cloud", scenario, "--confidence", "nan"), 2, "--confidence", "not a finite number")
    refused(run("plan", scenario, "-q", "--set", "confidence=.nan"), 1, "confidence", "finite")


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--grad-accum", "1" + "0" * 30),
        ("--gpus", "8" + "0" * 30),
        ("--gpus-per-node", "8" + "0" * 30),
        ("--seq-len", "1" + "0" * 30),
        ("--micro-batch", "1e30"),
        ("--tokens-per-gpu", "1e30"),
        ("--params", "1e30"),
        ("--nics-per-node", "2000"),  # a node holds at most 1,024 NICs (an NVL72 has 72)
    ],
)
def test_out_of_range_predict_options(run, option, value):
    args = {a: b for a, b in zip(PREDICT[1::2], PREDICT[2::2], strict=True)}
    args.pop("--node-gbps")
    if option in ("--micro-batch", "--seq-len"):
        args.pop("--tokens-per-gpu")
        args.update({"--micro-batch": "1", "--seq-len": "2048"})
    args[option] = value
    if option == "--nics-per-node":
        args["--nic-gbps"] = "400"
    else:
        args["--node-gbps"] = "400"
    refused(run("predict", *[x for pair in args.items() for x in pair]), 2, option)


def test_huge_numbers_in_catalog_cells(run, write):
    path = write("nics.csv", NIC_HEADER + nic_row("A", ports="9" * 400) + nic_row("B", ports="9" * 100_000))
    message = refused(run("catalog", "validate", path), 1, f"{path}:2: column 'ports'", f"{path}:3: column 'ports'")
    assert "(100,000 characters)" in message


def test_server_max_nics_is_capped(run, write):
    lines = (catalogs_dir() / "servers.csv").read_text().splitlines()
    header, row = lines[1], next(line for line in lines[2:] if "H100" in line)
    cells = row.split(",")
    cells[header.split(",").index("max_nics_per_host")] = "1000000000"
    cells[0] = "Monster"
    path = write("servers.csv", header + "\n" + ",".join(cells) + "\n")
    refused(run("catalog", "validate", path), 1, f"{path}:2: column 'max_nics_per_host'", "at most 64")
    # a schema-1 file names the column as it did (max_nics_per_node), and so does the message
    old = write("old.csv", header.replace("max_nics_per_host", "max_nics_per_node") + "\n" + ",".join(cells) + "\n")
    refused(run("catalog", "validate", old), 1, f"{old}:2: column 'max_nics_per_node'", "at most 64")


def test_calibration_with_a_100k_digit_number(run, write):
    path = write("cal.json", '{"overlap": ' + "9" * 100_000 + "}")
    refused(run(*PREDICT, "--calibration", path), 1, str(path), "100,000 digits")


def test_calibrate_refuses_nan_and_inf_cells(run, write, tmp_path):
    path = write(
        "m.csv",
        "gpu,gpus,gpus_per_node,node_gbps,fabric,params,tokens_per_gpu,measured_tflops,tflops_per_gpu_high\n"
        "V100,384,16,100,ib,176B,2048,nan,\nV100,384,16,400,ib,176B,2048,inf,\nV100,384,16,400,ib,176B,2048,,inf\n",
    )
    output = tmp_path / "cal.json"
    refused(
        run("calibrate", path, "-o", output),
        1,
        f"{path}:2: column 'measured_tflops' = 'nan'",
        f"{path}:3: column 'measured_tflops' = 'inf'",
        f"{path}:4: column 'tflops_per_gpu_high' = 'inf'",
    )
    assert not output.exists()


def test_calibration_uncertainty_must_be_quantiles_in_range(run, write):
    quantiles = {"p5": -0.2, "p10": -0.1, "p25": 0.0, "p50": 0.0, "p75": 0.1, "p90": 0.2, "p95": 0.3}
    for uncertainty, fragment in (
        ({"all": {**quantiles, "p5": -1e300}}, "beyond"),  # exp(1e300) would overflow in range_factors
        ({"all": {"p5": 0.1}}, "lacks the quantiles"),
        ({"all": {**quantiles, "p95": -1.0}}, "must not decrease"),
    ):
        path = write("cal.json", json.dumps({"uncertainty": uncertainty}))
        refused(run(*PREDICT, "--calibration", path), 1, str(path), "uncertainty", fragment)
    path = write("ok.json", json.dumps({"uncertainty": {"all": quantiles}}))
    assert run(*PREDICT, "--calibration", path).exit_code == 0


def test_calibrate_refuses_too_many_points(run, write, tmp_path):
    rows = "".join(f"V100,{16 * (1 + i % 64)},16,100,ib,176B,2048,20\n" for i in range(L.MAX_MEASUREMENT_ROWS + 1))
    path = write("m.csv", MEASUREMENTS.splitlines()[0] + "\n" + rows)
    refused(run("calibrate", path, "-o", tmp_path / "c.json"), 1, str(path), f"more than {L.MAX_MEASUREMENT_ROWS:,}")


def test_calibrate_counts_the_points_of_all_its_files(run, write, tmp_path):
    rows = "".join(f"V100,{16 * (1 + i % 64)},16,100,ib,176B,2048,20\n" for i in range(L.MAX_MEASUREMENT_ROWS // 2 + 1))
    first = write("a.csv", MEASUREMENTS.splitlines()[0] + "\n" + rows)
    second = write("b.csv", MEASUREMENTS.splitlines()[0] + "\n" + rows)
    start = time.monotonic()
    refused(run("calibrate", first, second, "-o", tmp_path / "c.json"), 1, "measurements in all", "more than")
    assert time.monotonic() - start < 10  # refused before the fit


def test_source_groups_are_capped_before_the_validation_fits(run, write, tmp_path):
    header = MEASUREMENTS.splitlines()[0] + ",source_group\n"
    rows = "".join(
        f"V100,{16 * (1 + i % 8)},16,100,ib,176B,2048,20,set{i}\n" for i in range(L.MAX_MEASUREMENT_SOURCES + 1)
    )
    path = write("m.csv", header + rows)
    start = time.monotonic()
    refused(run("validate", path, "--no-database", "-q"), 1, str(path), "source groups", "more than")
    refused(run("calibrate", path, "--no-database", "-q", "-o", tmp_path / "c.json"), 1, "--no-cross-validation")
    assert time.monotonic() - start < 10 and not (tmp_path / "c.json").exists()


def test_measurement_text_and_lengths_are_checked(run, write, tmp_path):
    path = write("m.csv", MEASUREMENTS.replace("V100,384,16,400", "V100\x1b[2J,384,16,400"))
    refused(run("calibrate", path, "-o", tmp_path / "c.json"), 1, f"{path}:3: column 'gpu'", "U+001B (ESC)")
    lines = (catalogs_dir() / "optics.csv").read_text().splitlines()
    header, row = lines[1], next(csv.reader([next(line for line in lines[2:] if ",dac," in line)]))
    for lengths in ("inf:MCP-X", "nan:MCP-X", "1e9:MCP-X"):
        cells = list(row)
        cells[0], cells[header.split(",").index("lengths")] = "MONSTER-DAC", lengths
        buffer = io.StringIO()
        csv.writer(buffer).writerows([header.split(","), cells])
        optics = write("optics.csv", buffer.getvalue())
        refused(run("catalog", "validate", optics), 1, f"{optics}:2: column 'lengths'", "METRES")


# ---------------------------------------------------------------- encodings and special files


@pytest.mark.parametrize(
    ("encoding", "fragment"),
    [("latin-1", "not UTF-8 text (byte 0xe9 on line 1)"), ("utf-16", "is UTF-16 text")],
)
def test_scenario_and_calibration_encodings(run, tmp_path, encoding, fragment):
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SCENARIO.replace("hostile", "café"), encoding=encoding)
    refused(run("plan", scenario, "-q"), 1, str(scenario), fragment)
    calibration = tmp_path / "c.json"
    calibration.write_text('{"source": "café"}', encoding=encoding)
    refused(run(*PREDICT, "--calibration", calibration), 1, str(calibration), fragment)
    catalog = tmp_path / "nics.csv"
    catalog.write_text(NIC_HEADER + nic_row("A", "café"), encoding=encoding)
    refused(run("catalog", "validate", catalog), 1, str(catalog), fragment.replace("line 1", "line 2"))


def test_utf8_with_bom_is_accepted(write, tmp_path):
    path = tmp_path / "s.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + SCENARIO.encode())
    assert load_scenario(path).name == "hostile"
    nics = tmp_path / "nics.csv"
    nics.write_bytes(b"\xef\xbb\xbf" + (NIC_HEADER + nic_row("A")).encode())
    assert load_catalog([nics], defaults=False).counts()["nics"] == 1


def test_binary_scenario(run, tmp_path):
    path = tmp_path / "s.yaml"
    path.write_bytes(bytes(range(256)) * 4)
    refused(run("plan", path, "-q"), 1, str(path), "binary data")


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero (Linux)")
def test_dev_zero_as_every_input(run, write, tmp_path):
    scenario = write("s.yaml", SCENARIO)
    refused(run("plan", "/dev/zero", "-q"), 1, "/dev/zero: is a device")
    refused(run("plan", scenario, "-q", "--calibration", "/dev/zero"), 1, "/dev/zero: is a device")
    refused(run("calibrate", "/dev/zero", "-o", tmp_path / "c.json"), 1, "/dev/zero")
    refused(run("catalog", "validate", "/dev/zero"), 1, "/dev/zero")


# ---------------------------------------------------------------- catalog size and structure


def test_header_of_100k_columns_is_refused_fast(run, write):
    path = write("nics.csv", ",".join(f"c{i}" for i in range(100_000)) + "\n")
    start = time.monotonic()
    refused(run("catalog", "validate", path), 1, str(path), f"limit of {L.MAX_TABLE_COLUMNS} columns")
    assert time.monotonic() - start < 5


def test_too_many_rows_are_refused(run, tmp_path):
    path = tmp_path / "nics.csv"
    path.write_text(NIC_HEADER + "x\n" * (L.MAX_TABLE_ROWS + 1))
    refused(run("catalog", "validate", path), 1, str(path), f"more than {L.MAX_TABLE_ROWS:,} rows")


def test_a_big_valid_catalog_loads_in_seconds(tmp_path):
    path = tmp_path / "nics.csv"
    path.write_text(NIC_HEADER + "".join(nic_row(f"X{i}", f"NIC {i}") for i in range(20_000)))
    start = time.monotonic()
    assert load_catalog([path]).counts()["nics"] >= 20_000
    assert time.monotonic() - start < 15  # ~1 s here; a per-row quadratic would take minutes


def _xlsx(sheet_xml: bytes, shared: bytes | None = None) -> bytes:
    """A minimal workbook with one sheet "nics" (and optionally a shared-strings part)."""
    main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    pkg = "http://schemas.openxmlformats.org/package/2006/relationships"
    types = (
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/xl/workbook.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
        '<Override PartName="/xl/worksheets/sheet1.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>'
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", types)
        z.writestr(
            "_rels/.rels",
            f'<Relationships xmlns="{pkg}"><Relationship Id="rId1" Type="{rel}/officeDocument" '
            'Target="xl/workbook.xml"/></Relationships>',
        )
        z.writestr(
            "xl/workbook.xml",
            f'<workbook xmlns="{main}" xmlns:r="{rel}"><sheets><sheet name="nics" sheetId="1" r:id="rId1"/>'
            "</sheets></workbook>",
        )
        z.writestr(
            "xl/_rels/workbook.xml.rels",
            f'<Relationships xmlns="{pkg}"><Relationship Id="rId1" Type="{rel}/worksheet" '
            'Target="worksheets/sheet1.xml"/></Relationships>',
        )
        z.writestr("xl/worksheets/sheet1.xml", sheet_xml)
        if shared is not None:
            z.writestr("xl/sharedStrings.xml", shared)
    return buffer.getvalue()


SHEET_HEAD = b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
SHEET_TAIL = b"</sheetData></worksheet>"


def test_xlsx_zip_bomb_is_refused_before_openpyxl_opens_it(run, tmp_path, monkeypatch):
    rows = b"".join(b'<row r="%d"><c r="A%d"><v>1</v></c></row>' % (i, i) for i in range(1, 200_001))
    path = tmp_path / "quote.xlsx"
    path.write_bytes(_xlsx(SHEET_HEAD + rows + SHEET_TAIL))
    assert path.stat().st_size < 2 * L.MIB  # small on disk, ~8 MiB once uncompressed

    def must_not_open(*args, **kwargs):
        raise AssertionError("openpyxl opened a workbook the zip directory should have refused")

    monkeypatch.setattr(openpyxl, "load_workbook", must_not_open)
    refused(run("catalog", "validate", path), 1, str(path), "once uncompressed", "export the catalog as CSV")


def _declare_size(data: bytes, member: str, size: int) -> bytes:
    """The archive with member's uncompressed size rewritten in its local and central headers."""
    archive = zipfile.ZipFile(io.BytesIO(data))
    info = archive.getinfo(member)
    out = bytearray(data)
    struct.pack_into("<I", out, info.header_offset + 22, size)  # local header: uncompressed size
    central = archive.start_dir  # central directory entries: "PK\1\2", size at +24, name at +46
    while True:
        name_length = struct.unpack_from("<H", data, central + 28)[0]
        if data[central + 46 : central + 46 + name_length] == member.encode():
            struct.pack_into("<I", out, central + 24, size)
            return bytes(out)
        central = data.index(b"PK\x01\x02", central + 4)


def test_xlsx_whose_directory_understates_a_member_is_not_read_past_it(tmp_path):
    rows = b"".join(b'<row r="%d"><c r="A%d"><v>1</v></c></row>' % (i, i) for i in range(1, 200_001))
    data = _declare_size(_xlsx(SHEET_HEAD + rows + SHEET_TAIL), "xl/worksheets/sheet1.xml", 1000)
    path = tmp_path / "liar.xlsx"
    path.write_bytes(data)
    with pytest.raises(CatalogError) as info:
        load_catalog([path], defaults=False)
    assert str(path) in str(info.value)  # zipfile stops at the declared size: a CRC or XML error, not 8 MiB


def test_xlsx_sheet_claiming_a_huge_dimension_is_not_padded(tmp_path):
    cells = b'<row r="1"><c r="A1" t="inlineStr"><is><t>sku</t></is></c></row>'
    far = b'<row r="1000000"><c r="XFD1000000"><v>1</v></c></row>'
    sheet = SHEET_HEAD.replace(b"<sheetData>", b'<dimension ref="A1:XFD1048576"/><sheetData>') + cells + far
    path = tmp_path / "wide.xlsx"
    path.write_bytes(_xlsx(sheet + SHEET_TAIL))
    start = time.monotonic()
    with pytest.raises(CatalogError, match="columns"):
        load_catalog([path], defaults=False)
    assert time.monotonic() - start < 10


# ---------------------------------------------------------------- text: control characters


def test_control_characters_in_catalog_cells(run, write):
    rows = nic_row("A", "bad\x00name") + nic_row("B", "bell\x07") + nic_row("C", "c1\x85")
    path = write("nics.csv", NIC_HEADER + rows)
    refused(
        run("catalog", "validate", path),
        1,
        f"{path}:2: column 'name' = 'bad\\x00name': contains the control character U+0000 (NUL)",
        f"{path}:3: column 'name'",
        f"{path}:4: column 'name'",
    )


def test_tab_and_newline_stay_allowed_in_notes(tmp_path):
    path = tmp_path / "nics.csv"
    path.write_text(NIC_HEADER.replace("\n", ",notes\n") + nic_row("A").replace("\n", ',"two\nlines\tok"\n'))
    assert load_catalog([path], defaults=False).nic("A").notes == "two\nlines\tok"


def test_control_characters_in_scenario_and_calibration(run, write):
    scenario = write("s.yaml", SCENARIO.replace("name: hostile", 'name: "bad\\0name\\x1b[31m"'))
    refused(run("plan", scenario, "-q"), 1, str(scenario), "name = ", "U+0000 (NUL)")
    calibration = write("c.json", json.dumps({"source": "evil\u0000source"}))
    refused(run(*PREDICT, "--calibration", calibration), 1, str(calibration), "source", "U+0000")


def test_workbook_writer_survives_control_characters_and_infinity(tmp_path):
    from planner.report.xlsx import put, save

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    put(sheet, 1, 1, "bad\x00name\x07\u202e")
    put(sheet, 2, 1, float("inf"))
    put(sheet, 3, 1, "=HYPERLINK(1)")
    put(sheet, 4, 1, "x" * 40_000)
    save(workbook, tmp_path / "w.xlsx")
    cells = [row[0] for row in openpyxl.load_workbook(tmp_path / "w.xlsx").active.iter_rows(values_only=True)]
    assert cells[0] == "bad\\x00name\\x07\\u202e" and cells[1] == "inf" and cells[2] == "=HYPERLINK(1)"
    assert len(cells[3]) == L.MAX_CELL_CHARS


def test_formula_cached_values_are_finite_and_printable(tmp_path):
    from planner.report.xlsx import cached, formula, save

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    formula(sheet, 1, 1, "=1/0", value=float("inf"))
    formula(sheet, 2, 1, '="x"', value="bad\x00text")
    assert "A1" not in cached(sheet) and cached(sheet)["A2"] == "bad\\x00text"
    save(workbook, tmp_path / "w.xlsx")
    assert openpyxl.load_workbook(tmp_path / "w.xlsx", data_only=True).active["A2"].value == "bad\\x00text"


# ---------------------------------------------------------------- outputs


def test_outputs_commit_together(run, write, tmp_path):
    scenario = write("s.yaml", SCENARIO)
    previous = tmp_path / "out.json"
    previous.write_text("precious\n")
    refused(run("plan", scenario, "-q", "-o", previous, "--csv", tmp_path / "missing" / "dir" / "bom.csv"), 1)
    assert previous.read_text() == "precious\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json", "s.yaml"]


def test_a_failing_second_output_leaves_the_first_untouched(tmp_path):
    first, second = tmp_path / "a.json", tmp_path / "b.csv"
    first.write_text("old a")
    second.write_text("old b")

    def full_disk(tmp: Path) -> None:
        tmp.write_text("half")
        raise OSError(28, "No space left on device")

    outputs = Outputs()
    outputs.add_text("-o", first, "new a")
    outputs.add("--csv", second, full_disk)
    with pytest.raises(WriteError, match=r"b.csv: cannot write \(No space left on device\); nothing was changed"):
        outputs.commit()
    assert first.read_text() == "old a" and second.read_text() == "old b"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.csv"]


def test_same_target_twice_is_refused_before_the_work(run, write, tmp_path):
    outputs = Outputs()
    outputs.check("-o", tmp_path / "x.csv")
    with pytest.raises(PlannerError, match="writes the same file"):
        outputs.check("--csv", tmp_path / "." / "x.csv")
    scenario = write("s.yaml", SCENARIO)
    target = tmp_path / "bom.csv"
    refused(run("plan", scenario, "-q", "-o", target, "--csv", target), 2, "writes the same file")


def test_output_that_is_an_input_is_refused(run, write, tmp_path):
    folder = tmp_path / "mycat"
    folder.mkdir()
    (folder / "nics.csv").write_bytes((catalogs_dir() / "nics.csv").read_bytes())
    scenario = write("s.yaml", SCENARIO)
    measurements = write("m.csv", MEASUREMENTS)
    calibration = write("cal.json", "{}")
    as_json = write("s.json", json.dumps(yaml.safe_load(SCENARIO)))  # a scenario may be JSON (YAML's subset)
    before = snapshot(folder / "nics.csv", scenario, measurements, calibration, as_json)
    refused(run("plan", scenario, "-q", "--catalog", folder, "--csv", folder / "nics.csv"), 2, "the catalog")
    refused(run("plan", scenario, "-q", "--catalog", folder, "--csv", folder / "new.csv"), 2, "the catalog")
    shipped = catalogs_dir() / "gpus.csv"
    refused(run("plan", scenario, "-q", "--csv", shipped), 2, "shipped catalog folder")
    refused(run("calibrate", measurements, "-o", measurements), 2, "the measurements file")
    database = data_dir() / "measurements.csv"
    shipped_before = snapshot(database)
    refused(run("calibrate", "-q", "--no-cross-validation", "-o", database), 2, "the measurement database")
    refused(run("calibrate", measurements, "--catalog", folder, "-o", folder / "fit.csv"), 2, "the catalog")
    assert snapshot(database) == shipped_before
    link = tmp_path / "link.csv"
    link.symlink_to(measurements)
    refused(run("calibrate", measurements, "-o", link), 2, "the measurements file")
    hard = tmp_path / "hard.csv"
    os.link(measurements, hard)
    refused(run("calibrate", measurements, "-o", hard), 2, "the measurements file")
    bandwidth = ["bandwidth", *PREDICT[1:9], "--tokens-per-gpu", "2048", "--target-tflops", "40"]
    refused(run(*bandwidth, "--calibration", calibration, "-o", calibration), 2, "the calibration file")
    refused(run("plan", as_json, "-q", "-o", as_json), 2, "the scenario")
    assert snapshot(folder / "nics.csv", scenario, measurements, calibration, as_json) == before


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="needs /dev/null")
def test_devices_fifos_and_folders_are_never_replaced(run, write, tmp_path):
    measurements = write("m.csv", MEASUREMENTS)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    link = tmp_path / "null.json"
    link.symlink_to("/dev/null")
    devices = [Path("/dev/null")] + ([Path("/dev/full")] if Path("/dev/full").exists() else [])
    before = snapshot(*devices, fifo, link)
    for target, kind in [(d, "a character device") for d in devices] + [
        (fifo, "a FIFO"),
        (link, "a character device"),
        (tmp_path, "a folder"),
    ]:
        refused(run("calibrate", measurements, "-o", target), 2, f"-o {target}: {kind}")
    assert snapshot(*devices, fifo, link) == before
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_symlinked_output_is_written_through(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    outputs = Outputs()
    outputs.add_text("-o", link, "new")
    outputs.commit()
    assert link.is_symlink() and real.read_text() == "new\n"


WRITE_UNDER_LIMIT = """
import resource, sys
from planner.base.fileio import Outputs, WriteError
resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200))  # as `ulimit -f`: writes past 200 bytes fail (EFBIG)
outputs = Outputs()
outputs.add_text("-o", sys.argv[1], "small")
outputs.add_text("--csv", sys.argv[2], "x" * 1000)
try:
    outputs.commit()
except WriteError as exc:
    print(exc)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE behaviour checked on Linux")
def test_file_size_limit_is_one_line_and_changes_nothing(tmp_path):
    first, second = tmp_path / "plan.json", tmp_path / "bom.csv"
    first.write_text("previous plan")
    result = subprocess.run(
        [sys.executable, "-c", WRITE_UNDER_LIMIT, str(first), str(second)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert result.stdout.strip() == f"{second}: cannot write (File too large); nothing was changed"
    assert first.read_text() == "previous plan"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json"]


def test_a_full_disk_under_the_solver_is_one_line(run, write, monkeypatch):
    import planner.answers.buy

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")  # as pulp's model file write on a full /tmp raises

    monkeypatch.setattr(planner.answers.buy, "run_with_table", full_disk)
    message = refused(run("plan", write("s.yaml", SCENARIO), "-q"), 1, "cannot write (No space left on device)")
    assert message.count("\n") == 1 and "no output file was changed" in message


# ---------------------------------------------------------------- CSV injection


def test_catalog_list_csv_escapes_formulas(run, tmp_path):
    path = tmp_path / "nics.csv"
    names = ['=HYPERLINK("http://x","y")', "+1+cmd|' /C calc'!A0", "-1+1", "@SUM(1)"]
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(NIC_COLUMNS)
        for i, name in enumerate(names):
            writer.writerow([f"X{i}", name, *nic_row("").strip().split(",")[2:]])
    result = run("catalog", "list", "nics", "--catalog", path, "--format", "csv")
    assert result.exit_code == 0, result.stderr
    rows = {r["sku"]: r for r in csv.DictReader(io.StringIO(result.stdout))}
    assert [rows[f"X{i}"]["name"] for i in range(4)] == ["'" + n for n in names]
    assert rows["CX7-400G-OSFP"]["speed_gbps"] == "400.0"  # numbers and plain text unchanged


# ---------------------------------------------------------------- floods


def test_many_problems_print_a_short_summary(run, write):
    path = write("s.yaml", SCENARIO.replace("  seq_len: 2048\n", "  micro_batches: [" + ",".join(["-1"] * 999) + "]\n"))
    message = refused(run("plan", path, "-q"), 1, "workload.micro_batches.0 = -1: must be at least 1", "more lines")
    assert message.count("\n") <= L.MAX_ERROR_LINES + 2
    assert str(load_scenario_error(path)).endswith("... and 979 more problems")
    nics = write("nics.csv", NIC_HEADER + "".join(nic_row(f"A{i}", ports="-1") for i in range(500)))
    message = refused(run("catalog", "validate", nics), 1, f"{nics}:2: column 'ports'", "500 problems found")
    assert message.count("\n") <= L.MAX_ERROR_LINES + 3


def load_scenario_error(path: Path) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    return info.value


def test_unknown_key_with_a_huge_value_prints_a_short_line(run, write):
    path = write("s.yaml", SCENARIO + "junk: " + json.dumps(["x" * 1000] * 500) + "\n")
    message = refused(run("plan", path, "-q"), 1, "junk = ", "unknown field")
    assert message.count("\n") == 1


# ---------------------------------------------------------------- fuzz: units, scenario values, catalog cells

ANY_TEXT = st.one_of(
    st.text(max_size=300),
    st.text(alphabet="0123456789.,_eE+-$ kKMGTBbipsW/%", max_size=300),
    st.integers().map(str),
    st.integers(min_value=10**300, max_value=10**2000).map(str),
)


@settings(max_examples=200, deadline=None)
@given(st.one_of(ANY_TEXT, st.integers(), st.floats(), st.booleans(), st.none(), st.lists(st.integers(), max_size=3)))
def test_parse_quantity_returns_a_finite_number_or_value_error(value):
    for dimension in ("count", "gbps", "usd", "s"):
        try:
            number = parse_quantity(value, dimension)
        except ValueError as exc:
            assert len(str(exc)) < 400
        else:
            assert number == number and abs(number) != float("inf")


SCENARIO_FIELDS = [
    ("name",),
    ("requirement", "gpus"),
    ("workload", "params"),
    ("workload", "micro_batches"),
    ("constraints", "max_nodes"),
    ("constraints", "budget_usd"),
    ("objective", "years"),
    ("objective", "usd_per_kwh"),
    ("cloud", "max_instances"),
    ("cloud", "quota"),
    ("cabling", "switch_reach_m"),
    ("confidence",),
    ("layout", "rack_kw"),
    ("layout", "reserved_units"),
    ("include", "racks"),
    ("reliability", "restart_minutes"),
    ("reliability", "goodput"),
    ("cloud", "spot_restart_minutes"),
    ("objective", "staff_fte"),
    ("junk",),
]
SCENARIO_VALUES = st.recursive(
    st.one_of(ANY_TEXT, st.integers(), st.floats(), st.booleans(), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=8,
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(SCENARIO_FIELDS), value=SCENARIO_VALUES)
def test_any_scenario_value_is_accepted_or_named(tmp_path, field, value):
    data = yaml.safe_load(SCENARIO)
    node = data
    for key in field[:-1]:
        node = node.setdefault(key, {})
    node[field[-1]] = value
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=False), encoding="utf-8")
    try:
        load_scenario(path)
    except ScenarioError as exc:
        message = str(exc)
        assert message.count("\n") <= L.MAX_ERROR_LINES  # at most 20 problems and "... and N more"
        assert all(line.startswith(f"{path}: ") and len(line) < 1000 for line in message.splitlines())


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(column=st.sampled_from(NIC_COLUMNS), cell=ANY_TEXT)
def test_any_catalog_cell_is_accepted_or_named(tmp_path, column, cell):
    path = tmp_path / "nics.csv"
    values = dict(zip(NIC_COLUMNS, nic_row("A").strip().split(","), strict=True))
    values[column] = cell
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(NIC_COLUMNS)
        writer.writerow([values[c] for c in NIC_COLUMNS])
    try:
        load_catalog([path], defaults=False)
    except CatalogError as exc:
        for problem in exc.problems:
            assert problem.file == str(path)
            assert len(str(problem)) < 1000


def test_shipped_examples_still_load():
    from planner.inputs.fleet import load_fleet
    from planner.inputs.serving import load_serving

    for path in sorted(examples_dir().glob("*.yaml")):
        if path.name.startswith("fleet-"):
            assert load_fleet(path).training
        elif path.name.startswith("serve-"):
            assert load_serving(path, {}).load.rate_per_s > 0
        else:
            assert load_scenario(path).workload is not None


# ---------------------------------------------------------------- planner fleet: the same rules


def _fleet_text(**replace: str) -> str:
    text = (examples_dir() / "fleet-startup.yaml").read_text(encoding="utf-8")
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    return text.replace("catalogs:", "#catalogs:")  # the shipped catalogs (the example names none anyway)


@pytest.mark.parametrize(
    ("replace", "fragments"),
    [
        ({"growth_per_period: 0.15": "growth_per_period: .nan"}, ["inference[0].growth_per_period", "finite"]),
        ({"target_tflops: 300": "target_tflops: 300\n    max_nodes: 1e19"}, ["training[0].max_nodes", "100,000"]),
        ({"tokens: 15T": "tokens: " + "9" * 400}, ["training[1].tokens", "too long"]),
        ({"name: startup": 'name: "start\\0up"'}, ["name", "NUL"]),
    ],
)
def test_fleet_values_are_checked_like_a_scenario(run, write, replace, fragments):
    path = write("fleet.yaml", _fleet_text(**replace))
    message = refused(run("fleet", path, "-q"), 1, str(path), *fragments)
    assert message.count("\n") == 1


def test_fleet_file_bombs_depth_and_encodings(run, write, tmp_path):
    bomb = write("bomb.yaml", _fleet_text() + alias_bomb(9))
    refused(run("fleet", bomb, "-q"), 1, str(bomb), f"more than {L.MAX_DOCUMENT_NODES:,} values")
    deep = write("deep.yaml", _fleet_text() + "x: " + "[" * 5000 + "]" * 5000 + "\n")
    refused(run("fleet", deep, "-q"), 1, str(deep), "nesting")
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(_fleet_text(startup="startüp").encode("latin-1"))
    refused(run("fleet", latin, "-q"), 1, str(latin), "UTF-8")
    refused(run("fleet", "/dev/zero", "-q"), 1, "/dev/zero", "device")


def test_fleet_workloads_are_capped_with_one_line(run, write):
    services = "".join(f"  - {{name: s{i}, model: Llama-3-8B, tokens_per_s: 1k}}\n" for i in range(101))
    path = write("many.yaml", _fleet_text(**{"inference:\n": "inference:\n" + services}))
    message = refused(run("fleet", path, "-q"), 1, str(path), "at most 100 workloads")
    assert "{" not in message  # the rule's message, not the whole file echoed


def test_fleet_outputs_never_replace_inputs_or_devices(run, write, tmp_path):
    as_json = write("fleet.json", json.dumps(yaml.safe_load(_fleet_text())))
    before = snapshot(as_json, Path("/dev/null"))
    refused(run("fleet", as_json, "-q", "-o", as_json), 2, "the fleet file")
    refused(run("fleet", as_json, "-q", "-o", "/dev/null"), 2)
    refused(run("fleet", as_json, "-q", "-o", tmp_path / "nope" / "plan.json"), 1, "does not exist")
    assert snapshot(as_json, Path("/dev/null")) == before


def test_fleet_time_limit_bounds_the_relaxation_search(run):
    """An infeasible fleet tries up to 7 relaxations of 3 solves each; --time-limit is for all of them."""
    fleet = examples_dir() / "fleet-startup.yaml"
    result = run("fleet", fleet, "-q", "--set", "training[0].tokens=30T", "--time-limit", "0.5s")
    assert result.exit_code == 1 and "Traceback" not in result.stdout + result.stderr
    assert "--time-limit reached before relaxing" in result.stdout


def test_solver_threads_are_capped_and_a_solver_that_fails_to_start_is_one_line(run, monkeypatch):
    fleet = examples_dir() / "fleet-startup.yaml"
    refused(run("fleet", fleet, "-q", "--threads", "5000"), 2, "--threads")  # CBC does not start with 5,000
    refused(run("fleet", fleet, "-q", "--gap", "nan"), 2, "--gap", "not a finite number")
    import pulp

    def broken(self, *args, **kwargs):
        raise pulp.PulpSolverError("Pulp: Error while trying to execute /path/to/cbc")

    monkeypatch.setattr(pulp.LpProblem, "solve", broken)
    refused(run("fleet", fleet, "-q"), 1, "solver cbc failed to run", "--solver")
