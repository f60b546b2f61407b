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

Uplinks follow the down-ports a leaf uses, at the leaf's o:1, in whole cages: a leaf serving D' of its d
down-ports gets up(D') = ppc x ceil(u D' / (d ppc)) uplinks (up(d) = u). Leaves filled in order: the full
ones u each and the last one up(its ports), which sums to up(D) over the fabric; a top-of-rack leaf:
up(the ports of a full rack's leaf) (every rack is designed alike); rail leaves: up(the ports of a full SU)
each, the reference's rule above (u, unless an SU cannot fill its leaves: an NVL72 rack's 18 trays on a
QM9700 leaf's 32 down-ports get 18 uplinks, as the DGX SuperPOD GB200 builds it).

Planes: P independent fabrics side by side, nothing shared but the node and its NICs, each taking 1/P of every
node's ports and sized as above, the counts times P:
  * multi-plane rail-optimised (DGX SuperPOD B300 on Spectrum-X, twin-plane): port p of every NIC goes to plane
    p, so a plane's rail leaf serves one port per node: 64-node SUs of 16 leaves (8 per plane), and a plane's
    spines stripe its own leaves' uplinks; two tiers hold P times the nodes of one plane;
  * rail-only (Wang et al., arXiv 2307.12169): every rail is a plane of its own, its leaves filled in order (one
    switch per rail while the rail fits it), no switch joins two rails; traffic between rails crosses the
    NVLink domain, so it is legal only where the layout keeps it there (planner.tables.buy).

An InfiniBand fabric of leaves (tiers 2 and 3) holds one node's slot for its subnet manager (UFM) links, as
the reference does (RA-11333-001 Table 7: 127 nodes in 4 SUs, "to accommodate UFM connectivity"; the
SuperPOD FAQ: "31 to 1,023 nodes"): rail SUs count N + 1 nodes, leaves filled in order hold the slot's
ports, a top-of-rack design gets one more leaf when a full rack's leaves have no room for them. The held
ports carry no node link (include.subnet_manager_slot: false sizes the idealised full SUs).
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


def uplinks_for(used_down, down, up, ports_per_cage=1):
    """Uplinks a leaf needs for `used_down` of its `down` down-ports at its o:1 (`up` for a full leaf), in
    whole cages of `ports_per_cage` (vectorised; see the module docstring)."""
    d = np.maximum(np.asarray(down, dtype=np.int64), 1)
    ppc = np.maximum(np.asarray(ports_per_cage, dtype=np.int64), 1)
    need = np.asarray(up, dtype=np.int64) * np.asarray(used_down, dtype=np.int64)
    return ppc * -(-need // (d * ppc))


def striped_spines(leaf_up, needed):
    """Spines of a two-tier fabric: the fewest that take `needed` of them and divide a leaf's uplinks, so
    every leaf spreads its uplinks evenly over every spine (vectorised). The DGX SuperPOD B300 (XDR) table:
    32 leaves of 72 uplinks on 144-port spines need 16, and take 18 (72 = 18 x 4 links per spine)."""
    ell, need = np.atleast_1d(np.asarray(leaf_up, dtype=np.int64)), np.atleast_1d(np.asarray(needed, np.int64))
    ell, need = np.broadcast_arrays(ell, need)
    e, n = ell.ravel(), need.ravel()
    if e.size == 0:
        return np.zeros(ell.shape, dtype=np.int64)
    # each distinct (uplinks, needed) pair once, keyed as one integer (np.unique over axis=1 sorts rows: slow)
    n_lo, span = n.min(), int(n.max() - n.min()) + 1
    _, first, back = np.unique((e - e.min()) * span + (n - n_lo), return_index=True, return_inverse=True)
    spines = np.array([_smallest_divisor_from(int(e[i]), int(n[i])) for i in first], dtype=np.int64)
    out = spines[back.ravel()].reshape(ell.shape)
    return out if np.ndim(leaf_up) or np.ndim(needed) else int(out.item())


def _smallest_divisor_from(number: int, least: int) -> int:
    """The smallest divisor of `number` that is at least `least` (least itself when number is 0 or smaller)."""
    if least <= 0:
        return max(least, 0)
    return next((d for d in divisors(number) if d >= least), least)


def divisors(number: int) -> list[int]:
    return [d for d in range(1, number + 1) if number % d == 0]


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
    rack_leaf_up: object = 0  # uplinks of a top-of-rack leaf (uplinks_for its full rack's ports)
    rail_leaf_up: object = None  # uplinks of a rail leaf (uplinks_for its full SU's ports; default all)
    nodes_per_rack: object = 1
    reserved_nodes: object = 0  # node slots held for the subnet manager (module docstring)
    node_endpoints: object = 0  # NIC ports per node (the size of a held slot)
    planes: object = 1  # independent fabrics, each of 1/planes of every node's ports (module docstring)


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
      tier 2: L leaves (see Topology) with U leaf uplinks (the module docstring), S spines: the smallest
              divisor of a leaf's uplinks that is at least ceil(U / p) (striped_spines)
      tier 3: L leaves, U leaf uplinks, A = ceil(U / a) aggregation, C = ceil(A (p - a) / p) core,
      uplinks U + A (p - a); `leaf_uplinks` is U
    all of one plane (E / P endpoints, the held slot's ports / P), times P (Topology.planes)."""
    topo = topology or Topology()
    planes = np.maximum(np.asarray(topo.planes, dtype=np.int64), 1)
    e, t = np.asarray(endpoints, dtype=np.int64) // planes, np.asarray(tier, dtype=np.int64)  # one plane's
    p, b = np.asarray(ports, dtype=np.int64), np.maximum(np.asarray(breakout_, dtype=np.int64), 1)
    ppc = np.maximum(np.asarray(ports_per_cage, dtype=np.int64), 1)
    c = np.maximum(np.asarray(cage_endpoints if cage_endpoints is not None else b * ppc, dtype=np.int64), 1)
    n = np.asarray(nodes if nodes is not None else 0, dtype=np.int64)
    node_endpoints = np.asarray(topo.node_endpoints, dtype=np.int64) // planes
    rail, tor = np.asarray(topo.rail, dtype=bool) & (t >= 2), np.asarray(topo.tor, dtype=bool) & (t >= 2)
    rails = np.maximum(np.asarray(topo.rails, dtype=np.int64), 1)
    down_ports = np.where(t > 0, -(-e // b), 0)
    reserved = np.asarray(topo.reserved_nodes, dtype=np.int64)
    held = np.where(t > 0, -(-(reserved * node_endpoints) // b), 0)
    per_rail = np.asarray(topo.rail_endpoints, dtype=np.int64) * n
    cages = np.where(t > 0, np.where(rail, rails * -(-per_rail // c), -(-e // c)), 0)
    d, u = leaf_split(p, oversubscription, ppc)
    d, u = np.maximum(np.asarray(d), 1), np.asarray(u)
    a = np.maximum(agg_down(p), 1)
    sus = np.where(rail, -(-(n + reserved) // np.maximum(np.asarray(topo.su, dtype=np.int64), 1)), 0)
    npr = np.asarray(topo.nodes_per_rack, dtype=np.int64)
    racks = -(-n // np.maximum(npr, 1))
    rack_leaves = np.asarray(topo.rack_leaves, dtype=np.int64)
    rack_room = rack_leaves * d - -(-(npr * node_endpoints) // b)
    tor_leaves = rack_leaves * racks + np.where(rack_room < held, 1, 0)
    leaves_multi = np.select([rail, tor], [rails * sus, tor_leaves], -(-(down_ports + held) // d))
    tor_up = leaves_multi * np.asarray(topo.rack_leaf_up, dtype=np.int64)
    rail_up = u if topo.rail_leaf_up is None else np.asarray(topo.rail_leaf_up, dtype=np.int64)
    in_order = uplinks_for(down_ports, d, u, ppc)
    leaf_up = np.where(t >= 2, np.select([rail, tor], [leaves_multi * rail_up, tor_up], in_order), 0)
    aggs = np.where(t == 3, -(-leaf_up // a), 0)
    leaf = np.select([t == 1, t >= 2], [1, leaves_multi], 0)
    per_leaf = np.select([tor, rail], [np.asarray(topo.rack_leaf_up, dtype=np.int64), rail_up], u)
    two_tier = np.where(t == 2, striped_spines(per_leaf, -(-leaf_up // np.maximum(p, 1))), 0)
    spine = np.select([t == 2, t == 3], [two_tier, aggs], 0)
    core = np.where(t == 3, -(-(aggs * (p - a)) // np.maximum(p, 1)), 0)
    uplinks = leaf_up + aggs * (p - a)
    fits = (down_ports + held <= max_down_ports(t, p, oversubscription, ppc)) & (leaf <= max_leaves(t, p))
    one = {"down_ports": down_ports, "cages": cages, "leaf": leaf, "spine": spine, "core": core}
    one |= {"uplinks": uplinks, "leaf_uplinks": leaf_up}
    out = {name: value * planes for name, value in one.items()}  # every plane alike
    return out | {"switches": out["leaf"] + out["spine"] + out["core"], "sus": sus, "fits": fits | (t == 0)}


def size(endpoints: int, tier: int, ports: int, breakout_: int, oversubscription: float, **kw) -> Switches | None:
    """Smallest fabric of this tier for `endpoints`; None when the tier cannot hold them (keywords as
    size_arrays)."""
    sized = size_arrays(endpoints, tier, ports, breakout_, oversubscription, **kw)
    s = {k: np.asarray(v).item() for k, v in sized.items()}
    if not s["fits"]:
        return None
    names = {0: (), 1: ("leaf",), 2: ("leaf", "spine"), 3: ("leaf", "spine", "core")}[tier]
    return Switches(int(s["down_ports"]), {n: int(s[n]) for n in names}, int(s["uplinks"]), int(s["cages"]))
