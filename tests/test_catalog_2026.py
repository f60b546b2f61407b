"""The December-2026 catalog answers the questions a buyer asks of it, with the shipped catalogs alone: rack-scale
GB200 and GB300 NVL72, B300 on Spectrum-X, AMD MI355X, and which GPU to buy (docs: the catalog issue's
done-when list)."""

from __future__ import annotations

import json

import pytest

from planner.base.resources import examples_dir

SCENARIO = "name: buyer\nworkload: {model: Llama-2-70B, seq_len: 4096, micro_batches: [1, 2], framework: fsdp}\n"


def _plan(run, write, gpu: str, gpus: int, *fabrics: str) -> dict:
    path = write("s.yaml", SCENARIO + f"requirement: {{gpus: {gpus}}}\n")
    args = [a for f in fabrics for a in ("--fabric", f)]
    result = run("plan", path, "--gpu", gpu, *args, "--json", "-q")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _bom(plan: dict, category: str, section: str | None = None) -> dict[str, int]:
    lines = [line for line in plan["bom"] if line["category"] == category and section in (None, line["section"])]
    return {line["sku"]: line["quantity"] for line in lines}


def test_576_gpus_of_gb200_nvl72(run, write):
    plan = _plan(run, write, "GB200", 576)
    c = plan["choice"]
    assert (c["nodes"], c["server"].startswith("GB200 NVL72"), c["gpus_per_node"]) == (8, True, 72)
    assert plan["layout"]["scale_up_gpus"] == 72 and plan["layout"]["cooling"] == "hybrid"
    assert _bom(plan, "nics")["CX7-400G-OSFP"] >= 576 // 72  # the trays' built-in ConnectX-7, in the price
    assert _bom(plan, "cdus")  # liquid heat: 8 x 132 kW x 0.87 to CDUs, priced


def test_1152_gpus_of_gb300_nvl72_on_xdr_infiniband(run, write):
    plan = _plan(run, write, "GB300", 1152, "ib")
    c = plan["choice"]
    assert (c["nodes"], c["gpus_per_node"], c["fabric"], c["nic"]) == (16, 72, "ib", "CX8-800G-OSFP")
    assert set(_bom(plan, "switches", "compute fabric")) == {"Q3400-RA"}  # Quantum-X800: the only XDR switch
    assert c["node_gbps"] == pytest.approx(72 * 800)


def test_512_b300_on_spectrum_x(run, write):
    plan = _plan(run, write, "B300", 512, "spectrum-x")
    c = plan["choice"]
    assert (c["gpus"], c["fabric"], c["nic"]) == (512, "spectrum-x", "CX8-800G-OSFP-2x400GbE")
    assert set(_bom(plan, "switches", "compute fabric")) <= {"SN5600", "SN5610"}
    nic = next(line for line in plan["bom"] if line["sku"] == "CX8-800G-OSFP-2x400GbE")
    assert nic["extended_usd"] == 0  # the ConnectX-8 on the B300 board, in its Ethernet mode: already paid


def test_1024_mi355x(run, write):
    plan = _plan(run, write, "MI355X", 1024)
    assert plan["choice"]["gpu"] == "MI355X" and plan["choice"]["gpus"] == 1024
    assert plan["layout"]["cooling"] == "hybrid" and _bom(plan, "cdus")


def test_which_gpu_for_70b_on_15t_tokens_in_90_days(run):
    result = run("plan", examples_dir() / "gpu-choice-70b-15t.yaml", "--json", "-q")
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    table = {s["label"]: s for s in plan["per_gpu"]}
    assert set(table) == {"H100-SXM", "H200", "B200", "B300", "GB300"}
    for s in table.values():  # each meets the deadline within the budget
        assert s["metrics"]["effective_training_days"] <= 90 * 0.9 + 1e-6
        assert s["cost"]["capex_usd"] <= 250e6
    assert plan["per_gpu"][0]["cost"]["objective_usd"] == pytest.approx(plan["cost"]["objective_usd"])


def test_every_server_row_is_recent_or_flagged_old(run, write):
    """A server priced before 2025 is flagged wherever a plan uses it (as of the plan's date)."""
    path = write("old.yaml", SCENARIO + "requirement: {gpus: 64}\nas_of: 2026-12-01\n")
    result = run("plan", path, "--gpu", "V100", "--json", "-q")
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    server = next(line for line in plan["bom"] if line["category"] == "servers")
    assert server["price_date"] < "2025" and server["stale"]
    assert any(s["sku"] == server["sku"] for s in plan["prices"]["stale"])


@pytest.mark.parametrize("example", ["llama-70b-h100", "gpt3-budget-power", "bloom-176b-v100", "gpu-choice-70b-15t"])
def test_no_decisive_price_comes_from_an_unidentified_source(run, example):
    """Every bill-of-materials line of at least 1% of capex cites a catalog row whose source is named."""
    from planner.catalog.load import load_catalog

    result = run("plan", examples_dir() / f"{example}.yaml", "--json", "-q")
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    catalog, capex = load_catalog(), plan["cost"]["capex_usd"]
    for line in plan["bom"]:
        if line["extended_usd"] >= 0.01 * capex:
            kind = {"servers": "servers", "nics": "nics", "switches": "switches"}.get(line["category"])
            key = line["catalog_sku"] or line["sku"]
            row = catalog.rows[kind][(key.lower(),)] if kind else None
            assert row is None or "not identified" not in row.source, (line["sku"], row.source)
