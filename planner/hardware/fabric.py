"""Switch sizing of the compute fabric in closed form (docs/plan.md section 2). The MILP (optimize/buy.py)
states the same rules as constraints; the candidate table and the brute force use the closed form here.
Which cable or transceivers join two ports is planner/catalog/connectors.py.

Terms: an *endpoint* is one NIC port; a switch has `ports` logical ports in cages of `ports_per_cage`
(twin-port OSFP: 2); a port serves b endpoints (a splitter or splitter fibre; b >= 1) and one switch cage
serves c endpoints. Leaves of a tier-2/3 fabric put d = floor(ports * o / (o+1)) ports down and u = ports - d
up (o:1 oversubscription; o = 1 is non-blocking), u a whole number of cages.

Topologies (tiers 2 and 3):
  * leaf-spine: leaves hold the ports in order, L = ceil(D / d); with leaves on top of each rack, every
    compute rack gets its own leaves, L = leaves per rack x racks;
  * rail-optimised (DGX SuperPOD): NIC i of every node of a scalable unit (SU) goes to the SU's rail-i leaf;
    an SU is as many nodes as one leaf's down-ports hold, and a started SU gets all its leaves (RA-11333-001:
    "the fabric should be designed to support the full SU"): L = rails x ceil(N / SU nodes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def breakout(port_gbps: float, endpoint_gbps: float) -> int:
    """Endpoints per switch port, or 0 when the endpoint is faster or does not divide the port."""
    ratio = port_gbps / endpoint_gbps
    return int(round(ratio)) if ratio >= 1 and abs(ratio - round(ratio)) < 1e-9 else 0


def leaf_split(ports, oversubscription, ports_per_cage=1):
    """(down, up) logical ports of a leaf for o:1 oversubscription (vectorised); the uplinks fill whole cages
    (a twin-port module carries two uplinks), so d rounds down to keep u a multiple of ports_per_cage."""
    ports, ppc = np.asarray(ports), np.maximum(np.asarray(ports_per_cage), 1)
    down = np.floor(ports * np.asarray(oversubscription) / (np.asarray(oversubscription) + 1) + 1e-9).astype(np.int64)
    down = down - (ports - down) % ppc
    if down.ndim == 0:
        return int(down), int(ports) - int(down)
    return down, ports - down


def agg_down(ports):
    """Aggregation switches of a 3-tier fabric are non-blocking: half their ports down."""
    return np.asarray(ports) // 2 if np.ndim(ports) else ports // 2


def max_down_ports(tier, ports, oversubscription, ports_per_cage=1):
    """Capacity of a tier in switch down-ports (endpoints = down-ports x breakout); vectorised."""
    down, _ = leaf_split(ports, oversubscription, ports_per_cage)
    two = ports * down  # at most `ports` leaves: every spine port reaches one leaf
    three = two * agg_down(ports)  # p/2 pods of a two-tier fabric (p^3/4 when o = 1)
    if np.ndim(tier) == 0 and np.ndim(ports) == 0:
        return {0: 0, 1: ports, 2: two, 3: three}[int(tier)]
    return np.select([tier == 1, tier == 2, tier == 3], [ports, two, three], 0)


def max_leaves(tier, ports):
    """Most leaves a tier connects: p (two tiers), p x p/2 (three tiers); one switch is one leaf."""
    return np.select(
        [np.asarray(tier) == 1, np.asarray(tier) == 2, np.asarray(tier) == 3], [1, ports, ports * agg_down(ports)], 0
    )


def su_nodes(ports, oversubscription, ports_per_cage, breakout_, endpoints_per_rail):
    """Nodes of a rail-optimised scalable unit: as many as one rail leaf's down-ports serve (SuperPOD H100:
    32 down-ports of a QM9700 leaf, one port per node per rail: 32 nodes)."""
    down, _ = leaf_split(ports, oversubscription, ports_per_cage)
    return np.maximum(np.asarray(down) * np.asarray(breakout_) // np.maximum(np.asarray(endpoints_per_rail), 1), 1)


@dataclass(frozen=True)
class Switches:
    """Switch and link counts of one fabric."""

    down_ports: int
    by_tier: dict[str, int]  # "leaf"/"spine"/"core" (a single switch is a "leaf")
    uplinks: int  # switch-to-switch links
    cages: int = 0  # switch cages the node links use

    @property
    def total(self) -> int:
        return sum(self.by_tier.values())


@dataclass(frozen=True)
class Topology:
    """How the compute fabric's leaves are laid out, per candidate (arrays or scalars): rail-optimised with
    `rails` rails of `rail_endpoints` ports per node in SUs of `su` nodes; or leaves on top of each rack of
    `nodes_per_rack` nodes, `rack_leaves` per rack; or neither (leaf-spine, leaves filled in order)."""

    rail: object = False
    rails: object = 1
    rail_endpoints: object = 1
    su: object = 1
    tor: object = False
    rack_leaves: object = 1
    nodes_per_rack: object = 1


def size_arrays(
    endpoints,
    tier,
    ports,
    breakout_,
    oversubscription,
    *,
    nodes=None,
    cage_endpoints=None,
    ports_per_cage=1,
    topology=None,
) -> dict[str, np.ndarray]:
    """The smallest fabric of each row's tier for its endpoints, in closed form: down_ports, cages, leaf,
    spine, core, uplinks, switches, sus and `fits` (False where the tier cannot hold them). Tier 0 is a
    single node: no fabric.
      cages: ceil(E / c), or on rails: rails x ceil(per-rail endpoints / c)
      tier 1: one switch of D = ceil(E/b) down-ports
      tier 2: L leaves (see Topology), S = ceil(L u / p) spines, uplinks L u
      tier 3: L leaves, A = ceil(L u / a) aggregation, C = ceil(A (p - a) / p) core, uplinks L u + A (p - a)"""
    e, t = np.asarray(endpoints, dtype=np.int64), np.asarray(tier, dtype=np.int64)
    p, b = np.asarray(ports, dtype=np.int64), np.maximum(np.asarray(breakout_, dtype=np.int64), 1)
    ppc = np.maximum(np.asarray(ports_per_cage, dtype=np.int64), 1)
    c = np.maximum(np.asarray(cage_endpoints if cage_endpoints is not None else b * ppc, dtype=np.int64), 1)
    topo = topology or Topology()
    n = np.asarray(nodes if nodes is not None else 0, dtype=np.int64)
    rail, tor = np.asarray(topo.rail, dtype=bool) & (t >= 2), np.asarray(topo.tor, dtype=bool) & (t >= 2)
    rails = np.maximum(np.asarray(topo.rails, dtype=np.int64), 1)
    down_ports = np.where(t > 0, -(-e // b), 0)
    per_rail = np.asarray(topo.rail_endpoints, dtype=np.int64) * n
    cages = np.where(t > 0, np.where(rail, rails * -(-per_rail // c), -(-e // c)), 0)
    d, u = leaf_split(p, oversubscription, ppc)
    d, u = np.maximum(np.asarray(d), 1), np.asarray(u)
    a = np.maximum(agg_down(p), 1)
    sus = np.where(rail, -(-n // np.maximum(np.asarray(topo.su, dtype=np.int64), 1)), 0)
    racks = -(-n // np.maximum(np.asarray(topo.nodes_per_rack, dtype=np.int64), 1))
    leaves_multi = np.select(
        [rail, tor], [rails * sus, np.asarray(topo.rack_leaves, dtype=np.int64) * racks], -(-down_ports // d)
    )
    aggs = np.where(t == 3, -(-(leaves_multi * u) // a), 0)
    leaf = np.select([t == 1, t >= 2], [1, leaves_multi], 0)
    spine = np.select([t == 2, t == 3], [-(-(leaves_multi * u) // np.maximum(p, 1)), aggs], 0)
    core = np.where(t == 3, -(-(aggs * (p - a)) // np.maximum(p, 1)), 0)
    uplinks = np.select([t == 2, t == 3], [leaves_multi * u, leaves_multi * u + aggs * (p - a)], 0)
    fits = (down_ports <= max_down_ports(t, p, oversubscription, ppc)) & (leaf <= max_leaves(t, p))
    return {
        "down_ports": down_ports,
        "cages": cages,
        "leaf": leaf,
        "spine": spine,
        "core": core,
        "switches": leaf + spine + core,
        "uplinks": uplinks,
        "sus": sus,
        "fits": fits | (t == 0),
    }


def size(endpoints: int, tier: int, ports: int, breakout_: int, oversubscription: float, **kw) -> Switches | None:
    """Smallest fabric of this tier for `endpoints`; None when the tier cannot hold them (keywords as
    size_arrays)."""
    sized = size_arrays(endpoints, tier, ports, breakout_, oversubscription, **kw)
    s = {k: np.asarray(v).item() for k, v in sized.items()}
    if not s["fits"]:
        return None
    names = {0: (), 1: ("leaf",), 2: ("leaf", "spine"), 3: ("leaf", "spine", "core")}[tier]
    return Switches(int(s["down_ports"]), {n: int(s[n]) for n in names}, int(s["uplinks"]), int(s["cages"]))
