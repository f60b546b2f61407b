"""Fabric sizing checked by hand: one switch, two-tier, three-tier, breakout, oversubscription, rails; link
choice on parts without connector data."""

from __future__ import annotations

import pytest

from planner.catalog import connectors
from planner.catalog.rows import OpticRow
from planner.hardware import fabric


def test_one_switch_when_endpoints_fit():
    s = fabric.size(64, 1, 64, 1, 1.0)
    assert (s.down_ports, s.by_tier, s.uplinks) == (64, {"leaf": 1}, 0)
    assert fabric.size(65, 1, 64, 1, 1.0) is None


def test_two_tier_non_blocking_by_hand():
    # 192 endpoints on 36-port switches: 18 down per leaf -> 11 leaves, 10 full (18 uplinks each) and the last
    # serving 12 ports with 12 uplinks: 192 uplinks over 36-port spines -> 6
    s = fabric.size(192, 2, 36, 1, 1.0)
    assert s.by_tier == {"leaf": 11, "spine": 6} and s.uplinks == 10 * 18 + 12
    # the largest two-tier fabric: p leaves of p/2 down ports = p^2/2 endpoints
    assert fabric.size(64 * 32, 2, 64, 1, 1.0).by_tier == {"leaf": 64, "spine": 32}
    assert fabric.size(64 * 32 + 1, 2, 64, 1, 1.0) is None


def test_three_tier_by_hand():
    # 5000 endpoints, 64 ports: 157 leaves (32 down; 156 full, the last 8 ports with 8 uplinks), 5000 uplinks
    # into aggregation (32 down) -> 157, 157*32 core links over 64-port cores -> 79
    s = fabric.size(5000, 3, 64, 1, 1.0)
    assert s.by_tier == {"leaf": 157, "spine": 157, "core": 79}
    assert s.uplinks == (156 * 32 + 8) + 157 * 32
    assert fabric.max_down_ports(3, 64, 1.0) == 64**3 // 4


def test_breakout_doubles_endpoints_per_port():
    assert fabric.breakout(400, 200) == 2 and fabric.breakout(800, 400) == 2 and fabric.breakout(400, 400) == 1
    assert fabric.breakout(400, 800) == 0 and fabric.breakout(400, 300) == 0
    s = fabric.size(128, 1, 64, 2, 1.0)  # 128 x 200G endpoints on one 64 x 400G switch
    assert (s.down_ports, s.by_tier) == (64, {"leaf": 1})


def test_oversubscription_puts_more_ports_down():
    assert fabric.leaf_split(64, 1.0) == (32, 32)
    assert fabric.leaf_split(64, 3.0) == (48, 16)
    # 48 down per leaf -> 10 leaves, 160 uplinks need 3 spines; 16 uplinks a leaf stripe evenly over 4
    s = fabric.size(480, 2, 64, 1, 3.0)
    assert s.by_tier == {"leaf": 10, "spine": 4} and s.uplinks == 160
    non_blocking = fabric.size(480, 2, 64, 1, 1.0)
    assert non_blocking.total > s.total


def optic(sku, kind, gbps, price, reach=3.0, legs=1, fab="any"):
    """A part without connector data (cage, lanes): links match it on Gbps per leg or engine only."""
    return OpticRow(
        sku=sku,
        name=sku,
        kind=kind,
        fabric=fab,
        gbps=gbps,
        breakout=legs,
        reach_m=reach,
        price_usd=price,
        power_w=1.0,
        source="test",
        date="2026",
        confidence="solid",
    )


def ends(nic_gbps: float, port_gbps: float, max_breakout: int = 1):
    nic = connectors.End("nic", None, 1, None, (), None, gbps=nic_gbps)
    return nic, connectors.End("switch", None, 1, None, (), None, max_breakout, port_gbps)


def node_link(optics, fabric_, nic_gbps, port_gbps, b, length_m, usd_per_w=0.0):
    nic, switch = ends(nic_gbps, port_gbps, b)
    link = connectors.cheapest(connectors.node_links(optics, nic, switch, fabric_, length_m), usd_per_w)
    return link.usd("endpoint"), link.usd("cage"), link.text


def test_links_pick_the_cheapest_option_that_reaches():
    optics = [
        optic("DAC400", "dac", 400, 300),
        optic("T400", "transceiver", 400, 500, reach=100),
        optic("F400", "fiber", 400, 50, reach=30),
        optic("SPLIT800", "dac", 400, 700, legs=2),  # 800G head, two 400G legs
        optic("T800", "transceiver", 800, 1000, reach=100),
    ]
    assert node_link(optics, "ib", 400, 400, 1, 3.0) == (0.0, 300.0, "DAC DAC400")
    # 10 m is beyond the DAC: transceiver + fibre at the NIC, transceiver at the switch
    per_endpoint, per_cage, _ = node_link(optics, "ib", 400, 400, 1, 10.0)
    assert (per_endpoint, per_cage) == (550.0, 500.0)
    # breakout 2 of an 800G port: the splitter serves the port
    assert node_link(optics, "ib", 400, 800, 2, 3.0) == (0.0, 700.0, "DAC SPLIT800")
    uplink = connectors.cheapest(connectors.switch_links(optics, ends(400, 400)[1], "ib", 30.0), unit="uplink")
    assert uplink.usd("uplink") == 2 * 500 + 50


def test_fabric_specific_optics_are_not_used_on_the_other_fabric():
    optics = [optic("ETH-DAC", "dac", 400, 10, fab="roce"), optic("ANY-DAC", "dac", 400, 300)]
    assert node_link(optics, "ib", 400, 400, 1, 3.0)[2] == "DAC ANY-DAC"
    assert node_link(optics, "roce", 400, 400, 1, 3.0)[2] == "DAC ETH-DAC"


@pytest.mark.parametrize("tier", [1, 2])
def test_capacity_grows_with_tier(tier):
    assert fabric.max_down_ports(tier, 32, 1.0) < fabric.max_down_ports(tier + 1, 32, 1.0)


def test_tco_prices_the_watts_of_a_link():
    optics = [optic("AOC400", "aoc", 400, 300), optic("DAC400", "dac", 400, 320)]
    optics[0] = optics[0].model_copy(update={"power_w": 12.0})
    optics[1] = optics[1].model_copy(update={"power_w": 0.0})
    assert node_link(optics, "ib", 400, 400, 1, 3.0)[2] == "AOC AOC400"  # capex: the cheaper cable
    # over a TCO horizon 12 W cost more than the $20 saved: the DAC wins
    assert node_link(optics, "ib", 400, 400, 1, 3.0, usd_per_w=10.0)[2] == "DAC DAC400"


def test_uplinks_follow_the_ports_used():
    """A leaf's uplinks follow its used down-ports at o:1 in whole cages (fabric.uplinks_for), by hand."""
    # 2:1 on 64 ports in twin-port cages: d = 42, u = 22; 16 used ports need 16 * 22 / 42 = 8.4 -> 9 -> 10
    assert fabric.leaf_split(64, 2.0, 2) == (42, 22)
    assert int(fabric.uplinks_for(16, 42, 22, 2)) == 10 and int(fabric.uplinks_for(42, 42, 22, 2)) == 22
    # 100 endpoints on 64-port leaves at 2:1 (d 42): 2 full leaves (22 up each) and 16 ports (10 up)
    s = fabric.size(100, 2, 64, 1, 2.0, ports_per_cage=2)
    assert s.by_tier["leaf"] == 3 and s.uplinks == 22 + 22 + 10
    # top of rack: 4 nodes x 8 ports per rack on 128-port leaves (d 64 at 1:1): one leaf per rack, 32 used,
    # 32 uplinks, not 64; 8 racks -> 8 leaves, 256 uplinks, 2 spines
    tor = fabric.Topology(tor=True, rack_leaves=1, rack_leaf_up=32, nodes_per_rack=4, node_endpoints=8)
    s = fabric.size(256, 2, 128, 1, 1.0, nodes=32, ports_per_cage=2, topology=tor)
    assert s.by_tier == {"leaf": 8, "spine": 2} and s.uplinks == 256


def test_subnet_manager_slot_by_hand():
    """An InfiniBand fabric holds one node's ports for the UFM: 32-node SUs hold 31 nodes each."""
    rail = {"rail": True, "rails": 8, "rail_endpoints": 1, "su": 32, "node_endpoints": 8}
    for nodes, leaves in ((31, 8), (32, 16), (63, 16), (64, 24)):
        kept = fabric.Topology(**rail, reserved_nodes=1)
        s = fabric.size(8 * nodes, 2, 64, 1, 1.0, nodes=nodes, ports_per_cage=2, topology=kept)
        assert s.by_tier["leaf"] == leaves
    # leaves in order: 64 endpoints on 36-port leaves (18 down) hold 8 more ports: ceil(72 / 18) = 4 leaves,
    # with uplinks for the 64 node ports only (18 + 18 + 18 + 10)
    ordered = fabric.Topology(reserved_nodes=1, node_endpoints=8)
    s = fabric.size(64, 2, 36, 1, 1.0, nodes=8, topology=ordered)
    assert s.by_tier["leaf"] == 4 and s.uplinks == 64
    assert fabric.size(64 * 32 - 8, 2, 64, 1, 1.0, nodes=252, topology=ordered) is not None
    assert fabric.size(64 * 32 - 7, 2, 64, 1, 1.0, nodes=253, topology=ordered) is None


def test_spines_stripe_every_leaf_evenly():
    """The DGX SuperPOD B300 (XDR) reference, Table 3: SUs of 72 nodes, 8 rail leaves of 144-port Q3400 (72
    down, 72 up): 4 SUs need 32 x 72 / 144 = 16 spines but take 18 (72 uplinks = 18 x 4), 8 SUs take 36."""
    assert [fabric.striped_spines(72, n) for n in (4, 8, 16, 32, 72)] == [4, 8, 18, 36, 72]
    rail = fabric.Topology(rail=True, rails=8, rail_endpoints=1, su=72, node_endpoints=8)
    for sus, leaf, spine in ((1, 8, 4), (2, 16, 8), (4, 32, 18), (8, 64, 36), (18, 144, 72)):
        s = fabric.size(576 * sus, 2, 144, 1, 1.0, nodes=72 * sus, ports_per_cage=2, topology=rail)
        assert s.by_tier == {"leaf": leaf, "spine": spine} and s.uplinks == 576 * sus
