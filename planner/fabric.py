"""Switch, optics and cable sizing (docs/plan.md section 2): the closed-form fabric of a configuration and
the cheapest link that connects its ports. The MILP (optimize/buy.py) states the same sizing rules as
constraints; the candidate table and the brute force use the closed form here.

Terms: an *endpoint* is one NIC port; a switch has `ports` physical ports of `port_gbps`; a port breaks out
into b = port_gbps / endpoint_gbps endpoints (b >= 1, whole). Leaves of a tier-2/3 fabric put
d = floor(ports * o / (o+1)) ports down and u = ports - d up (o:1 oversubscription; o = 1 is non-blocking).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from planner.rows import OpticRow


def breakout(port_gbps: float, endpoint_gbps: float) -> int:
    """Endpoints per switch port, or 0 when the endpoint is faster or does not divide the port."""
    ratio = port_gbps / endpoint_gbps
    return int(round(ratio)) if ratio >= 1 and abs(ratio - round(ratio)) < 1e-9 else 0


def leaf_split(ports, oversubscription):
    """(down, up) physical ports of a leaf for o:1 oversubscription (vectorised)."""
    ports = np.asarray(ports)
    down = np.floor(ports * np.asarray(oversubscription) / (np.asarray(oversubscription) + 1)).astype(np.int64)
    if down.ndim == 0:
        return int(down), int(ports) - int(down)
    return down, ports - down


def agg_down(ports):
    """Aggregation switches of a 3-tier fabric are non-blocking: half their ports down."""
    return np.asarray(ports) // 2 if np.ndim(ports) else ports // 2


def max_down_ports(tier, ports, oversubscription):
    """Capacity of a tier in switch down-ports (endpoints = down-ports x breakout); vectorised."""
    down, _ = leaf_split(ports, oversubscription)
    two = ports * down  # at most `ports` leaves: every spine port reaches one leaf
    three = two * agg_down(ports)  # p/2 pods of a two-tier fabric (p^3/4 when o = 1)
    if np.ndim(tier) == 0 and np.ndim(ports) == 0:
        return {0: 0, 1: ports, 2: two, 3: three}[int(tier)]
    return np.select([tier == 1, tier == 2, tier == 3], [ports, two, three], 0)


@dataclass(frozen=True)
class Switches:
    """Switch and link counts of one fabric."""

    down_ports: int
    by_tier: dict[str, int]  # "leaf"/"spine"/"core" (a single switch is a "leaf")
    uplinks: int  # switch-to-switch links

    @property
    def total(self) -> int:
        return sum(self.by_tier.values())


def size_arrays(endpoints, tier, ports, breakout_, oversubscription) -> dict[str, np.ndarray]:
    """The smallest fabric of each row's tier for its endpoints, in closed form: down_ports, leaf, spine,
    core, uplinks, switches and `fits` (False where the tier cannot hold the endpoints). Tier 0 is a single
    node: no fabric.
      tier 1: one switch of D = ceil(E/b) down-ports
      tier 2: L = ceil(D/d) leaves, S = ceil(L u / p) spines, uplinks L u
      tier 3: L leaves, A = ceil(L u / a) aggregation, C = ceil(A (p - a) / p) core, uplinks L u + A (p - a)"""
    e, t = np.asarray(endpoints, dtype=np.int64), np.asarray(tier, dtype=np.int64)
    p, b = np.asarray(ports, dtype=np.int64), np.maximum(np.asarray(breakout_, dtype=np.int64), 1)
    down_ports = np.where(t > 0, -(-e // b), 0)
    d, u = leaf_split(p, oversubscription)
    d, u = np.maximum(np.asarray(d), 1), np.asarray(u)
    a = np.maximum(agg_down(p), 1)
    leaves_multi = -(-down_ports // d)
    aggs = np.where(t == 3, -(-(leaves_multi * u) // a), 0)
    leaf = np.select([t == 1, t >= 2], [1, leaves_multi], 0)
    spine = np.select([t == 2, t == 3], [-(-(leaves_multi * u) // np.maximum(p, 1)), aggs], 0)
    core = np.where(t == 3, -(-(aggs * (p - a)) // np.maximum(p, 1)), 0)
    uplinks = np.select([t == 2, t == 3], [leaves_multi * u, leaves_multi * u + aggs * (p - a)], 0)
    fits = down_ports <= max_down_ports(t, p, oversubscription)
    return {
        "down_ports": down_ports,
        "leaf": leaf,
        "spine": spine,
        "core": core,
        "switches": leaf + spine + core,
        "uplinks": uplinks,
        "fits": fits | (t == 0),
    }


def size(endpoints: int, tier: int, ports: int, breakout_: int, oversubscription: float) -> Switches | None:
    """Smallest fabric of this tier for `endpoints`; None when the tier cannot hold them."""
    s = {k: np.asarray(v).item() for k, v in size_arrays(endpoints, tier, ports, breakout_, oversubscription).items()}
    if not s["fits"]:
        return None
    names = {0: (), 1: ("leaf",), 2: ("leaf", "spine"), 3: ("leaf", "spine", "core")}[tier]
    return Switches(int(s["down_ports"]), {n: int(s[n]) for n in names}, int(s["uplinks"]))


# ---------------------------------------------------------------- optics and cables


@dataclass(frozen=True)
class Items:
    """Optics/cable SKUs per unit (per endpoint, per down-port or per uplink) and their cost and power."""

    skus: tuple[tuple[str, float], ...] = ()
    usd: float = 0.0
    watts: float = 0.0


def _items(rows: Iterable[tuple[OpticRow, float]]) -> Items:
    rows = list(rows)
    return Items(
        tuple((r.sku, q) for r, q in rows), sum(r.price_usd * q for r, q in rows), sum(r.power_w * q for r, q in rows)
    )


def _cheapest(
    optics: list[OpticRow],
    kinds: tuple[str, ...],
    gbps: float,
    reach_m: float,
    fabric: str,
    legs: int = 1,
    usd_per_w: float = 0.0,
) -> OpticRow | None:
    fits = [
        o
        for o in optics
        if o.kind in kinds
        and abs(o.gbps - gbps) < 1e-9
        and o.reach_m >= reach_m
        and o.fabric in (fabric, "any")
        and o.breakout == legs
    ]
    return min(fits, key=lambda o: (o.price_usd + o.power_w * usd_per_w, o.power_w, o.sku), default=None)


def node_links(
    optics: list[OpticRow],
    fabric: str,
    endpoint_gbps: float,
    port_gbps: float,
    b: int,
    reach_m: float,
    usd_per_w: float = 0.0,
) -> tuple[Items, Items, str] | None:
    """Cheapest way to connect NIC ports to leaf ports: (per endpoint, per down-port, description).
    Cheapest counts each watt at usd_per_w (the energy price over the horizon when the objective is TCO).
    A cable serves one switch port (a splitter with b legs when b > 1); optics are a NIC-side transceiver
    and fibre per endpoint plus a switch-side transceiver at port speed per down-port (for b > 1 this
    assumes a breakout-capable module, e.g. DR4 to DR1s)."""
    options = []
    cable = _cheapest(optics, ("dac", "aoc"), port_gbps, reach_m, fabric, legs=b, usd_per_w=usd_per_w)
    if cable is not None:  # one cable per switch port; with b > 1 a splitter cable with b legs
        options.append((Items(), _items([(cable, 1)]), f"{cable.kind.upper()} {cable.sku}"))
    nic_side = _cheapest(optics, ("transceiver",), endpoint_gbps, reach_m, fabric, usd_per_w=usd_per_w)
    fibre = _cheapest(optics, ("fiber",), endpoint_gbps, reach_m, fabric, usd_per_w=usd_per_w)
    switch_side = _cheapest(optics, ("transceiver",), port_gbps, reach_m, fabric, usd_per_w=usd_per_w)
    if nic_side and fibre and switch_side:
        options.append(
            (
                _items([(nic_side, 1), (fibre, 1)]),
                _items([(switch_side, 1)]),
                f"optics {nic_side.sku} + {fibre.sku} + {switch_side.sku}",
            )
        )
    if not options:
        return None
    return min(options, key=lambda o: (_value(o[0], usd_per_w) + _value(o[1], usd_per_w) / b, o[2]))


def _value(items: Items, usd_per_w: float) -> float:
    return items.usd + items.watts * usd_per_w


def switch_links(
    optics: list[OpticRow], fabric: str, port_gbps: float, reach_m: float, usd_per_w: float = 0.0
) -> tuple[Items, str] | None:
    """Cheapest switch-to-switch link at port speed: a cable, or two transceivers and a fibre."""
    options = []
    cable = _cheapest(optics, ("dac", "aoc"), port_gbps, reach_m, fabric, usd_per_w=usd_per_w)
    if cable is not None:
        options.append((_items([(cable, 1)]), f"{cable.kind.upper()} {cable.sku}"))
    module = _cheapest(optics, ("transceiver",), port_gbps, reach_m, fabric, usd_per_w=usd_per_w)
    fibre = _cheapest(optics, ("fiber",), port_gbps, reach_m, fabric, usd_per_w=usd_per_w)
    if module and fibre:
        options.append((_items([(module, 2), (fibre, 1)]), f"optics 2x {module.sku} + {fibre.sku}"))
    return min(options, key=lambda o: (_value(o[0], usd_per_w), o[1]), default=None)
