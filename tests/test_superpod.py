"""NVIDIA DGX SuperPOD with DGX H100, reference architecture RA-11333-001 V11 (2023-09-22), reproduced: the
planner's rail-optimised fabric of QM9700 switches for DGX H100 nodes has the RA's switch, cable and
transceiver counts.

  Table 3 "Larger SuperPOD component counts" (idealised, 32 nodes per scalable unit) and the DGX SuperPOD
  B200 RA (RA-11334-001 V08) for 2 SU; Table 4 "Compute fabric component count" for 1 SU; Table 8 for the
  4 SU transceivers (1,536 switch-side twin-port MMA4Z00-NS, 508 DGX-side MMA4Z00-NS-FLT for 127 nodes).
  Node-to-leaf and leaf-to-spine cables are one fibre per 400G link; switch transceivers are every used
  leaf cage plus spine ports / 2; DGX transceivers are 4 per node (research/fabric superpod_h100_counts.csv).
"""

from __future__ import annotations

import re

import pandas as pd
import pytest
from support import bom_parts

from planner.answers import buy as purchase
from planner.base.errors import InfeasibleError
from planner.base.resources import examples_dir
from planner.catalog.load import load_catalog
from planner.inputs.scenario import Reliability, Scenario, load_scenario
from planner.model import reliability
from planner.model.calibration import Calibration

DGX = "DGX H100 (reseller 2025-03)"


SMALL = {"params": "7B", "seq_len": 2048, "micro_batches": [1]}


def superpod(nodes: int, *, server: str = DGX, switch: str = "QM9700", ufm_slot: bool = False, workload=SMALL):
    """The plan for `nodes` nodes; ufm_slot False sizes the reference's idealised tables (full SUs)."""
    scenario = Scenario.model_validate(
        {
            "workload": workload,
            "requirement": {"gpus": 8 * nodes},
            "target_tflops": 1,
            "constraints": {"servers": [server], "switches": [switch], "fabrics": ["ib"], "max_nodes": 16384},
            "include": {"subnet_manager_slot": ufm_slot},
        }
    )
    return purchase.run(load_catalog(), scenario, Calibration.default(), alternatives=0)


def compute(plan, sku_prefix: str) -> int:
    return sum(b.quantity for b in plan.bom if b.section == "compute fabric" and b.sku.startswith(sku_prefix))


@pytest.mark.parametrize(
    ("nodes", "leaf", "spine", "node_leaf", "leaf_spine", "switch_xcvr", "node_xcvr"),
    [
        (32, 8, 4, 256, 256, 384, 128),  # 1 SU (Table 3, idealised: the UFM's slot not held)
        (64, 16, 8, 512, 512, 768, 256),  # 2 SU (B200 RA Table 3, identical fabric)
        (127, 32, 16, 1016, 1024, 1536, 508),  # 4 SU as built (Table 7; Table 8: 1,536 and 508 transceivers)
        (128, 32, 16, 1024, 1024, 1536, 512),  # 4 SU idealised (Table 3)
        (256, 64, 32, 2048, 2048, 3072, 1024),  # 8 SU (Table 3)
    ],
)
def test_superpod_h100_counts(nodes, leaf, spine, node_leaf, leaf_spine, switch_xcvr, node_xcvr):
    plan = superpod(nodes)
    c = plan.choice
    assert (c.nodes, c.switch, c.topology, c.nics_per_node) == (nodes, "QM9700", "rail", 8)
    assert c.switches_by_tier == {"leaf": leaf, "spine": spine}
    links = {line.segment: line for line in plan.links if line.section == "compute fabric"}
    assert (links["node-leaf"].count, links["switch-switch"].count) == (node_leaf, leaf_spine)
    # "All networking components are multi-mode fiber" (Table 8): one MFP7E10 fibre per 400G link
    assert compute(plan, "MFP7E10-N") == node_leaf + leaf_spine
    assert compute(plan, "MMA4Z00-NS") - compute(plan, "MMA4Z00-NS-FLT") == switch_xcvr
    assert compute(plan, "MMA4Z00-NS-FLT") == node_xcvr
    # the managed QM9700 runs its own subnet manager: no UFM appliance is priced for the compute fabric
    assert not any(b.sku.startswith("UFM") for b in plan.bom if b.section == "subnet manager")


def test_superpod_512_nodes_is_three_tier():
    """Table 3, 16 SU: 128 leaf, 128 spine, 64 core; 4,096 cables per layer."""
    plan = superpod(512)
    assert plan.choice.switches_by_tier == {"leaf": 128, "spine": 128, "core": 64}
    links = {line.segment: line for line in plan.links if line.section == "compute fabric"}
    assert (links["node-leaf"].count, links["switch-switch"].count) == (4096, 4096 + 4096)


def test_superpod_racks_follow_rack_power():
    """RA-11333-001: "power consumption per rack exceeds 40 kW": 4 DGX H100 (10.2 kW) per 40.8 kW rack;
    32 compute racks for 4 SU (Table 7: 38 racks with 6 for management and networking)."""
    plan = superpod(128)
    assert plan.layout["nodes_per_rack"] == 4 and plan.layout["compute_racks"] == 32
    assert plan.layout["leaf_placement"] == "middle-of-row"


@pytest.mark.parametrize(("nodes", "sus"), [(31, 1), (32, 2), (127, 4), (128, 5), (1023, 32), (2047, 64)])
def test_ufm_slot_held_as_the_reference_builds(nodes, sus):
    """By default an InfiniBand fabric holds one node's leaf ports for the UFM (RA-11333-001 Table 7: 127
    nodes in 4 SUs; the SuperPOD FAQ: "31 to 1,023 nodes"): a full SU count of nodes starts one more SU."""
    plan = superpod(nodes, ufm_slot=True)
    assert plan.choice.nodes == nodes
    assert plan.choice.switches_by_tier["leaf"] == 8 * sus


# DGX SuperPOD B200 RA (RA-11334-001), "Larger DGX SuperPOD component counts": SUs of 32 DGX B200 on QM9700
B200_TABLE = [  # SUs, nodes, leaf, spine, core, node-leaf, leaf-spine, spine-core cables
    (2, 64, 16, 8, 0, 512, 512, 0),
    (4, 128, 32, 16, 0, 1024, 1024, 0),
    (8, 256, 64, 32, 0, 2048, 2048, 0),
    (16, 512, 128, 128, 64, 4096, 4096, 4096),
    (32, 1024, 256, 256, 128, 8192, 8192, 8192),
    (64, 2048, 512, 512, 256, 16384, 16384, 16384),
]


@pytest.mark.parametrize(("sus", "nodes", "leaf", "spine", "core", "node_leaf", "leaf_spine", "spine_core"), B200_TABLE)
def test_superpod_b200_table(sus, nodes, leaf, spine, core, node_leaf, leaf_spine, spine_core):
    """Every published size of the B200 reference, up to 64 SUs (16,384 GPUs), with the shipped catalogs."""
    plan = superpod(nodes, server="DGX B200 (Delta list EU 2024-12)")
    c = plan.choice
    assert (c.nodes, c.switch, c.topology, c.nics_per_node) == (nodes, "QM9700", "rail", 8)
    expected = {"leaf": leaf, "spine": spine} | ({"core": core} if core else {})
    assert c.switches_by_tier == expected
    links = {line.segment: line for line in plan.links if line.section == "compute fabric"}
    assert (links["node-leaf"].count, links["switch-switch"].count) == (node_leaf, leaf_spine + spine_core)


B300 = "DGX B300 (press list 2026-06)"
# DGX SuperPOD B300 XDR RA, Table 3 "Example Compute Fabric Components": SUs of 72 DGX B300 on Quantum-X800 Q3400
B300_XDR_TABLE = [  # SUs, nodes, leaf, spine, node-leaf and leaf-spine cables
    (1, 72, 8, 4, 576, 576),
    (2, 144, 16, 8, 1152, 1152),
    (4, 288, 32, 18, 2304, 2304),
    (8, 576, 64, 36, 4608, 4608),
    (18, 1296, 144, 72, 10368, 10368),
]


@pytest.mark.parametrize(("sus", "nodes", "leaf", "spine", "node_leaf", "leaf_spine"), B300_XDR_TABLE)
def test_superpod_b300_xdr_table(sus, nodes, leaf, spine, node_leaf, leaf_spine):
    """Every published size of the B300 XDR reference with the shipped catalogs: 72-node SUs of 144-port
    leaves, and spines that stripe each leaf's 72 uplinks evenly (18 at 4 SUs, not 16)."""
    plan = superpod(nodes, server=B300, switch="Q3400-RA")
    c = plan.choice
    assert (c.nodes, c.switch, c.topology, c.nics_per_node) == (nodes, "Q3400-RA", "rail", 8)
    assert c.switches_by_tier == {"leaf": leaf, "spine": spine}
    links = {line.segment: line for line in plan.links if line.section == "compute fabric"}
    assert (links["node-leaf"].count, links["switch-switch"].count) == (node_leaf, leaf_spine)


def test_131072_gpus_plan_with_the_shipped_catalogs():
    """16,384 DGX B300 on Quantum-X800, as built (the UFM's slot held): ceil(16,385 / 72) = 228 SUs of 8
    rail leaves; each leaf's 72 uplinks into 72-down aggregation switches (1,824), whose 72 uplinks each go
    to 144-port cores (1,824 x 72 / 144 = 912). The floor stands in halls; every switch-to-switch run is
    within the catalogued single-mode reach."""
    workload = {"model": "Llama-3.1-405B", "seq_len": 8192, "micro_batches": [1], "framework": "megatron"}
    plan = superpod(16384, server=B300, switch="Q3400-RA", ufm_slot=True, workload=workload)
    assert plan.choice.gpus == 131072 and plan.choice.tier == 3
    assert plan.choice.switches_by_tier == {"leaf": 1824, "spine": 1824, "core": 912}
    links = {line.segment: line for line in plan.links if line.section == "compute fabric"}
    assert links["node-leaf"].count == 131072 and links["switch-switch"].count == 1824 * 72 * 2
    assert 100 < plan.layout["longest_switch_run_m"] <= 500


def test_a_floor_beyond_the_optics_names_the_run_and_the_link():
    """2,048 DGX B200 on rows 40 m apart: a hall of 32 rows is 1.28 km deep, so the farthest leaf is more than
    the 500 m single-mode trunk's reach from the spine room; the message names the switch, the run, the
    longest link and what it serves, and what to change."""
    scenario = Scenario.model_validate(
        {
            "workload": SMALL,
            "requirement": {"gpus": 16384},
            "target_tflops": 1,
            "constraints": {"servers": ["DGX B200 (Delta list EU 2024-12)"], "switches": ["QM9700"], "fabrics": ["ib"]},
            "layout": {"row_pitch_m": 40},
        }
    )
    with pytest.raises(InfeasibleError) as caught:
        purchase.run(load_catalog(), scenario, Calibration.default(), alternatives=0)
    text = str(caught.value)
    run_m = float(re.search(r"the leaf-to-spine run of 2,048 nodes is ([\d,]+) m", text)[1].replace(",", ""))
    assert 500 < run_m < 2000 and text.startswith("no plan meets") and "QM9700: " in text
    assert "OS2-MPO12-8F-500M" in text and "serves runs up to" in text and "single-mode FR4" in text


def test_llama_example_leaves_carry_no_unused_uplinks():
    """The Llama example as a leaf-spine (#28): 128 nodes of 8 x 400G NICs, 4 per rack, on 128-port leaves on
    top of each rack: a leaf serves 32 NIC ports and gets 32 uplinks (not its 64 free ports): 32 leaves,
    1,024 uplinks, 8 spines of 128 ports (each leaf's 32 uplinks stripe 4 to a spine)."""
    scenario = load_scenario(examples_dir() / "llama-70b-h100.yaml", {"constraints.topologies": ["leaf-spine"]})
    plan = purchase.run(load_catalog(), scenario, Calibration.default(), alternatives=0)
    c = plan.choice
    assert (c.nodes, c.nics_per_node, c.topology, c.placement) == (128, 8, "leaf-spine", "top-of-rack")
    links = {line.segment: line for line in plan.links if line.section == "compute fabric"}
    leaves = c.switches_by_tier["leaf"]
    assert leaves == 32 and links["node-leaf"].count == 1024
    assert links["switch-switch"].count == links["node-leaf"].count  # 1:1, no uplink without a used port
    assert c.switches_by_tier["spine"] == 8


def test_spectrum_x_on_a_dgx_h100_names_the_supernic():
    """1,024 GPUs of DGX H100 on Spectrum-X: the DGX's built-in ConnectX-7 is not a SuperNIC, so no node can
    join the fabric; the message says so and names the NICs that run it (was: '1024 GPUs is not a whole
    number of nodes of [8] GPUs')."""
    scenario = Scenario.model_validate(
        {
            "workload": SMALL,
            "requirement": {"gpus": 1024},
            "target_tflops": 1,
            "constraints": {"servers": [DGX], "fabrics": ["spectrum-x"]},
        }
    )
    with pytest.raises(InfeasibleError) as caught:
        purchase.run(load_catalog(), scenario, Calibration.default(), alternatives=0)
    text = str(caught.value)
    assert "built-in NICs (CX7-400G-OSFP) run ib, roce, not spectrum-x" in text
    assert "Spectrum-X needs a SuperNIC" in text and "BF3-B3140H" in text and "whole number" not in text


def test_why_names_radix_tiers_and_failure_domains():
    """The Llama example (128 nodes, 8 x 400G, rail-optimised on 128-port N9600 leaves, 64 down): two tiers hold
    128 x 64 / 8 = 1,024 nodes; a leaf is one rail of a 64-node SU; 8 spines each carry 1/8 of the uplinks."""
    plan = purchase.run(load_catalog(), load_scenario(examples_dir() / "llama-70b-h100.yaml"), Calibration.default())
    why = " ".join(plan.why)
    assert "N9600-64OD has 128 ports: two tiers hold up to 1,024 of these nodes" in why
    assert "failure domains: a leaf: one of 8 rails of 64 nodes" in why and "a spine: 1/8 of" in why


def test_equal_cost_ties_take_the_layout_rule():
    """Micro-batch 1 data-parallel and micro-batch 2 TP 2 cost the same on the Llama example's hardware; the
    solver may pick either, the plan takes the simplest within 3% of the fastest, with or without a budget."""
    base = examples_dir() / "llama-70b-h100.yaml"
    plans = [
        purchase.run(load_catalog(), load_scenario(base, over), Calibration.default(), alternatives=0)
        for over in ({}, {"constraints.budget_usd": 48e6})
    ]
    picks = {(p.choice.micro_batch, p.choice.layout, p.cost.capex_usd) for p in plans}
    assert picks == {(1, "data parallel over DP 1024", plans[0].cost.capex_usd)}


def test_the_radix_decision_is_said():
    """512 nodes of 8 x 400G: a 64-port Quantum-2 leaf-spine holds 64 x 32 / 8 = 256 nodes (255 with the UFM
    slot), so InfiniBand needs three tiers; a 128-port Tomahawk 5 / Spectrum-4 holds 128 x 64 / 8 = 1,024 in two.
    The plan says the tier difference and the switches' ports."""
    over = {"requirement": {"gpus": 4096}, "target_tflops": 100}
    plan = purchase.run(
        load_catalog(), load_scenario(examples_dir() / "llama-70b-h100.yaml", over), Calibration.default()
    )
    ib = next(s for s in plan.per_fabric if s.choice.fabric == "ib")
    assert plan.choice.tier == 2 and ib.choice.tier == 3
    tiers = [w for w in plan.why if w.startswith("tiers:")]
    assert (
        len(tiers) >= 1 and "(64 ports) needs 3 for 512" in tiers[0] and "(128 ports) builds 512 nodes in 2" in tiers[0]
    )


LLAMA3_UNEXPECTED = 419  # Grattafiori et al., arXiv 2407.21783, Table 5: unexpected interruptions in 54 days


def test_llama3_interruptions_from_its_bill_of_materials():
    """Held out (no failure rate was taken from it): Llama 3's 16,384 H100 in 2,048 8-GPU hosts, a NIC and link
    per GPU on a three-tier fabric of 64-port switches. Its bill of materials at the sourced rates predicts, per
    day (docs/research/reliability section 4, by hand): GPUs 5.734, hosts 0.410, NICs 0.328, NIC links 0.410,
    32,768 fabric links 0.246, 512 leaves 0.009, 768 spines and cores 0.007, storage clients 0.205 = 7.347 of
    hardware, / 0.8 for software = 9.18 a day: 496 in 54 days against the 419 reported (+18%)."""
    plan = superpod(2048)
    parts = bom_parts(plan)
    assert (parts.gpus, parts.hosts, parts.nics, parts.node_links) == (16384, 2048, 16384, 16384)
    assert (parts.fabric_links, parts.leaves, parts.upper_switches) == (32768, 512, 768)
    per_day = sum(parts.events_per_day(Reliability().failure_rates).values())
    assert per_day * 54 == pytest.approx(495.9, abs=0.5)
    assert abs(per_day * 54 / LLAMA3_UNEXPECTED - 1) <= 0.25


def test_a_larger_cluster_loses_more_goodput():
    """8x the GPUs (131,072 against 16,384 DGX B300 on Quantum-X800): about 8x the interruptions a day (a third
    switch tier adds its links), so the same 405B checkpoint (Young/Daly) costs more of the time: goodput falls."""
    workload = {"model": "Llama-3.1-405B", "seq_len": 8192, "micro_batches": [1], "framework": "megatron"}
    small = bom_parts(superpod(2048, server=B300, switch="Q3400-RA", ufm_slot=True, workload=workload))
    large = bom_parts(superpod(16384, server=B300, switch="Q3400-RA", ufm_slot=True, workload=workload))
    rates = Reliability().failure_rates
    ratio = sum(large.events_per_day(rates).values()) / sum(small.events_per_day(rates).values())
    assert 7.5 < ratio < 8.5
    g_small = reliability.goodput(Reliability(), 405e9, 2048, small)
    g_large = reliability.goodput(Reliability(), 405e9, 16384, large)
    assert g_large.fraction < g_small.fraction - 0.005
    assert g_large.interruptions_per_day == pytest.approx(g_small.interruptions_per_day * ratio)


def test_spare_nodes_cover_the_repairs_of_rack_scale_systems():
    """15 GB300 NVL72 racks: 2% of 15 is no rack, but a rack's 72 GPUs, 18 hosts and 72 NICs fail 0.03024 times a
    day, out 4 h each (a tray swap): Poisson(15 x 0.03024 x 4/24 = 0.0756) racks under repair, P(X > 0) = 7.3%
    exceeds 1%, P(X > 1) = 0.27% does not: one spare rack."""
    scenario = Scenario.model_validate(
        {
            "workload": SMALL,
            "requirement": {"gpus": 15 * 72},
            "target_tflops": 1,
            "constraints": {"servers": ["GB300 NVL72 (analyst estimate 2026-06)"], "fabrics": ["ib"]},
        }
    )
    plan = purchase.run(load_catalog(), scenario, Calibration.default(), alternatives=0)
    spares = sum(b.quantity for b in plan.bom if b.section == "spares" and b.category == "servers")
    assert (plan.choice.nodes, spares) == (15, 1)
    assert any("1 spare node, to cover the nodes under repair at once 99%" in line for line in plan.why)


def fabric_plan(nodes: int, server: str, switch: str, fabric: str, **constraints):
    scenario = Scenario.model_validate(
        {
            "workload": SMALL,
            "requirement": {"gpus": 8 * nodes},
            "target_tflops": 1,
            "constraints": {"servers": [server], "switches": [switch], "fabrics": [fabric], "max_nodes": 16384}
            | constraints,
        }
    )
    return purchase.run(load_catalog(), scenario, Calibration.default(), alternatives=0)


# DGX SuperPOD B300 on Spectrum-X (RA-11337-001, Table 3 "Larger DGX SuperPOD component counts"): 64-node SUs,
# twin-plane. NVIDIA counts cables in 800G units (one per NIC; leaf-spine bandwidth / 800G); each CX-8 runs
# 2 x 400GbE, one port per plane, so the planner's 400G links are twice the published counts.
B300_TWIN_PLANE_TABLE = [(1, 16, 8, 512, 512), (2, 32, 16, 1024, 1024), (4, 64, 32, 2048, 2048)]
B300_TWIN_PLANE_TABLE += [(8, 128, 64, 4096, 4096), (16, 256, 128, 8192, 8192)]


@pytest.mark.parametrize(("sus", "leaf", "spine", "node_leaf_800g", "leaf_spine_800g"), B300_TWIN_PLANE_TABLE)
def test_superpod_b300_spectrum_x_twin_plane_table(sus, leaf, spine, node_leaf_800g, leaf_spine_800g):
    """Port p of every NIC to plane p: a plane's rail leaf (SN5600, 64 x 400G down) serves one port of each of
    64 nodes; each plane's 4 spines per SU stripe its own leaves' 64 uplinks; nothing is shared between planes."""
    plan = fabric_plan(64 * sus, B300, "SN5600", "spectrum-x", planes=[2])
    c = plan.choice
    assert (c.nodes, c.tier, c.topology, c.nics_per_node) == (64 * sus, 2, "rail", 8)
    assert "64-node scalable units, 2 planes" in c.fabric_text
    assert c.switches_by_tier == {"leaf": leaf, "spine": spine}
    links = {line.segment: line for line in plan.links if line.section == "compute fabric"}
    assert (links["node-leaf"].count, links["switch-switch"].count) == (2 * node_leaf_800g, 2 * leaf_spine_800g)


def test_twin_plane_is_chosen_only_where_it_is_cheaper():
    """With one plane or two allowed: at 8 SUs (512 nodes) both are two tiers of the same switches and links, so
    the single plane is taken (a second plane only where it is cheaper); at 1,024 nodes one plane of 16 ports per
    node needs a third tier (two tiers hold 512) and the twin-plane stays at two, the published design."""
    at_512 = fabric_plan(512, B300, "SN5600", "spectrum-x")
    assert "2 planes" not in at_512.choice.fabric_text and at_512.choice.tier == 2
    one = fabric_plan(1024, B300, "SN5600", "spectrum-x", planes=[1])
    both = fabric_plan(1024, B300, "SN5600", "spectrum-x")
    assert one.choice.tier == 3 and both.choice.tier == 2 and "2 planes" in both.choice.fabric_text
    assert both.choice.switches_by_tier == {"leaf": 256, "spine": 128}
    assert both.cost.capex_usd < one.cost.capex_usd  # same GPUs, NICs and throughput
    assert both.metrics.tokens_per_s == pytest.approx(one.metrics.tokens_per_s)
    assert any("2 independent fabrics" in line for line in both.why)


def test_a_second_plane_takes_links_and_switches_out_of_the_interruptions():
    """The twin-plane's links and switches back each other up (a failure halves that rail's bandwidth): the
    interruptions are the GPUs', hosts', NICs', storage clients' and software's only."""
    from planner.tables import buy as cand

    both = fabric_plan(1024, B300, "SN5600", "spectrum-x")
    row = {"topology": "rail", "planes": 2}
    assert bool(cand.redundant_planes(row)) and not bool(cand.redundant_planes({"topology": "rail-only", "planes": 8}))
    parts = bom_parts(both)
    twin = reliability.Parts(**{**parts.__dict__, "redundant_planes": True})
    events = twin.events_per_day(Reliability().failure_rates)
    assert all(events[k] == 0 for k in ("node_link", "fabric_link", "leaf", "upper_switch"))
    assert events["nic"] == pytest.approx(1024 * 8 * 2e-5)


def test_rail_only_drops_the_spines():
    """Rail-only (Wang et al., arXiv 2307.12169): 128 DGX H100 on 128 x 400G switches: one switch per rail, 8
    switches, 1,024 node links and no spine, against the rail-optimised 2 SUs of 8 leaves and 8 spines with 1,024
    uplinks: the compute fabric costs about half (the paper: 38-77% less), at the same throughput."""
    rail_only = fabric_plan(128, DGX, "N9600-64OD", "roce", topologies=["rail", "rail-only"])
    rail = fabric_plan(128, DGX, "N9600-64OD", "roce", topologies=["rail"])
    assert rail_only.choice.topology == "rail-only" and rail_only.choice.switches_by_tier == {"leaf": 8}
    links = {line.segment: line.count for line in rail_only.links if line.section == "compute fabric"}
    assert links == {"node-leaf": 1024}
    assert rail.choice.switches_by_tier == {"leaf": 16, "spine": 8}
    saved = 1 - rail_only.cost.by_section["compute fabric"] / rail.cost.by_section["compute fabric"]
    assert 0.38 <= saved <= 0.77
    assert rail_only.metrics.tokens_per_s == pytest.approx(rail.metrics.tokens_per_s)
    assert any("no switch joins two rails" in line for line in rail_only.why)


def test_rail_only_is_legal_only_for_same_rank_traffic():
    """Tensor, context and expert parallelism must stay inside the NVLink domain on a rail-only fabric: an
    expert-parallel group across nodes would need traffic between rails, which no switch carries."""
    from planner.tables import buy as cand

    rows = pd.DataFrame(
        {"rail_only": [True, True, True, False], "tp": [8, 2, 4, 4], "cp": [1, 1, 1, 1], "ep": [1, 4, 4, 4]}
    ).assign(scale_up_gpus=8)
    assert list(cand._rail_only_legal(rows)) == [True, True, False, True]


GB300 = "GB300 NVL72 (analyst estimate 2026-06)"
GB200 = "GB200 NVL72 (analyst estimate 2025-09)"


def rack_plan(racks: int, server: str, switch: str):
    scenario = Scenario.model_validate(
        {
            "workload": SMALL,
            "requirement": {"gpus": 72 * racks},
            "target_tflops": 1,
            "constraints": {"servers": [server], "switches": [switch], "fabrics": ["ib"], "planes": [1]},
            "include": {"subnet_manager_slot": False},
        }
    )
    return purchase.run(load_catalog(), scenario, Calibration.default(), alternatives=0)


@pytest.mark.parametrize(("racks", "leaf", "spine"), [(8, 8, 4), (128, 128, 72)])
def test_superpod_gb300_scale_out_per_rack(racks, leaf, spine):
    """DGX SuperPOD GB300 (Quantum-X800; two secondary copies of the RA PDF): an SU of 8 NVL72 racks has 8 Q3400
    leaves, tray NIC r of racks 1-4 to rail-r leaf A and of racks 5-8 to leaf B, 72 down and 72 up each; 16 SUs
    are 128 leaves and 72 spines ("9,216 GPUs need only 128 + 72 = 200 Q3400"); 576 node links per SU."""
    plan = rack_plan(racks, GB300, "Q3400-RA")
    assert (plan.choice.tier, plan.choice.topology) == (2, "rail")
    assert plan.choice.switches_by_tier == {"leaf": leaf, "spine": spine}
    links = {line.segment: line.count for line in plan.links if line.section == "compute fabric"}
    assert links == {"node-leaf": 576 * racks // 8, "switch-switch": 576 * racks // 8}


def test_superpod_gb200_rail_leaves_carry_the_rack_uplinks_only():
    """DGX SuperPOD GB200 (Quantum-2 QM9700): a rail leaf takes one rail of one rack, 18 trays: 18 down and 18 up
    of its 64 ports (the RA: 28 idle). One SU of 8 racks: 32 leaves and 576 / 64 = 9 spines; at 4 SUs, three
    tiers with the RA's 128 leaves and 36 cores (its 96 spines stripe each spine-leaf group, 6 spines of 24 down
    ports each, where the planner packs 72 full ones; docs/plan.md says so)."""
    one = rack_plan(8, GB200, "QM9700")
    assert one.choice.switches_by_tier == {"leaf": 32, "spine": 9}
    links = {line.segment: line.count for line in one.links if line.section == "compute fabric"}
    assert links == {"node-leaf": 576, "switch-switch": 576}
    four = rack_plan(32, GB200, "QM9700")
    assert four.choice.tier == 3
    assert (four.choice.switches_by_tier["leaf"], four.choice.switches_by_tier["core"]) == (128, 36)


def test_planes_a_nic_cannot_split_stay_one():
    """constraints.planes [4] with single-port NICs: their rail fabrics stay one plane (not dropped)."""
    plan = fabric_plan(64, DGX, "N9600-64OD", "roce", planes=[4])
    assert plan.choice.topology == "rail" and "planes" not in plan.choice.fabric_text
