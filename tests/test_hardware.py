"""Server-true NIC configurations, PCIe-true NIC rates, racks and cable runs, and the rail-optimised fabric's
effect on usable bandwidth, checked by hand."""

from __future__ import annotations

import pytest
from support import CAL, SERVER, SWITCHES, row_csv, rows_csv, scenario, tiny

from planner.answers import buy
from planner.base.resources import examples_dir
from planner.catalog.load import load_catalog
from planner.hardware import layout, pcie
from planner.inputs.scenario import load_scenario
from planner.model.calibration import Calibration, load_calibration
from planner.tables import buy as candidates


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_effective_pcie_rates_by_hand():
    # GT/s x 16 lanes x 128/130 x 256/280 (TLP efficiency): Gen3 115.2, Gen4 230.5, Gen5 460.9
    assert pcie.effective_gbps(3) == pytest.approx(8 * 16 * 128 / 130 * 256 / 280)
    assert [round(float(pcie.effective_gbps(g)), 1) for g in (3, 4, 5)] == [115.2, 230.5, 460.9]
    assert float(pcie.effective_gbps(5, 8)) == pytest.approx(460.9 / 2, abs=0.1)


@pytest.mark.parametrize(
    ("nic_gbps", "gen", "usable"),
    [
        (400, 5, 400.0),  # ConnectX-7 400G in a Gen5 x16 slot: line rate
        (800, 5, 460.9),  # ConnectX-8 2x400G in a Gen5 host: the slot
        (400, 4, 230.5),  # a 400G NIC in a Gen4 slot
        (100, 3, 100.0),  # DGX-2's EDR NICs in Gen3
    ],
)
def test_usable_nic_rate_is_the_lesser_of_line_and_slot(nic_gbps, gen, usable):
    assert float(pcie.nic_usable_gbps(nic_gbps, gen)) == pytest.approx(usable, abs=0.1)


def test_card_and_slot_train_to_the_lower_generation_and_width():
    assert pcie.link_gen_lanes(6, 16, 5, 16) == (5, 16)  # ConnectX-8 (Gen6) in an H100 host
    assert pcie.link_gen_lanes(5, 16, 5, 8) == (5, 8)
    assert pcie.link_gen_lanes(None, None, 4, 16) == (4, 16)


def test_nic_counts_are_the_servers_real_configurations(catalog):
    assert catalog.server("DGX H100 (reseller 2025-03)").nic_configurations() == [8]  # built in
    assert catalog.server("NVIDIA DGX-2 (list 2018-03)").nic_configurations() == [8]  # 8 for 16 GPUs
    assert catalog.server("Supermicro AS-8125GS-TNHR HGX H100 (street 2024-03)").nic_configurations() == [1, 2, 4, 8]
    server = catalog.server("Supermicro AS-8125GS-TNHR HGX H100 (street 2024-03)")
    assert server.model_copy(update={"nic_counts": [8]}).nic_configurations() == [8]


def test_candidates_use_only_real_nic_counts(catalog):
    sc = load_scenario(examples_dir() / "llama-70b-h100.yaml")
    frame = candidates.build(catalog, sc, Calibration.default()).frame
    multi = frame[frame["tier"] > 0]
    assert set(multi["nics_per_node"]) <= {1, 2, 4, 8}
    dgx = multi[multi["server"].str.startswith("DGX H100")]
    assert set(dgx["nic"]) <= {"CX7-400G-OSFP"} and set(dgx["nics_per_node"]) <= {8}
    # Spectrum-X rows run on Spectrum-X switches with SuperNIC-class NICs only
    sx = frame[frame["fabric"] == "spectrum-x"]
    spectrum_x = {s.sku for s in catalog.items("switches") if s.spectrum_x}
    supernics = {n.sku for n in catalog.items("nics") if "spectrum-x" in n.fabrics}
    assert not sx.empty and set(sx["switch"]) <= spectrum_x and set(sx["nic"]) <= supernics


def test_nodes_per_rack_from_power_and_space():
    g = layout.Geometry()  # 40.8 kW, 48U with 4 reserved
    assert layout.nodes_per_rack(10_200, 8, g) == 4  # DGX H100 (SuperPOD: 4 per 40.8 kW rack)
    assert layout.nodes_per_rack(14_300, 10, g) == 2  # DGX B200 (NVIDIA: 2 per rack at 28.6 kW)
    assert layout.nodes_per_rack(3_500, 3, g) == 11  # DGX-1: power allows 11, space 14
    assert layout.nodes_per_rack(50_000, 8, g) == 0  # one server beyond the rack's power


def test_pdus_n_plus_one():
    # SuperPOD H100 (RA-11333-001 Table 7): 3 x 34.5 kVA PDUs per 40.8 kW compute rack
    assert layout.pdus_per_rack(40_800, 34.5) == 3
    assert layout.pdus_per_rack(40_800, 22) == 3
    assert layout.pdus_per_rack(5_000, 22) == 2


def test_runs_by_placement():
    g = layout.Geometry()
    top = layout.node_run_m(0, 0, "top-of-rack", 8, g)
    assert top == pytest.approx(48 * 0.04445 - 4 * 0.04445 + 0.5)  # bottom node to the rack top, plus slack
    row = layout.node_run_m(0, 2, "middle-of-row", 8, g)
    assert row == pytest.approx(top + 2 * 0.6 + 48 * 0.04445 / 2)
    assert [layout.racks_away(p, 8, "middle-of-row") for p in range(8)] == [1, 2, 3, 4, 1, 2, 3, 4]
    assert [layout.racks_away(p, 3, "end-of-row") for p in range(3)] == [1, 2, 3]


def test_uplink_runs_on_a_floor_of_halls():
    """Leaf-to-spine runs by hand: up (48U = 2.134 m), half a row (8 racks x 0.6 / 2 = 2.4 m), the Manhattan
    distance from the row's network rack to the spine room, down (1.067 m), slack 0.5 m."""
    g = layout.Geometry()  # 32 rows per hall, 2.4 m pitch, 3 m between halls
    base = 48 * 0.04445 * 1.5 + 2.4 + 0.5
    # one hall of 5 rows: the spines stand in the middle row (row 2); rows 0 and 4 are 2 pitches away
    assert layout.row_uplink_runs_m(5, 8, g) == pytest.approx([base + d * 2.4 for d in (2, 1, 0, 1, 2)])
    # 64 rows: 2 halls of 32 rows, each 9 x 0.6 + 3 = 8.4 m wide and 32 x 2.4 + 3 = 79.8 m deep; side by side
    # (16.8 x 79.8 m is nearer square than 8.4 x 159.6 m); the centre at the lower medians: hall 0's row 15
    assert layout.hall_columns(64, 8, g) == 2
    runs = layout.row_uplink_runs_m(64, 8, g)
    assert runs[15] == pytest.approx(base) and runs[32 + 15] == pytest.approx(base + 8.4)
    assert max(runs) == pytest.approx(base + 8.4 + 16 * 2.4)  # hall 1's last row
    # the longest of any floor up to 64 rows (a half-filled second hall pulls the centre off the middle)
    every = max(max(layout.row_uplink_runs_m(r, 8, g)) for r in range(1, 65))
    assert layout.longest_uplink_run_m(64, 8, g) == pytest.approx(every) and every >= max(runs)
    # the longest run never falls as rows are added (a link chosen for a size serves every smaller plan)
    longest = [layout.longest_uplink_run_m(r, 8, g) for r in range(1, 1100)]
    assert all(a <= b for a, b in zip(longest, longest[1:], strict=False))
    # 1,024 rows (131,072 B300 at 2 per rack): within a 500 m single-mode trunk, where one line of rows
    # would run 512 x 2.4 = 1.2 km
    assert 100 < longest[1023] < 300


def test_rail_fabric_keeps_full_bandwidth_within_a_scalable_unit():
    """8 N100 per 8-GPU node on 8 x 100G switches, rail-optimised at 2:1: a leaf puts 5 ports down, so a
    scalable unit is 5 nodes; up to 5 nodes a job never crosses a spine and keeps full node bandwidth."""
    servers = [dict(SERVER, max_nics_per_host=8)]
    switches = [dict(SWITCHES[0], ports=8, port_gbps=100, max_breakout=1)]
    sc = scenario(
        requirement={"gpus": 32},
        constraints__oversubscription=[2.0],
        constraints__topologies=["rail"],
        constraints__fabrics=["ib"],
    )
    frame = candidates.build(tiny(servers=servers, switches=switches), sc, CAL).frame
    rail = frame[(frame["topology"] == "rail") & (frame["oversubscription"] == 2.0)]
    assert not rail.empty
    local = rail[rail["su_local"]]
    assert set(local["su_nodes"]) == {5} and (local["n_hi"] <= 5).all()
    assert (local["node_gbps_eff"] == local["node_gbps"]).all()
    # 8 nodes span two scalable units: rings cross the 2:1 spines, at half the node bandwidth
    frame = candidates.build(
        tiny(servers=servers, switches=switches),
        sc.model_copy(update={"requirement": sc.requirement.model_copy(update={"gpus": 64})}),
        CAL,
    ).frame
    beyond = frame[(frame["topology"] == "rail") & (frame["oversubscription"] == 2.0)]
    assert not beyond.empty and not beyond["su_local"].any()
    assert (beyond["node_gbps_eff"] == beyond["node_gbps"] / 2).all()


def test_a_dearer_twin_nic_is_not_designed():
    """A NIC identical to another in every technical field but dearer (or hungrier) can never be in a
    cheapest plan: the designer drops it, keeps exact ties and any SKU it is told to keep (an installed
    cluster's), so a price list of re-sellers' offers of one card costs one design, not hundreds."""
    from planner.hardware.designs import undominated

    cx7 = load_catalog().nic("CX7-400G-OSFP")
    dearer = cx7.model_copy(update={"sku": "CX7-DEAR", "price_usd": cx7.price_usd + 1})
    hungrier = cx7.model_copy(update={"sku": "CX7-HOT", "power_w": cx7.power_w + 1})
    tie = cx7.model_copy(update={"sku": "CX7-TIE", "vendor": "Reseller"})
    other = cx7.model_copy(update={"sku": "CX7-FAST", "price_usd": cx7.price_usd + 1, "speed_gbps": 800.0})
    kept = [n.sku for n in undominated([cx7, dearer, hungrier, tie, other])]
    assert kept == ["CX7-400G-OSFP", "CX7-TIE", "CX7-FAST"]
    assert [n.sku for n in undominated([cx7, dearer], keep={"cx7-dear"})] == ["CX7-400G-OSFP", "CX7-DEAR"]


def test_a_dearer_twin_switch_is_not_designed_unless_the_scenario_names_only_it(write):
    """The same rule for compute switches: a twin of the MQM9790-NS2F at $4,000 more is never in a cheapest plan;
    a scenario that allows only the dearer twin still gets it."""
    mqm = load_catalog().switch("MQM9790-NS2F")
    twin = {**mqm.model_dump(), "sku": "MQM9790-RESOLD", "vendor": "Reseller", "price_usd": mqm.price_usd + 4000}
    catalog = load_catalog([write("switches.csv", row_csv(twin))])
    scenario = load_scenario(examples_dir() / "llama-70b-h100.yaml")
    switches = set(candidates.part_designs(catalog, scenario).multi["switch"])
    assert "MQM9790-NS2F" in switches and "MQM9790-RESOLD" not in switches
    only = scenario.model_copy(
        update={"constraints": scenario.constraints.model_copy(update={"switches": ["MQM9790-RESOLD"]})}
    )
    assert set(candidates.part_designs(catalog, only).multi["switch"]) == {"MQM9790-RESOLD"}


def test_a_dearer_twin_server_is_not_designed_and_the_plan_is_the_same(write):
    """The rule for servers: a re-seller's offer of the plan's own server at $5,000 more and 100 W more is never
    designed (a dearer, hungrier twin cannot be in a cheapest plan), so the plan is the one without it; a scenario
    that names only the twin still gets it."""
    scenario = load_scenario(examples_dir() / "llama-70b-h100.yaml")
    calibration = load_calibration(None)
    base = buy.run(load_catalog(), scenario, calibration, alternatives=1)
    server = load_catalog().server(base.choice.server)
    twin = {**server.model_dump(), "name": "Resold twin", "vendor": "Reseller"}
    twin |= {"price_usd": server.price_usd + 5000, "power_w": server.power_w + 100}
    catalog = load_catalog([write("servers.csv", row_csv(twin))])
    assert "Resold twin" not in set(candidates.part_designs(catalog, scenario).multi["server"])
    again = buy.run(catalog, scenario, calibration, alternatives=1)
    assert (again.choice.server, again.cost.capex_usd) == (base.choice.server, base.cost.capex_usd)
    only = scenario.model_copy(
        update={"constraints": scenario.constraints.model_copy(update={"servers": ["Resold twin"]})}
    )
    assert set(candidates.part_designs(catalog, only).multi["server"]) == {"Resold twin"}


def test_planning_a_large_catalog_warns_of_no_fragmented_table(write):
    """The design tables are consolidated (base/frames.consolidated) before columns are added to them: without it
    pandas warns "DataFrame is highly fragmented" on stderr at every later insert (seen on every example)."""
    import warnings

    import pandas as pd

    scenario = load_scenario(examples_dir() / "llama-70b-h100.yaml")
    card = load_catalog().nic("CX7-400G-OSFP")
    twins = [{**card.model_dump(), "sku": f"CX7-T{i}", "price_usd": card.price_usd + i} for i in range(1, 4)]
    catalog = load_catalog([write("nics.csv", rows_csv(twins))])
    with warnings.catch_warnings():
        warnings.simplefilter("error", pd.errors.PerformanceWarning)
        plan = buy.run(catalog, scenario, load_calibration(None), alternatives=1)
    assert plan.status == "optimal"


def test_a_server_twin_with_more_host_memory_is_the_same_machine_to_a_training_plan(write):
    """The plan's server re-sold with twice the DRAM, twice the NVMe bays and a root-complex limit, at $5,000
    more: only `planner inference` reads those fields, so to a training plan it is a dearer twin, never designed;
    the same server with less DRAM at $5,000 less is the cheaper twin the plan then buys, for $5,000 a node less."""
    scenario = load_scenario(examples_dir() / "llama-70b-h100.yaml")
    calibration = load_calibration(None)
    base = buy.run(load_catalog(), scenario, calibration, alternatives=1)
    server = load_catalog().server(base.choice.server)
    bigger = {**server.model_dump(), "name": "More DRAM", "price_usd": server.price_usd + 5000}
    bigger |= {"dram_gib": 2 * (server.dram_gib or 1024), "nvme_slots": 2 * server.nvme_slots + 2}
    bigger |= {"root_complex_gb_per_s": 100.0}
    smaller = {**server.model_dump(), "name": "Less DRAM", "price_usd": server.price_usd - 5000}
    smaller |= {"dram_gib": (server.dram_gib or 1024) / 2}
    catalog = load_catalog([write("servers.csv", rows_csv([bigger, smaller]))])
    designed = set(candidates.part_designs(catalog, scenario).multi["server"])
    assert "More DRAM" not in designed and server.name not in designed and "Less DRAM" in designed
    again = buy.run(catalog, scenario, calibration, alternatives=1)
    assert again.choice.server == "Less DRAM" and again.choice.nodes == base.choice.nodes

    def servers(plan) -> tuple[int, float]:  # units bought (spares too) and their extended price
        lines = [b for b in plan.bom if b.category == "servers"]
        return sum(b.quantity for b in lines), sum(b.extended_usd for b in lines)

    (units, usd), (units_again, usd_again) = servers(base), servers(again)
    assert units_again == units and usd - usd_again == pytest.approx(5000 * units)
    assert again.cost.capex_usd < base.cost.capex_usd


def test_a_training_plan_reads_no_inference_only_server_field(write):
    """Guard of tables/buy.INFERENCE_ONLY_FIELDS: every server's DRAM, NVMe bays and root-complex limit changed,
    the training plan is the same to the dollar and the TFLOP (if a training figure ever reads one of them,
    drop it from that list: servers differing in it would no longer be twins)."""
    scenario = load_scenario(examples_dir() / "llama-70b-h100.yaml")
    calibration = load_calibration(None)
    base = buy.run(load_catalog(), scenario, calibration, alternatives=1)
    changed = [
        {**s.model_dump(), "dram_gib": 17.0, "nvme_slots": 1, "root_complex_gb_per_s": 1.0}
        for s in load_catalog().items("servers")
    ]
    again = buy.run(load_catalog([write("servers.csv", rows_csv(changed))]), scenario, calibration, alternatives=1)
    assert again.choice == base.choice and again.cost == base.cost and again.metrics == base.metrics


@pytest.mark.parametrize(
    ("gen", "extra_usd", "designed"),
    [(6, 1, "POLLARA-400"), (6, -1, "NIC-GEN6"), (4, 1, "POLLARA-400"), (4, -1, None)],
)
def test_a_nic_faster_than_every_slot_is_its_slower_twin(write, gen, extra_usd, designed):
    """A NIC runs at the lower PCIe generation of card and slot: in the H100 servers' Gen5 slots a Gen6 Pollara 400
    is the Gen5 card, so only the cheaper of the two is designed; a Gen4 twin is slower there (a Gen4 x16 link
    carries less than 400G), so it is designed only when it is cheaper (designs._slot_undominated)."""
    card = load_catalog().nic("POLLARA-400")
    twin = {**card.model_dump(), "sku": "NIC-GEN6", "pcie_gen": gen, "price_usd": card.price_usd + extra_usd}
    catalog = load_catalog([write("nics.csv", row_csv(twin))])
    scenario = load_scenario(examples_dir() / "llama-70b-h100.yaml")
    configs = candidates.part_designs(catalog, scenario).configs
    nics = set(configs["nic"])
    both = {"POLLARA-400", "NIC-GEN6"}
    assert nics & both == ({designed} if designed else both)


def test_a_slower_nic_twin_is_judged_in_each_servers_own_slots(write):
    """A Gen4 twin of the CX7-400G-OSFP at $1 less: in an A100 server's Gen4 slots both cards run at Gen4, the
    same rate, so only the cheaper twin is designed there; in an H100 server's Gen5 slots the original is faster,
    so both are (the original dearer and faster, the twin cheaper and slower)."""
    card = load_catalog().nic("CX7-400G-OSFP")
    twin = {**card.model_dump(), "sku": "CX7-GEN4", "pcie_gen": 4, "price_usd": card.price_usd - 1}
    catalog = load_catalog([write("nics.csv", row_csv(twin))])
    scenario = load_scenario(examples_dir() / "llama-70b-h100.yaml")
    wide = scenario.model_copy(
        update={"constraints": scenario.constraints.model_copy(update={"gpus": ["A100-80GB", "H100-SXM"]})}
    )
    configs = candidates.part_designs(catalog, wide).configs
    gpu = {s.name: s.gpu for s in catalog.items("servers")}
    by_gpu = {
        g: set(configs.loc[[gpu[s] == g for s in configs["server"]], "nic"]) & {"CX7-400G-OSFP", "CX7-GEN4"}
        for g in ("A100-80GB", "H100-SXM")
    }
    assert by_gpu == {"A100-80GB": {"CX7-GEN4"}, "H100-SXM": {"CX7-400G-OSFP", "CX7-GEN4"}}


def test_narrowed_designs_are_those_of_the_scenario_constrained_to_that_hardware():
    """Designs.narrowed (the batch note's trial selects its hardware's designs instead of designing again): for
    servers, fabrics and switches drawn from the Llama example's designs, the same rows and values as the designs
    of the scenario constrained to them (the shipped catalog's built-in NICs have no twins, so not a row more)."""
    import random

    catalog = load_catalog()
    scenario = load_scenario(examples_dir() / "llama-70b-h100.yaml")
    every = candidates.part_designs(catalog, scenario)
    triples = sorted(set(zip(every.multi["server"], every.multi["fabric"], every.multi["switch"], strict=True)))
    for server, fabric, switch in random.Random(26).sample(triples, 4):
        limits = {"servers": [server], "fabrics": [fabric], "switches": [switch]}
        only = scenario.model_copy(update={"constraints": scenario.constraints.model_copy(update=limits)})
        expected, narrowed = candidates.part_designs(catalog, only), every.narrowed([server], [fabric], [switch])
        for name in ("single", "configs", "multi"):
            a, b = getattr(narrowed, name), getattr(expected, name)
            assert list(a.columns) == list(b.columns) and len(a) == len(b) > 0, (name, server, fabric, switch)
            assert a.astype(str).equals(b.astype(str)), (name, server, fabric, switch)
