"""`planner inference`: the field figures, monotonicity in the machine count, the optimum, explanations."""

from __future__ import annotations

import json

import openpyxl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import make_catalog

from planner.answers import serve as I
from planner.base.errors import InfeasibleError
from planner.catalog.load import load_catalog
from planner.hardware import pcie
from planner.model import streaming
from planner.model.calibration import Calibration
from planner.model.workload import Serving
from planner.tables import serve as serve_table

CAL = Calibration.default()
# A PCIe 4.0, 128-lane, 8-GPU machine whose GPUs hold no weights (1 GiB of HBM), so everything streams.
GPU = dict(name="G", vendor="x", peak_bf16_tflops=312, hbm_gib=1, hbm_gb_per_s=2000, tdp_w=400)
SERVER = dict(
    name="S",
    vendor="x",
    gpu="G",
    gpus_per_node=8,
    price_usd=100000,
    power_w=6000,
    pcie_gen=4,
    pcie_lanes=128,
    pcie_lanes_per_gpu=16,
    scale_up_gb_per_s=300,
    max_nics_per_host=8,
    dram_gib=4096,
    dram_gb_per_s=409.6,
    nvme_slots=8,
)
NIC = dict(sku="N400", name="N400", vendor="x", speed_gbps=400, ports=1, protocols="ib", price_usd=1500, power_w=25)
SWITCH = dict(sku="SW", name="SW", vendor="x", fabric="ib", ports=64, port_gbps=400, price_usd=30000, power_w=1000)
DAC = dict(sku="D", name="D", kind="dac", fabric="any", gbps=400, reach_m=3, price_usd=300, power_w=0)


def machine(catalog=None, nics=0):
    catalog = catalog or tiny()
    return serve_table.Machine(
        catalog.server("S"), catalog.gpu("G"), None, 0, catalog.nic("N400") if nics else None, nics
    )


def tiny():
    return make_catalog(gpus=[GPU], servers=[SERVER], nics=[NIC], switches=[SWITCH], optics=[DAC])


def test_field_figures():
    assert 16 * pcie.lane_gb_per_s(4) == pytest.approx(31.5, abs=0.05)  # PCIe 4.0 x16
    assert serve_table.platform_gb_per_s(tiny().server("S")) == pytest.approx(252, abs=0.5)  # a 128-lane platform
    assert streaming.required_gb_per_s(1e12, 1.0) == pytest.approx(1000)  # 1 TB at 1 s needs 1 TB/s
    # GPT-3's ~300 GB streamed by 8 GPUs over PCIe 4.0 x16: 300 / (8 x 31.5) = 1.19 s, so one machine
    # cannot serve it at 1 s; two machines split width-wise halve the bytes each streams
    one = serve_table.forward_pass(Serving(300e9, 175e9, 96, 12288), machine(), 1, CAL)
    assert one.link_s["PCIe to GPUs"] == pytest.approx(300 / (8 * 31.5), rel=0.01)
    assert one.bottleneck in ("PCIe to GPUs", "platform PCIe") and one.latency_s > 1.0
    two = serve_table.forward_pass(Serving(300e9, 175e9, 96, 12288), machine(nics=1), 2, CAL)
    assert two.link_s["PCIe to GPUs"] == pytest.approx(one.link_s["PCIe to GPUs"] / 2)
    assert two.latency_s < 1.0


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([100e9, 300e9, 1e12, 3e12]), st.integers(1, 15), st.sampled_from([1, 8, 64]))
def test_more_machines_never_lower_bandwidth_and_raise_latency_term(weights, m, batch):
    job = Serving(weights, weights / 2, 96, 12288, batch)
    a = serve_table.forward_pass(job, machine(nics=1), m, CAL)
    b = serve_table.forward_pass(job, machine(nics=1), m + 1, CAL)
    assert b.streaming_gb_per_s >= a.streaming_gb_per_s * (1 - 1e-12)
    assert b.network_s >= a.network_s


def test_the_machine_count_is_optimised():
    result = I.plan(tiny(), Serving(1e12, 500e9, 105, 20480), 1.0, CAL, max_machines=16)
    chosen = result.choice
    feasible = [s.machines for s in result.machine_sweep if s.fits and s.latency_s <= 1.0]
    assert chosen.machines == min(feasible) > 1
    assert chosen.streaming_gb_per_s >= result.required_gb_per_s
    assert chosen.usd == pytest.approx(chosen.machines * (100000 + 1500) + 30000 + 300 * chosen.machines)


def test_infeasible_latency_is_explained():
    with pytest.raises(InfeasibleError, match=r"(?s)needs 1,000,000 GB/s.*the fastest reachable .* limited by"):
        I.plan(tiny(), Serving(1e12, 500e9, 105, 20480), 0.001, CAL)


def test_weights_beyond_memory_need_nvme():
    catalog = make_catalog(
        gpus=[GPU], servers=[dict(SERVER, dram_gib=64, nvme_slots=0)], nics=[NIC], switches=[SWITCH], optics=[DAC]
    )
    with pytest.raises(InfeasibleError):
        I.plan(catalog, Serving(5e12, 2.5e12, 120, 20480), 100.0, CAL, max_machines=2)


# ---------------------------------------------------------------- CLI


def test_cli_175b_at_1s(run, tmp_path):
    result = run("inference", "--params", "175B", "--latency", "1s", "--explain")
    assert result.exit_code == 0, result.output
    for text in ("needs 350 GB/s", "buy", "bound by", "Bandwidth ladder", "PCIe to GPUs", "NVMe", "network"):
        assert text in result.stdout
    data = json.loads(run("inference", "--params", "175B", "--latency", "1s", "--json").stdout)
    assert data["choice"]["latency_s"] <= 1.0 and data["choice"]["usd"] > 0
    assert data["choice"]["streaming_gb_per_s"] >= data["required_gb_per_s"]
    path = tmp_path / "inference.xlsx"
    assert run("inference", "--params", "175B", "--latency", "1s", "-o", path).exit_code == 0
    assert openpyxl.load_workbook(path).sheetnames == ["Inference", "Alternatives"]


def test_cli_streaming_case_names_the_bottleneck(run):
    data = json.loads(run("inference", "--params", "1T", "--latency", "1s", "--gpu", "A100-80GB", "--json").stdout)
    c = data["choice"]
    assert c["machines"] > 1 and c["weights_gb_per_machine"]["dram"] > 0
    assert c["bottleneck"] in ("PCIe to GPUs", "platform PCIe", "DRAM", "NVMe", "network latency")


def test_cli_errors(run):
    assert run("inference", "--latency", "1s").exit_code == 2
    result = run("inference", "--params", "175B", "--latency", "1us")
    assert result.exit_code == 1 and "the fastest reachable" in result.stderr


def test_shipped_servers_carry_the_inference_columns():
    for server in load_catalog().items("servers"):
        assert server.dram_gib and server.dram_gb_per_s, server.name


def test_the_price_is_given_line_by_line():
    """Servers, the NICs their price leaves out, and the switch with its links, summing to the total (the tiny
    catalog's prices: $100,000 a server, $1,500 a NIC, a $30,000 switch and $300 of links per machine)."""
    chosen = I.plan(tiny(), Serving(1e12, 500e9, 105, 20480), 1.0, CAL, max_machines=16).choice
    m = chosen.machines
    by_item = {line.item.split(":")[0]: line for line in chosen.lines}
    assert [(line.quantity, line.unit_usd) for line in chosen.lines[:2]] == [(m, 100000), (m, 1500)]
    assert by_item["network"].extended_usd == pytest.approx(30000 + 300 * m)
    assert sum(line.extended_usd for line in chosen.lines) == pytest.approx(chosen.usd)
