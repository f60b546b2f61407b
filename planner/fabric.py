"""Switch, optics and cable sizing (MODEL.md s.5): pure functions shared by the MILP's constants and the
brute-force check, so both count the same hardware.

Terms: an *endpoint* is one NIC port; a switch has `ports` physical ports of `port_gbps`; a port breaks out
into b = port_gbps / endpoint_gbps endpoints (b >= 1, whole). Leaves of a tier-2/3 fabric put
d = floor(ports * o / (o+1)) ports down and u = ports - d up (o:1 oversubscription; o = 1 is non-blocking).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from planner.models import OpticRow


def breakout(port_gbps: float, endpoint_gbps: float) -> int:
    """Endpoints per switch port, or 0 when the endpoint is faster or does not divide the port."""
    ratio = port_gbps / endpoint_gbps
    return int(round(ratio)) if ratio >= 1 and abs(ratio - round(ratio)) < 1e-9 else 0


def leaf_split(ports: int, oversubscription: float) -> tuple[int, int]:
    """(down, up) physical ports of a leaf for o:1 oversubscription."""
    down = math.floor(ports * oversubscription / (oversubscription + 1))
    return down, ports - down


def agg_down(ports: int) -> int:
    """Aggregation switches of a 3-tier fabric are non-blocking: half their ports down."""
    return ports // 2


def max_down_ports(tier: int, ports: int, oversubscription: float) -> int:
    """Capacity of a tier in switch down-ports (endpoints = down-ports x breakout)."""
    down, _ = leaf_split(ports, oversubscription)
    if tier == 1:
        return ports
    if tier == 2:
        return ports * down  # at most `ports` leaves: every spine port reaches one leaf
    return ports * down * agg_down(ports)  # p/2 pods of a two-tier fabric (p^3/4 when o = 1)


@dataclass(frozen=True)
class Switches:
    """Switch and link counts of one fabric."""

    down_ports: int
    by_tier: dict[str, int]  # "leaf"/"spine"/"core" (a single switch is a "leaf")
    uplinks: int  # switch-to-switch links

    @property
    def total(self) -> int:
        return sum(self.by_tier.values())


def size(endpoints: int, tier: int, ports: int, breakout_: int, oversubscription: float) -> Switches | None:
    """Smallest fabric of this tier for `endpoints`; None when the tier cannot hold them."""
    down_ports = math.ceil(endpoints / breakout_)
    if down_ports > max_down_ports(tier, ports, oversubscription):
        return None
    if tier == 1:
        return Switches(down_ports, {"leaf": 1}, 0)
    down, up = leaf_split(ports, oversubscription)
    leaves = math.ceil(down_ports / down)
    if tier == 2:
        spines = math.ceil(leaves * up / ports)
        return Switches(down_ports, {"leaf": leaves, "spine": spines}, leaves * up)
    aggs = math.ceil(leaves * up / agg_down(ports))
    cores = math.ceil(aggs * (ports - agg_down(ports)) / ports)
    return Switches(
        down_ports, {"leaf": leaves, "spine": aggs, "core": cores}, leaves * up + aggs * (ports - agg_down(ports))
    )


# ---------------------------------------------------------------- optics and cables


@dataclass(frozen=True)
class Items:
    """Optics/cable SKUs per unit (per endpoint, per down-port or per uplink) and their cost and power."""

    skus: tuple[tuple[str, float], ...] = ()
    usd: float = 0.0
    watts: float = 0.0


@dataclass(frozen=True)
class LinkPlan:
    per_endpoint: Items = field(default_factory=Items)
    per_down_port: Items = field(default_factory=Items)
    per_uplink: Items = field(default_factory=Items)
    description: str = ""


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
