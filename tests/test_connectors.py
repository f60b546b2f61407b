"""Ports and connectors as data: a link is valid only if both ends and the medium agree (NVIDIA LinkX rules,
research/fabric FINDINGS section 2), the planner picks real parts per run length, and `planner catalog
validate` rejects a catalog that claims an impossible part."""

from __future__ import annotations

import pytest

from planner.base.resources import catalogs_dir
from planner.catalog import connectors as C
from planner.catalog.load import load_catalog


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def optic(catalog, sku):
    return catalog.rows["optics"][(sku.lower(),)]


def switch(catalog, sku):
    return C.switch_end(catalog.rows["switches"][(sku.lower(),)])


def nic(catalog, sku, server=None):
    return C.nic_end(catalog.nic(sku), catalog.server(server) if server else None)


DGX = "DGX H100 (reseller 2025-03)"


def test_single_port_osfp_modules_do_not_fit_twin_port_switch_cages(catalog):
    # NVIDIA: "Single-port, 400G OSFP or QSFP112 devices cannot be used in twin-port OSFP switch cages"
    problems = C.plug_problems(C.module_plug(optic(catalog, "MMA4Z00-NS400")), switch(catalog, "QM9700"))
    assert any("single-port" in p for p in problems)
    assert not C.plug_problems(C.module_plug(optic(catalog, "MMA4Z00-NS")), switch(catalog, "QM9700"))


def test_dgx_cages_take_flat_twin_port_modules_only(catalog):
    dgx = nic(catalog, "CX7-400G-OSFP", DGX)
    assert (dgx.cage, dgx.ports, dgx.top) == ("OSFP", 2, "flat")
    assert not C.plug_problems(C.module_plug(optic(catalog, "MMA4Z00-NS-FLT")), dgx)
    finned = C.plug_problems(C.module_plug(optic(catalog, "MMA4Z00-NS")), dgx)
    assert any("finned top" in p for p in finned)
    single = C.plug_problems(C.module_plug(optic(catalog, "MMA4Z00-NS400")), dgx)
    assert any("single-port" in p for p in single)


def test_an_osfp_module_does_not_go_in_a_qsfp_dd_switch(catalog):
    problems = C.plug_problems(C.module_plug(optic(catalog, "MMA4Z00-NS")), switch(catalog, "MSN4700-WS2FC"))
    assert problems and "OSFP" in problems[0] and "QSFP-DD" in problems[0]


def test_a_qsfp112_nic_is_not_cabled_with_osfp_legs(catalog):
    problems = C.cable_link_problems(
        optic(catalog, "MCP7Y00-Nxxx"), nic(catalog, "CX8-2x400G"), switch(catalog, "QM9700"), "ib", 2.0
    )
    assert any("QSFP112" in p for p in problems)
    assert not C.cable_link_problems(
        optic(catalog, "MCP7Y10-Nxxx"), nic(catalog, "CX8-2x400G"), switch(catalog, "QM9700"), "ib", 2.0
    )


def test_ndr_pam4_optics_do_not_break_out_to_nrz_edr(catalog):
    edr = nic(catalog, "CX5-EDR100")
    assert not C.node_links(catalog.items("optics"), edr, switch(catalog, "QM9700"), "ib", 2.0)
    # an NDR 400G SR4 engine (100G-PAM4 lanes) and a 100G SR4 module (25G-NRZ lanes) cannot link
    sr4_100 = optic(catalog, "MMA1Z00-NS400").model_copy(
        update={"sku": "SR4-100G", "cage": "QSFP28", "lane_gbps": 25.0, "signalling": "NRZ", "gbps": 100.0}
    )
    problems = C.optics_link_problems(
        optic(catalog, "MMA4Z00-NS"), optic(catalog, "MFP7E10-Nxxx"), sr4_100, edr, switch(catalog, "QM9700"), "ib", 10
    )
    assert any("cannot link" in p for p in problems)


def test_hdr100_split_ports_do_not_carry_edr(catalog):
    problems = C.cable_link_problems(
        optic(catalog, "MCP7H50-H0xxRyy"), nic(catalog, "CX5-EDR100"), switch(catalog, "QM8700"), "ib", 1.5
    )
    assert any("50G-PAM4" in p for p in problems)


def test_hdr_to_an_ndr_switch_needs_the_hdr_splitter_cables(catalog):
    hdr, ndr = nic(catalog, "CX6-HDR200"), switch(catalog, "QM9700")
    link = C.cheapest(C.node_links(catalog.items("optics"), hdr, ndr, "ib", 9.0))
    assert link.text == "AOC MFA7U10-H0xx" and link.endpoints_per_cage == 2


def test_fibres_must_match_the_modules_media(catalog):
    problems = C.optics_link_problems(
        optic(catalog, "MMA4Z00-NS"),
        optic(catalog, "MFP7E30-Nxxx"),  # single-mode fibre between multimode modules
        optic(catalog, "MMA4Z00-NS400"),
        nic(catalog, "CX7-400G-OSFP"),
        switch(catalog, "QM9700"),
        "ib",
        10.0,
    )
    assert any("SMF" in p for p in problems)


@pytest.mark.parametrize(
    ("run_m", "expected"),
    [
        (2.4, "DAC MCP7Y00-Nxxx"),  # in the rack: a passive splitter
        (4.5, "ACC MCA7J60-Nxxx"),  # beyond the 3 m passive copper: the active splitter
        (12.0, "optics MMA4Z00-NS + MFP7E10-Nxxx + MMA4Z00-NS400"),  # across a row: optics
        (45.0, "optics MMA4Z00-NS + MFP7E10-Nxxx + MMA4Z00-NS400"),  # multimode reaches 50 m (MFP7E10-N050)
    ],
)
def test_the_medium_follows_the_run(catalog, run_m, expected):
    link = C.cheapest(
        C.node_links(catalog.items("optics"), nic(catalog, "CX7-400G-OSFP"), switch(catalog, "QM9700"), "ib", run_m)
    )
    assert link.text == expected


def test_cables_and_fibres_come_in_orderable_lengths(catalog):
    assert optic(catalog, "MCP7Y00-Nxxx").length_for(2.4) == (2.5, "MCP7Y00-N02A")
    assert optic(catalog, "MFP7E10-Nxxx").length_for(8.0) == (10.0, "MFP7E10-N010")
    assert optic(catalog, "MCP7Y00-Nxxx").length_for(3.5) is None
    problems = C.cable_link_problems(
        optic(catalog, "MCP7Y00-Nxxx"), nic(catalog, "CX7-400G-OSFP"), switch(catalog, "QM9700"), "ib", 3.5
    )
    assert any("no longer than 3 m" in p for p in problems)


def test_spectrum_x_needs_its_switch_and_a_supernic_class_nic(catalog):
    assert "spectrum-x" in catalog.rows["switches"][("sn5600",)].fabrics
    assert "spectrum-x" not in catalog.rows["switches"][("msn4700-ws2fc",)].fabrics
    assert "spectrum-x" in catalog.nic("CX8-2x400G").fabrics
    assert "spectrum-x" not in catalog.nic("CX7-400G-OSFP").fabrics


def test_switch_links_between_twin_port_cages(catalog):
    qm = switch(catalog, "QM9700")
    by_run = {
        run: C.cheapest(C.switch_links(catalog.items("optics"), qm, "ib", run), unit="uplink").text
        for run in (2, 4, 20)
    }
    assert by_run == {2: "DAC MCP4Y10-Nxxx", 4: "ACC MCA4J80-Nxxx", 20: "optics 2x MMA4Z00-NS + MFP7E10-Nxxx"}
    # a twin-port cable carries two links: half a cable per uplink
    dac = C.cheapest(C.switch_links(catalog.items("optics"), qm, "ib", 2), unit="uplink")
    assert dac.usd("uplink") == optic(catalog, "MCP4Y10-Nxxx").price_usd / 2


# ---------------------------------------------------------------- catalog validate


def test_shipped_catalogs_claim_no_impossible_part():
    assert C.catalog_problems(load_catalog()) == []


@pytest.mark.parametrize(
    ("header", "row", "column", "fix"),
    [
        (
            "sku,name,kind,fabric,cage,lanes,lane_gbps,signalling,gbps,breakout,leg_cage,reach_m,price_usd,power_w",
            "BAD-DAC,QSFP28 DAC at NDR rates,dac,any,QSFP28,4,100,PAM4,400,1,QSFP28,3,100,0",
            "lane_gbps",
            "a QSFP28 cage carries at most 25G per lane",
        ),
        (
            "sku,name,kind,fabric,cage,lanes,lane_gbps,signalling,gbps,breakout,leg_cage,reach_m,lengths,price_usd,power_w",
            "LONG-DAC,a DAC longer than it reaches,dac,any,QSFP56,4,50,PAM4,200,1,QSFP56,2,5:LONG-DAC-5,100,0",
            "lengths",
            "longer than reach_m 2",
        ),
        (
            "sku,name,kind,fabric,cage,lanes,lane_gbps,signalling,gbps,breakout,leg_cage,reach_m,price_usd,power_w",
            "SPLIT8,an 8-leg QSFP28 splitter,dac,any,QSFP28,1,25,NRZ,25,8,QSFP28,3,100,0",
            "breakout",
            "exceed a QSFP28 head's 4",
        ),
    ],
)
def test_validate_rejects_impossible_parts(run, write, header, row, column, fix):
    text = (
        "# planner catalog: optics, schema 1\n" + header + ",source,date,confidence\n" + row + ",test,2026,estimate\n"
    )
    path = write("optics.csv", text)
    result = run("catalog", "validate", path)
    assert result.exit_code == 1
    line = next(line for line in result.stderr.splitlines() if f"column '{column}'" in line)
    assert line.removeprefix("error: ").startswith(f"{path}:3: ") and fix in line  # file:row: column: the fix


def test_validate_rejects_a_server_nic_configuration_it_cannot_have(run, write):
    header = (catalogs_dir() / "servers.csv").read_text().splitlines()[1]
    columns = header.split(",")
    values = {c: "" for c in columns}
    values |= dict(name="Odd", vendor="x", gpu="H100", gpus_per_node="8", price_usd="1", power_w="1", pcie_gen="5")
    values |= dict(pcie_lanes="128", pcie_lanes_per_gpu="16", scale_up_gb_per_s="450", max_nics_per_host="4")
    values |= dict(nic_counts="8", storage_nic="NO-SUCH-NIC", storage_nics="1", source="t", date="2026")
    values |= dict(confidence="estimate")
    path = write("servers.csv", header + "\n" + ",".join(values[c] for c in columns) + "\n")
    result = run("catalog", "validate", path)
    assert result.exit_code == 1
    assert "column 'nic_counts' = '8': more NICs than max_nics_per_host (4) slots" in result.stderr
    assert "column 'storage_nic' = 'NO-SUCH-NIC': unknown NIC" in result.stderr
