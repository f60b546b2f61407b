"""A system's topology as data: a rack-scale system (a 72-GPU NVLink domain of 18 hosts in its own liquid-cooled
rack) loads, validates and is priced in a plan; the performance model reads it as tiers; NIC limits are per
host. Expected values are worked by hand from the rows below."""

from __future__ import annotations

import json

import pytest

from planner.hardware.topology import domain_gbps, node_gbps
from planner.model import network
from planner.model.calibration import Calibration

GPU_CSV = """# planner catalog: gpus, schema 2
name,vendor,peak_bf16_tflops,hbm_gib,hbm_gb_per_s,tdp_w,source,date,confidence
T-GB,Acme,2500,173,8000,1200,test row,2026,estimate
"""
HEADER = (
    "name,vendor,gpu,gpus_per_node,scale_up_gpus,scale_up_gb_per_s,hosts,price_usd,power_w,pcie_gen,pcie_lanes,"
    "pcie_lanes_per_gpu,max_nics_per_host,nics_fixed,included_nic,included_nics,rack_units,racks,cooling,source,"
    "date,confidence"
)
# 18 trays of 4 GPUs, each tray with four 400G NICs (one per GPU), one NVLink domain, its own 132 kW rack
NVL72 = "Rack72,Acme,T-GB,72,72,900,18,3400000,132000,5,64,16,4,true,CX7-400G-OSFP,4,48,1,liquid,test row,2026,estimate"
# the same GPUs bought as 4-GPU trays: each tray a node and its own NVLink domain
TRAY = "Tray4,Acme,T-GB,4,4,900,1,188889,7333,5,64,16,4,true,CX7-400G-OSFP,4,1,0,liquid,test row,2026,estimate"


def catalog_files(write, *rows: str):
    return write("gpus.csv", GPU_CSV), write("servers.csv", "# planner catalog: servers, schema 2\n" + HEADER + "\n" +
                                             "\n".join(rows) + "\n")  # fmt: skip


def scenario(write, server: str, gpus: int = 576) -> str:
    text = (
        f"name: 70B on {gpus} GPUs\n"
        "workload: {model: Llama-2-70B, seq_len: 4096, micro_batches: [1], framework: fsdp}\n"
        f"requirement: {{gpus: {gpus}}}\n"
        f"constraints: {{servers: [{server}], fabrics: [ib], switches: [QM9700]}}\n"
        "catalogs: [gpus.csv, servers.csv]\n"
    )
    return write("s.yaml", text)


def test_a_rack_scale_row_validates(run, write):
    gpus, servers = catalog_files(write, NVL72)
    result = run("catalog", "validate", gpus, servers)
    assert result.exit_code == 0, result.output
    assert "2 rows valid" in result.output


def test_a_rack_scale_system_is_planned_and_priced(run, write):
    catalog_files(write, NVL72)
    result = run("plan", scenario(write, "Rack72"), "--json", "-q")
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    choice, layout = plan["choice"], plan["layout"]
    assert (choice["nodes"], choice["gpus"], choice["gpus_per_node"]) == (8, 576, 72)
    assert choice["nics_per_node"] == 72  # 18 hosts x 4: beyond 64 per node, within 4 per host
    assert choice["node_gbps"] == pytest.approx(72 * 400)
    # each node is its own rack: 8 compute racks, none of them bought, no PDU in them; the leaves stand in
    # the row's network racks (the NVL72 rack has no free units)
    assert layout["compute_racks"] == 8 and layout["racks_per_node"] == 1 and layout["cooling"] == "liquid"
    assert (layout["scale_up_gpus"], layout["hosts_per_node"]) == (72, 18)
    assert layout["leaf_placement"] != "top-of-rack"
    racks = [line for line in plan["bom"] if line["category"] == "racks"]
    assert sum(line["quantity"] for line in racks) == layout["network_racks"]
    servers = next(line for line in plan["bom"] if line["category"] == "servers")
    assert (servers["quantity"], servers["extended_usd"]) == (8, 8 * 3_400_000)
    nics = next(line for line in plan["bom"] if line["category"] == "nics")
    assert (nics["quantity"], nics["extended_usd"]) == (576, 0)  # included in the system's price
    # 8 x 132 kW to liquid: N+1 CDUs of one model: 6 + 1 CoolIT CHx200 (200 kW, $85,000) = $595,000 beats 1 + 1
    # CHx2000 (2 MW, $850,000) = $1,700,000; the facility water behind them is named as not priced
    cdus = [line for line in plan["bom"] if line["category"] == "cdus"]
    assert [(c["sku"], c["quantity"], c["extended_usd"]) for c in cdus] == [("COOLIT-CHX200", 7, 595_000)]
    assert any("facility water for the liquid-cooled Rack72" in note for note in plan["not_priced"])
    # ZeRO-3 over one ring of 576 GPUs: each 72-GPU domain's NICs carry 6 bytes/param x (n-1)/n (bf16 gathers
    # forward and backward, bf16 reduce-scatter), Llama-2-70B's 68,976,648,192 parameters
    assert plan["metrics"]["bytes_per_node_per_step"] == pytest.approx(6 * 68_976_648_192 * 575 / 576)
    assert plan["cost"]["power_kw"] >= 8 * 132  # the racks' own power is counted, not the layout's 40.8 kW racks


def test_the_nvlink_domain_beats_the_same_gpus_as_trays(run, write):
    catalog_files(write, NVL72, TRAY)
    rack = json.loads(run("plan", scenario(write, "Rack72"), "--json", "-q").stdout)
    trays = json.loads(run("plan", scenario(write, "Tray4"), "--json", "-q").stdout)
    assert trays["choice"]["nodes"] == 144
    # the same bytes per domain, but a tray's domain has 4 NICs where the rack's has 72
    assert rack["metrics"]["tokens_per_s"] > trays["metrics"]["tokens_per_s"]
    assert rack["metrics"]["binding"] == "compute" and trays["metrics"]["binding"] != "compute"


def test_predict_reads_a_domain_of_trays_as_one_tier(run):
    common = ["predict", "--model", "Llama-2-70B", "--gpu", "B200", "--gpus", "576", "--node-gbps", "1600"]
    common += ["--fabric", "ib", "--framework", "fsdp", "--micro-batch", "1", "--json"]
    trays = json.loads(run(*common, "--gpus-per-node", "4").stdout)
    rack = json.loads(run(*common, "--gpus-per-node", "4", "--scale-up-gpus", "72").stdout)
    assert (trays["domains"], rack["domains"]) == (144, 8)
    assert rack["scale_out_gbps"] == 18 * 1600  # a domain has all of its 18 trays' NICs
    assert rack["t_comm_network_s"] < trays["t_comm_network_s"] / 10
    wrong = run(*common, "--gpus-per-node", "4", "--scale-up-gpus", "6")
    assert wrong.exit_code == 2 and "--scale-up-gpus 6" in wrong.stderr


@pytest.mark.parametrize(
    ("change", "column", "fix"),
    [
        (("hosts", "7"), "hosts", "72 GPUs do not split into 7 equal hosts"),
        (("scale_up_gpus", "16"), "scale_up_gpus", "do not hold whole 16-GPU domains"),
        (("scale_up_gpus", "6"), "scale_up_gpus", "a 6-GPU domain is neither whole 4-GPU hosts nor a part of one"),
        (("max_nics_per_host", "65"), "max_nics_per_host", "at most 64"),
    ],
)
def test_topology_errors_name_the_column(run, write, change, column, fix):
    cells = dict(zip(HEADER.split(","), NVL72.split(","), strict=True))
    cells[change[0]] = change[1]
    gpus, servers = catalog_files(write, ",".join(cells.values()))
    result = run("catalog", "validate", gpus, servers)
    assert result.exit_code == 1
    line = next(line for line in result.stderr.splitlines() if f"column '{column}'" in line)
    assert f"{servers}:3: " in line and fix in line


def test_the_tiers_a_table_is_read_as():
    tiers = network.tiers(
        {"gpus": [576, 16], "scale_up_gpus": [72, 8], "scale_up_gb_per_s": [900, 450], "scale_out_gbps": [28800, 3200],
         "fabric": ["ib", "roce"]}
    )  # fmt: skip
    assert list(tiers.scale_up.size) == [72, 8] and list(tiers.scale_out.size) == [8, 2]
    assert list(tiers.scale_out.bytes_per_s) == [28800e9 / 8, 3200e9 / 8]
    assert list(tiers.scale_up.bytes_per_s) == [900e9, 450e9]
    assert tiers.scale_out.step_latency_us[1] == pytest.approx(1.2 * tiers.scale_out.step_latency_us[0])  # RoCE


def test_a_nodes_bandwidth_is_shared_by_its_domains_or_joined_into_one():
    assert float(domain_gbps(3200.0, 8, 8)) == 3200.0  # an HGX server: node = domain, exactly
    assert float(domain_gbps(3200.0, 8, 2)) == 800.0  # four 2-GPU domains share the node's NICs
    assert float(domain_gbps(1600.0, 4, 72)) == 28800.0  # 18 four-GPU trays make one domain
    for per_node, domain in ((8, 8), (8, 2), (4, 72)):
        assert float(node_gbps(domain_gbps(1234.5, per_node, domain), per_node, domain)) == pytest.approx(1234.5)


def test_a_rack_scale_system_in_the_model_is_compute_bound_where_trays_are_not():
    """The default calibration on a 72-GPU domain: its network term is 1/18 of the trays' (the same bytes
    per domain over 18 times the NICs)."""
    import pandas as pd

    from planner.model import performance as perf

    base = dict(params=70e9, gpus=576, micro_batch=1, seq_len=4096, fabric="ib", gpu="B200", peak_tflops=2250.0,
                hbm_gib=179.1, hbm_gb_per_s=8000.0, scale_up_gb_per_s=900.0, framework="fsdp")  # fmt: skip
    rack = dict(base, scale_up_gpus=72, scale_out_gbps=28800.0)
    tray = dict(base, scale_up_gpus=4, scale_out_gbps=1600.0)
    out = perf.evaluate(pd.DataFrame([rack, tray]), Calibration.default())
    assert out["bytes_per_domain_per_step"].iloc[0] == pytest.approx(out["bytes_per_domain_per_step"].iloc[1])
    assert out["t_comm_network_s"].iloc[0] == pytest.approx(out["t_comm_network_s"].iloc[1] / 18)


def test_serving_refuses_a_multi_host_system_by_name(run, write):
    gpus, servers = catalog_files(write, NVL72)
    result = run("inference", "--params", "70B", "--latency", "1s", "--gpu", "T-GB", "--catalog", gpus, "--catalog",
                 servers)  # fmt: skip
    assert result.exit_code == 1
    assert "models a machine as one host" in result.stderr and "Rack72 (18 hosts)" in result.stderr


def test_a_cloud_row_describes_its_domain_and_hosts():
    from support import make_catalog

    from planner.catalog.rows import CloudRow
    from planner.tables.rent import offering_shape

    rack = dict(provider="P", instance="rack72", region="r", gpu="B200", gpus=72, hosts=18, scale_up_gpus=72,
                ondemand_usd_per_h=700, internode_gbps=28800, fabric="ib", source="t", date="2026",
                confidence="estimate")  # fmt: skip
    catalog = make_catalog(gpus=[dict(name="B200", vendor="N", peak_bf16_tflops=2250, hbm_gib=179, hbm_gb_per_s=8000,
                                      tdp_w=1000)])  # fmt: skip
    shape = offering_shape(catalog, CloudRow.model_validate(rack))
    assert (shape["gpus_per_node"], shape["scale_up_gpus"], shape["gpus_per_host"]) == (72, 72, 4)
    with pytest.raises(ValueError, match="72 GPUs do not hold whole 48-GPU domains"):
        CloudRow.model_validate(dict(rack, scale_up_gpus=48))


def test_the_terminal_and_the_workbook_say_what_a_rack_scale_node_is(run, write, tmp_path):
    import openpyxl

    catalog_files(write, NVL72)
    book = tmp_path / "plan.xlsx"
    result = run("plan", scenario(write, "Rack72"), "-q", "-o", book)
    assert result.exit_code == 0, result.output
    assert "72 per node: one 72-GPU NVLink domain of 18 hosts" in result.stdout
    assert "each node its own rack (liquid cooled); 8 compute + " in result.stdout
    summary = openpyxl.load_workbook(book)["Summary"]
    cells = [str(c.value) for row in summary.iter_rows() for c in row if c.value is not None]
    assert "576 x T-GB (72 per node: one 72-GPU NVLink domain of 18 hosts)" in cells
    assert any(c.startswith("each node its own rack (liquid cooled); 8 compute") for c in cells)
