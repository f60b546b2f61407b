"""The December-2026 catalog's fields (precision peaks, cooling, NVLink domain, roadmap status, port modes,
CDUs, committed cloud prices): each bad cell is reported as file:row:column with the fix, like every other."""

from __future__ import annotations

import pytest

from planner.base.errors import CatalogError
from planner.catalog.load import load_catalog

GPU_HEADER = (
    "name,vendor,architecture,peak_bf16_tflops,peak_fp8_tflops,peak_fp4_tflops,hbm_gib,hbm_gb_per_s,tdp_w,"
    "source,date,confidence\n"
)
GPU_ROW = "X1,Acme,blackwell,2500,5000,10000,186,8000,1200,Acme datasheet,2026-01,solid\n"

SERVER_HEADER = (
    "name,vendor,gpu,gpus_per_node,scale_up_gpus,hosts,price_usd,power_w,pcie_gen,pcie_lanes,pcie_lanes_per_gpu,"
    "scale_up_gb_per_s,max_nics_per_host,racks,cooling,liquid_fraction,status,source,date,confidence\n"
)
SERVER_ROW = "Rack72,Acme,H100,72,72,18,3000000,132000,5,128,16,900,4,1,hybrid,0.85,available,quote,2026,solid\n"

NIC_HEADER = (
    "sku,name,vendor,mode_of,speed_gbps,ports,ports_per_cage,protocols,cage,lanes,lane_gbps,signalling,top,"
    "price_usd,power_w,source,date,confidence\n"
)
CARD = "CARD,Card 800G,Acme,,800,1,1,ib,OSFP,4,200,PAM4,flat,1800,50,quote,2026,solid\n"
MODE = "CARD-ETH,Card 2x400GbE,Acme,CARD,800,2,2,roce,OSFP,4,100,PAM4,flat,,,quote,2026,solid\n"


def problems_of(*paths) -> list[str]:
    with pytest.raises(CatalogError) as info:
        load_catalog(paths)
    return [str(p) for p in info.value.problems]


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        (GPU_ROW.replace(",5000,10000,", ",2000,10000,"), "column 'peak_fp8_tflops' = '2000': 2000 is below"),
        (GPU_ROW.replace(",10000,", ",4000,"), "column 'peak_fp4_tflops' = '4000': 4000 is below the wider"),
        (GPU_ROW.replace("blackwell", "kepler"), "column 'architecture' = 'kepler': must be one of"),
    ],
)
def test_gpu_peaks_and_architecture(write, row, expected):
    path = write("gpus.csv", GPU_HEADER + row)
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:2: ") and expected in problem


def test_a_gpu_row_without_fp8_or_fp4_is_valid(write):
    path = write("gpus.csv", GPU_HEADER + GPU_ROW.replace(",5000,10000,", ",,,"))
    gpu = load_catalog([path]).gpu("X1")
    assert (gpu.peak_fp8_tflops, gpu.peak_fp4_tflops, gpu.architecture) == (None, None, "blackwell")


@pytest.mark.parametrize(
    ("row", "column", "expected"),
    [
        (SERVER_ROW.replace("hybrid,0.85", "hybrid,"), "liquid_fraction", "hybrid cooling: give the share"),
        (SERVER_ROW.replace("hybrid,0.85", "air,0.5"), "liquid_fraction", "sends no heat to liquid"),
        (SERVER_ROW.replace("hybrid,0.85", "liquid,0"), "liquid_fraction", "give its share above 0"),
        (SERVER_ROW.replace("0.85", "1.5"), "liquid_fraction", "must be at most 1"),
        (SERVER_ROW.replace("hybrid", "immersion"), "cooling", "must be one of"),
        (SERVER_ROW.replace("available", "rumoured"), "status", "must be one of"),
        (SERVER_ROW.replace(",72,72,18,", ",72,48,18,"), "scale_up_gpus", "do not hold whole 48-GPU domains"),
        (SERVER_ROW.replace(",72,72,18,", ",72,72,7,"), "hosts", "72 GPUs do not split into 7 equal hosts"),
    ],
)
def test_server_cooling_status_and_domain(write, row, column, expected):
    path = write("servers.csv", SERVER_HEADER + row)
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:2: column '{column}'") and expected in problem


def test_liquid_share_follows_cooling(write):
    rows = SERVER_ROW + SERVER_ROW.replace("Rack72", "Liquid").replace("hybrid,0.85", "liquid,")
    rows += SERVER_ROW.replace("Rack72", "Air").replace("hybrid,0.85", "air,")
    catalog = load_catalog([write("servers.csv", SERVER_HEADER + rows)])
    shares = {n: catalog.server(n).liquid_share for n in ("Rack72", "Liquid", "Air")}
    assert shares == {"Rack72": 0.85, "Liquid": 1.0, "Air": 0.0}


def test_a_port_mode_takes_its_cards_price_and_power(write):
    catalog = load_catalog([write("nics.csv", NIC_HEADER + CARD + MODE)])
    mode = catalog.nic("CARD-ETH")
    assert (mode.price_usd, mode.power_w, mode.card) == (1800, 50, "CARD")
    assert [n.sku for n in catalog.port_modes("CARD-ETH")] == ["CARD", "CARD-ETH"]


@pytest.mark.parametrize(
    ("rows", "column", "expected"),
    [
        (CARD + MODE.replace(",,,quote", ",1700,,quote"), "price_usd", "a port mode takes the price and power"),
        (CARD.replace(",1800,", ",,"), "price_usd", "is empty; this column is required"),
        (CARD + MODE.replace(",CARD,", ",NOPE,"), "mode_of", "unknown NIC 'NOPE'"),
        (CARD + MODE + MODE.replace("CARD-ETH,", "CARD-ETH2,").replace(",CARD,", ",CARD-ETH,"), "mode_of", "itself"),
        (CARD.replace(",1,1,ib,", ",1,2,ib,"), "ports_per_cage", "1 ports do not fill whole 2-port cages"),
    ],
)
def test_port_mode_problems(write, rows, column, expected):
    path = write("nics.csv", NIC_HEADER + rows)
    found = problems_of(path)
    assert any(f"column '{column}'" in p and expected in p for p in found), found


def test_a_cdu_needs_its_capacity(write):
    header = "sku,name,vendor,kind,capacity_kw,price_usd,source,date,confidence\n"
    path = write("infra.csv", header + "CDU1,In-row CDU,Acme,cdu,,90000,quote,2026,solid\n")
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:2: column 'capacity_kw'") and "needs its rated capacity" in problem


def test_committed_cloud_prices_are_checked_like_any_price(write):
    header = "provider,instance,region,gpu,gpus,ondemand_usd_per_h,committed_1y_usd_per_h,fabric,source,date,"
    header += "confidence\n"
    path = write("cloud.csv", header + "Acme,x8,here,H100,8,40,-3,ib,price page,2026-10,medium\n")
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:2: column 'committed_1y_usd_per_h'") and "must be at least 0" in problem
