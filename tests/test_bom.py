"""The bill of materials a network architect would sign: every link of every shipped example valid, only
orderable parts, sections for racks and the other networks (switchable), included NICs shown as included,
PCIe-true NIC rates, ties called by price uncertainty."""

from __future__ import annotations

import pytest
from support import CAL, SWITCHES, scenario, tiny

from planner.answers import buy as purchase
from planner.base.resources import examples_dir
from planner.catalog import connectors
from planner.catalog.load import load_catalog
from planner.inputs.scenario import load_scenario
from planner.model.calibration import Calibration

EXAMPLES = ["bloom-176b-v100", "llama-70b-h100", "gpt3-budget-power"]


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def plans(catalog):
    return {
        name: purchase.run(catalog, load_scenario(examples_dir() / f"{name}.yaml"), Calibration.default())
        for name in EXAMPLES
    }


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_link_of_every_example_is_valid(catalog, plans, name):
    plan = plans[name]
    assert plan.links
    for line in plan.links:
        assert connectors.link_line_problems(catalog, line) == [], (line.segment, line.parts)
        assert sum(line.lengths.values()) == line.count


@pytest.mark.parametrize("name", EXAMPLES)
def test_bom_names_orderable_parts_and_sums_to_capex(catalog, plans, name):
    plan = plans[name]
    assert sum(b.extended_usd for b in plan.bom) == pytest.approx(plan.cost.capex_usd)
    optics = {o.sku.lower(): o for o in catalog.items("optics")}
    for line in plan.bom:
        assert "xxx" not in line.sku.lower(), line.sku  # a cable family, not an orderable part
        row = optics.get((line.catalog_sku or line.sku).lower())
        if row is not None and row.lengths:  # cut to length: the part number of one of its lengths
            assert (line.length_m, line.sku) in row.lengths
        # a catalog row, or (installation labour) a named assumption
        assert line.source.split(":")[0].endswith(".csv") or line.source.startswith("planner/assumptions/")


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_quote_lists_racks_pdus_and_the_management_networks(plans, name):
    plan = plans[name]
    sections = {b.section for b in plan.bom}
    assert {"servers", "compute fabric", "racks and power", "out-of-band management"} <= sections
    assert {"racks", "pdus"} <= {b.category for b in plan.bom}
    assert any("Cat6" in n for n in plan.not_priced) and any("storage system" in n for n in plan.not_priced)


def test_llama_nics_run_at_their_pcie_true_rate(plans):
    plan = plans["llama-70b-h100"]
    c = plan.choice
    assert c.gpus_per_node == 8 and c.nics_per_node in (1, 2, 4, 8) and c.gpus_per_nic == 8 / c.nics_per_node
    assert c.nic_usable_gbps <= 461  # a PCIe Gen5 x16 slot's effective rate, whatever the NIC's line rate
    assert c.node_gbps == pytest.approx(c.nics_per_node * c.nic_usable_gbps)
    # one 400G NIC per GPU is the standard: either chosen, or the plan says what it would cost
    standard = c.nic == "CX7-400G-OSFP" and c.nics_per_node == 8
    assert standard or any("one 400G NIC per GPU" in w and "more" in w for w in plan.why)
    assert {"storage network", "in-band management"} <= {b.section for b in plan.bom}


def test_storage_nics_on_a_dgx_are_included(catalog):
    sc = load_scenario(
        examples_dir() / "llama-70b-h100.yaml",
        {"constraints.servers": ["DGX H100 (reseller 2025-03)"], "requirement": {"gpus": 256}},
    )
    plan = purchase.run(catalog, sc, Calibration.default(), alternatives=0)
    nics = [b for b in plan.bom if b.category == "nics"]
    assert nics and all(b.unit_usd == 0 and "included" in b.note for b in nics)
    assert {b.sku for b in nics} == {"CX7-400G-OSFP", "CX7-2x200G"}
    # the DGX's own twin-port flat-top cages: 4 modules per node, never single-port modules
    flat = sum(b.quantity for b in plan.bom if b.sku == "MMA4Z00-NS-FLT" and b.section != "spares")
    assert flat == 4 * plan.choice.nodes and not any(b.sku == "MMA4Z00-NS400" for b in plan.bom)


def test_sections_switch_off_and_say_so(catalog):
    off = {"include": {"storage_network": False, "inband_network": False, "oob_network": False, "racks": False}}
    off["include"] |= {"storage_system": False, "management_servers": False, "installation": False}
    sc = load_scenario(
        examples_dir() / "llama-70b-h100.yaml", settings={f"include.{k}": v for k, v in off["include"].items()}
    )
    plan = purchase.run(catalog, sc, Calibration.default(), alternatives=0)
    assert {b.section for b in plan.bom} <= {"servers", "compute fabric", "subnet manager", "spares"}
    for word in ("storage network", "in-band management", "out-of-band network", "racks and PDUs", "storage system",
                 "management servers", "installation"):  # fmt: skip
        assert any(word in n and "excluded by the scenario" in n for n in plan.not_priced), word


def test_ufm_only_where_infiniband_switches_are_unmanaged(catalog):
    base = examples_dir() / "llama-70b-h100.yaml"
    for switch, ufm in (("MQM9790-NS2F", 4), ("QM9700", 0)):  # compute and storage fabric: a pair each
        sc = load_scenario(base, {"constraints.switches": [switch], "constraints.fabrics": ["ib"]})
        plan = purchase.run(catalog, sc, Calibration.default(), alternatives=0)
        assert plan.layout["ufm_appliances"] == ufm, switch


def test_top_of_rack_leaf_spine_uses_copper_in_the_rack(catalog):
    """Plain leaf-spine with leaves on top of each rack: DGX-2 nodes reach their leaf over in-rack cables."""
    plan = purchase.run(catalog, load_scenario(examples_dir() / "bloom-176b-v100.yaml"), Calibration.default())
    assert plan.choice.topology == "leaf-spine" and plan.choice.placement == "top-of-rack"
    node_leaf = next(line for line in plan.links if line.segment == "node-leaf")
    assert max(float(x) for x in node_leaf.lengths) < 3


def test_a_tie_is_called_within_the_price_uncertainty():
    """IB at $3,000 for SW-A: $407,240 against RoCE's $406,200. The parts they do not share are SW-A ($3,000)
    and 2 splitters ($240) against SW-B ($2,000) and 4 DACs ($200): $5,440."""
    cheap = tiny(switches=[dict(SWITCHES[0], price_usd=3_000), SWITCHES[1]])
    plan = purchase.run(cheap, scenario(), CAL)
    ib = next(s for s in plan.per_fabric if s.choice.fabric == "ib")
    assert ib.delta_usd == 1_040
    assert ib.uncertainty_usd == pytest.approx(0.05 * 5_440) and not ib.tie  # solid rows: 5%
    for kind in ("switches", "optics"):  # the same parts as estimates: 40%
        for key, row in cheap.rows[kind].items():
            cheap.rows[kind][key] = row.model_copy(update={"confidence": "estimate"})
    plan = purchase.run(cheap, scenario(), CAL)
    ib = next(s for s in plan.per_fabric if s.choice.fabric == "ib")
    assert ib.uncertainty_usd == pytest.approx(0.40 * 5_440) and ib.tie
    assert ib.decides.startswith("firm quotes for SW-A (estimate), SW-B (estimate)")
    assert "PFC and ECN" in ib.decides
    assert any("are a tie" in w for w in plan.why) and any("estimate 40%" in w for w in plan.why)
