"""Ports, connectors and links as data (docs/plan.md section 2).

A link is valid only if both ends and the medium agree:
  * the plug fits the cage: form factor (a QSFP28 plug fits a QSFP56/QSFP112/QSFP-DD cage, never an OSFP),
    an OSFP plug has as many ports as the cage (NVIDIA: single-port OSFP modules do not go in twin-port
    switch cages), the module top the cage needs (air-cooled switch cages: finned; NIC cages: flat), and no
    more lanes than the cage has;
  * both ends run the plug's lane rate and signalling (100G-PAM4 NDR optics do not talk to 25G-NRZ EDR);
  * a splitter's legs carry whole ports at the NIC's native lanes, within the switch's breakout limit;
  * between transceivers the fibre has the same connector and fibre type (MMF/SMF MPO-12/APC), splits an
    engine into whole legs, and every part reaches the run (a cable or fibre has an orderable length).
The planner builds links only from combinations that pass these checks, and `planner catalog validate`
applies the per-row checks to every catalog row (catalog_problems). The same checks validate a plan's links
(tests check every link of every shipped example).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable
from dataclasses import dataclass, field

from planner.base.errors import CatalogProblem
from planner.catalog.rows import NicRow, OpticRow, ServerRow, SwitchRow

# A plug of one QSFP generation fits cages of its generation or later (QSFP28 < QSFP56 < QSFP112 = QSFP-DD);
# the rate check then decides whether the port runs the plug's lanes.
QSFP_GENERATION = {"QSFP28": 1, "QSFP56": 2, "QSFP112": 3, "QSFP-DD": 3}
QSFP_LANES = {"QSFP28": 4, "QSFP56": 4, "QSFP112": 4, "QSFP-DD": 8}
# Fastest electrical lane per cage type (QSFP28 25G-NRZ, QSFP56 50G-PAM4, QSFP112 100G-PAM4, OSFP up to
# 200G-PAM4 for XDR); a row claiming more describes a part that cannot exist.
MAX_LANE_GBPS = {"QSFP28": 25.0, "QSFP56": 50.0, "QSFP112": 100.0, "QSFP-DD": 100.0, "OSFP": 200.0, "RJ45": 1.0}


def rate(lane_gbps: float | None, signalling: str | None) -> str | None:
    """'100G-PAM4' from 100 and PAM4 (None when either is unknown)."""
    return f"{lane_gbps:g}G-{signalling}" if lane_gbps and signalling else None


@dataclass(frozen=True)
class End:
    """One side of a link: a cage on a device, with the ports, lanes and lane rates it runs."""

    device: str
    cage: str | None
    ports: int  # logical ports per cage (2: twin-port OSFP)
    lanes: int | None  # lanes per port at the native rate
    rates: tuple[str, ...]  # lane rates it runs, native first
    top: str | None
    max_breakout: int = 1  # switches: most endpoints per logical port
    gbps: float | None = None  # a logical port's native rate

    @property
    def native(self) -> str | None:
        return self.rates[0] if self.rates else None


def nic_end(nic: NicRow, server: ServerRow | None = None) -> End:
    """A NIC port's end: the card's own cage, or the server's (DGX H100: two NIC ports per twin-port
    flat-top OSFP cage)."""
    rates = tuple(r for r in (rate(nic.lane_gbps, nic.signalling), *nic.lane_modes) if r)
    if server is not None and server.nic_cage:
        cage, ports = server.nic_cage, server.nic_cage_ports or 1
        return End(server.name, cage, ports, nic.lanes, rates, server.nic_cage_top, gbps=nic.port_gbps)
    return End(nic.sku, nic.cage, nic.ports_per_cage, nic.lanes, rates, nic.top, gbps=nic.port_gbps)


def switch_end(switch: SwitchRow) -> End:
    rates = tuple(r for r in (rate(switch.lane_gbps, switch.signalling), *switch.lane_modes) if r)
    ppc, breakout = switch.ports_per_cage, switch.max_breakout
    return End(switch.sku, switch.cage, ppc, switch.lanes, rates, switch.top, breakout, switch.port_gbps)


# ---------------------------------------------------------------- plugs


@dataclass(frozen=True)
class Plug:
    """What goes into a cage: a transceiver, a cable's head or one of its legs."""

    what: str
    cage: str | None
    ports: int
    lanes: int | None  # per port
    rate: str | None
    top: str | None


def module_plug(row: OpticRow) -> Plug:
    return Plug(row.sku, row.cage, row.ports, row.lanes, rate(row.lane_gbps, row.signalling), row.top)


def head_plug(row: OpticRow) -> Plug:
    """A cable's head: its ports carry all legs' lanes (MCP7Y00: two 4-lane ports feeding two legs)."""
    lanes = row.lanes * row.breakout // row.ports if row.lanes else None
    return Plug(f"{row.sku} head", row.cage, row.ports, lanes, rate(row.lane_gbps, row.signalling), row.top)


def leg_plug(row: OpticRow) -> Plug:
    """One leg of a cable (a straight cable has one leg: its far head)."""
    ports = max(1, row.ports // row.breakout)
    lanes = row.lanes // ports if row.lanes else None
    what = f"{row.sku} leg" if row.breakout > 1 else f"{row.sku} far end"
    return Plug(what, row.leg_cage, ports, lanes, rate(row.lane_gbps, row.signalling), row.leg_top)


def cage_fits(plug: str | None, cage: str | None) -> bool:
    if plug is None or cage is None or plug == cage:
        return True
    return plug in QSFP_GENERATION and cage in QSFP_GENERATION and QSFP_GENERATION[plug] <= QSFP_GENERATION[cage]


@functools.lru_cache(maxsize=65536)
def _plug_problems(plug: Plug, end: End) -> tuple[str, ...]:
    return tuple(_plug_check(plug, end))


def plug_problems(plug: Plug, end: End) -> list[str]:
    """Why `plug` does not fit `end`'s cage or run at its lane rates (empty: it fits)."""
    return list(_plug_problems(plug, end))


def _plug_check(plug: Plug, end: End) -> list[str]:
    problems = []
    if not cage_fits(plug.cage, end.cage):
        problems.append(f"{plug.what} is {plug.cage}; {end.device} has {end.cage} cages")
        return problems
    if end.cage == "OSFP" and plug.cage == "OSFP" and plug.ports != end.ports:
        kinds = {1: "single-port", 2: "twin-port"}
        problems.append(
            f"{plug.what} is {kinds.get(plug.ports, plug.ports)}; {end.device}'s OSFP cages are "
            f"{kinds.get(end.ports, end.ports)}"
        )
    if plug.top and end.top and plug.top != end.top:
        problems.append(f"{plug.what} has a {plug.top} top; {end.device}'s cages take {end.top}-top modules")
    if end.cage == "OSFP" and plug.lanes and end.lanes and plug.lanes != end.lanes:
        problems.append(f"{plug.what} has {plug.lanes} lanes per port; {end.device} has {end.lanes}")
    physical = QSFP_LANES.get(end.cage or "")
    if physical and plug.lanes and plug.lanes * plug.ports > physical:
        problems.append(f"{plug.what} needs {plug.lanes * plug.ports} lanes; a {end.cage} cage has {physical}")
    if plug.rate and end.rates and plug.rate not in end.rates:
        problems.append(f"{plug.what} runs {plug.rate} lanes; {end.device} runs {', '.join(end.rates)}")
    return problems


def _gbps_problems(carried: float, end: End, what: str, exact: bool) -> list[str]:
    """A link carries `carried` Gbps into one of `end`'s ports: exactly its rate (a link at full speed) or,
    where the port runs slower modes, at most its rate."""
    if end.gbps is None:
        return []
    if (exact and abs(carried - end.gbps) > 1e-6) or carried > end.gbps + 1e-6:
        return [f"{what} carries {carried:g} Gbps per port; a {end.device} port runs {end.gbps:g}"]
    return []


def _full_rate(lanes: int | None, lane_rate: str | None, end: End, what: str) -> list[str]:
    """The NIC port must run at its native lanes and rate (a compute link at full speed)."""
    problems = []
    if lane_rate and end.native and lane_rate != end.native:
        problems.append(f"{what} runs {lane_rate}; {end.device}'s native rate is {end.native}")
    if lanes and end.lanes and lanes != end.lanes:
        problems.append(f"{what} lights {lanes} lanes; a {end.device} port uses {end.lanes}")
    return problems


def _fabric_problems(parts: Iterable[OpticRow], fabric: str) -> list[str]:
    wire = "ib" if fabric == "ib" else "roce"  # Spectrum-X runs over Ethernet parts
    return [f"{p.sku} is for {p.fabric} only, not {fabric}" for p in parts if p.fabric not in ("any", wire)]


def _length_problems(row: OpticRow, length_m: float) -> list[str]:
    if row.length_for(length_m) is None:
        longest = row.lengths[-1][0] if row.lengths else row.reach_m
        return [f"{row.sku} comes no longer than {longest:g} m; the run is {length_m:.1f} m"]
    return []


# ---------------------------------------------------------------- links


@dataclass(frozen=True)
class Part:
    """A SKU of a link and how many per unit: per endpoint (NIC port), per cage (switch side) or per uplink."""

    row: OpticRow
    unit: str
    qty: float


@dataclass(frozen=True)
class Link:
    """One way to connect: its parts, how many NIC ports one switch cage serves, and the switch breakout."""

    medium: str  # DAC, ACC, AOC, optics
    parts: tuple[Part, ...]
    endpoints_per_cage: int = 0
    breakout: int = 1
    text: str = ""
    rows: tuple[OpticRow, ...] = field(default=())  # in order along the link: switch side first

    def usd(self, unit: str, usd_per_w: float = 0.0) -> float:
        return sum((p.row.price_usd + p.row.power_w * usd_per_w) * p.qty for p in self.parts if p.unit == unit)

    def watts(self, unit: str) -> float:
        return sum(p.row.power_w * p.qty for p in self.parts if p.unit == unit)

    def skus(self, unit: str) -> tuple[tuple[str, float], ...]:
        return tuple((p.row.sku, p.qty) for p in self.parts if p.unit == unit)

    def per_endpoint_usd(self, usd_per_w: float = 0.0) -> float:
        per_cage = self.usd("cage", usd_per_w) / self.endpoints_per_cage if self.endpoints_per_cage else 0.0
        return self.usd("endpoint", usd_per_w) + per_cage


def cable_link_problems(cable: OpticRow, nic: End, switch: End, fabric: str, length_m: float, full_rate=True):
    """Why this cable cannot join a NIC port to a switch cage (empty: it can)."""
    if not cable.is_cable:
        return [f"{cable.sku} is a {cable.kind}, not a cable"]
    problems = plug_problems(head_plug(cable), switch) + plug_problems(leg_plug(cable), nic)
    leg = leg_plug(cable)
    if full_rate:
        problems += _full_rate(leg.lanes, leg.rate, nic, leg.what)
    problems += _gbps_problems(cable.gbps, nic, leg.what, full_rate)
    # a port runs a slower mode (fewer lanes) only where lanes are known; parts without lane data match exactly
    exact = cable.lanes is None or switch.lanes is None
    problems += _gbps_problems(cable.gbps * cable.breakout / cable.ports, switch, f"{cable.sku} head", exact)
    legs_per_port = cable.breakout / cable.ports
    if legs_per_port != int(legs_per_port) or legs_per_port > switch.max_breakout:
        problems.append(
            f"{cable.sku} splits a port {legs_per_port:g} ways; {switch.device} allows {switch.max_breakout}"
        )
    return problems + _fabric_problems([cable], fabric) + _length_problems(cable, length_m)


def _reach_problems(link_rows: tuple[OpticRow, ...], length_m: float) -> list[str]:
    """The length checks of a link's parts (the last checks of cable_link_problems, optics_link_problems and
    switch_link_problems): a cable, or module + fibre + module."""
    if len(link_rows) == 1:
        return _length_problems(link_rows[0], length_m)
    switch_module, fibre, nic_module = link_rows
    reach = min(switch_module.reach_m, nic_module.reach_m)
    problems = []
    if length_m > reach + 1e-9:
        problems.append(f"{switch_module.sku} / {nic_module.sku} reach {reach:g} m; the run is {length_m:.1f} m")
    return problems + _length_problems(fibre, length_m)


def optics_link_problems(
    switch_module: OpticRow,
    fibre: OpticRow,
    nic_module: OpticRow,
    nic: End,
    switch: End,
    fabric: str,
    length_m: float,
    full_rate: bool = True,
) -> list[str]:
    """Why switch module + fibre + NIC module cannot join a NIC port to a switch cage (empty: they can).
    full_rate: the NIC port must run its native lanes and rate (compute and storage links); management
    links run at the cable's rate (100GbE on a 200G port)."""
    problems = plug_problems(module_plug(switch_module), switch) + plug_problems(module_plug(nic_module), nic)
    problems += _optical_problems(switch_module, fibre, nic_module)
    if full_rate:
        problems += _full_rate(fibre.lanes, rate(nic_module.lane_gbps, nic_module.signalling), nic, f"{fibre.sku} leg")
    lit = switch_module.gbps / fibre.breakout
    problems += _gbps_problems(lit, nic, f"{fibre.sku} leg", full_rate)
    exact = switch_module.lanes is None or switch.lanes is None
    problems += _gbps_problems(switch_module.gbps, switch, switch_module.sku, exact)
    if lit > nic_module.gbps + 1e-6:
        problems.append(f"{nic_module.sku} runs {nic_module.gbps:g} Gbps; the link carries {lit:g}")
    if fibre.breakout > switch.max_breakout:
        problems.append(
            f"{fibre.sku} splits a port {fibre.breakout} ways; {switch.device} allows {switch.max_breakout}"
        )
    problems += _fabric_problems([switch_module, fibre, nic_module], fabric)
    return problems + _reach_problems((switch_module, fibre, nic_module), length_m)


def _optical_problems(a: OpticRow, fibre: OpticRow, b: OpticRow) -> list[str]:
    """Two transceivers and the fibre between them: same lane rate, connector and fibre type; the fibre
    splits an engine of `a` into whole legs that `b` can light."""
    problems = [f"{x.sku} is a {x.kind}, not a transceiver" for x in (a, b) if x.kind != "transceiver"]
    if fibre.kind != "fiber":
        problems.append(f"{fibre.sku} is a {fibre.kind}, not a fibre")
    if problems:
        return problems
    rate_a, rate_b = rate(a.lane_gbps, a.signalling), rate(b.lane_gbps, b.signalling)
    if rate_a and rate_b and rate_a != rate_b:
        problems.append(f"{a.sku} runs {rate_a} lanes, {b.sku} {rate_b}: they cannot link")
    for module in (a, b):
        if module.media and fibre.media and module.media != fibre.media:
            problems.append(f"{module.sku} takes {module.media}; {fibre.sku} is {fibre.media}")
    if a.lanes and fibre.lanes and fibre.lanes * fibre.breakout != a.lanes:
        problems.append(f"{fibre.sku} carries {fibre.breakout} x {fibre.lanes} lanes; a {a.sku} engine has {a.lanes}")
    if b.lanes and fibre.lanes and (fibre.lanes > b.lanes or (fibre.breakout == 1 and fibre.lanes != b.lanes)):
        problems.append(f"{fibre.sku} lights {fibre.lanes} lanes; {b.sku} has {b.lanes}")
    return problems


class LinkBook:
    """The catalog's optics with, per cage, the parts that fit it (computed once): node_links and
    switch_links enumerate only plugs that fit both ends."""

    def __init__(self, optics: list[OpticRow]):
        self.optics = optics
        self.cables = [o for o in optics if o.is_cable]
        self.modules = [o for o in optics if o.kind == "transceiver"]
        self.fibres = [o for o in optics if o.kind == "fiber"]
        self._fits: dict = {}
        self._links: dict = {}  # searches memoised by the ends' physics: many NICs and switches share a cage

    @staticmethod
    def _physics(end: End) -> End:
        """The end without its device name, which only words the checks' messages: a search's valid links
        depend on the cage, lanes, rates and breakout alone."""
        return dataclasses.replace(end, device="")

    def fitting(self, role: str, end: End) -> list[OpticRow]:
        """Modules, cable heads or cable legs (role) that fit `end`'s cage."""
        key = (role, self._physics(end))
        if key not in self._fits:
            plug, rows = {
                "module": (module_plug, self.modules),
                "head": (head_plug, self.cables),
                "leg": (leg_plug, self.cables),
            }[role]
            self._fits[key] = [r for r in rows if not plug_problems(plug(r), end)]
        return self._fits[key]

    def node_links(
        self, nic: End, switch: End, fabric: str, length_m: float, full_rate: bool = True
    ) -> tuple[Link, ...]:
        """Every valid way to join NIC ports to switch cages over `length_m`: a cable (DAC, ACC, AOC; a
        splitter serves several ports from one cage), or a switch module + fibre per engine + a NIC module."""
        key = ("node", self._physics(nic), self._physics(switch), fabric, full_rate)
        if key not in self._links:  # every length shares the checks but the reach: made once, at 0 m
            self._links[key] = tuple(self._node_links(nic, switch, fabric, 0.0, full_rate))
        return tuple(link for link in self._links[key] if not _reach_problems(link.rows, length_m))

    def _node_links(self, nic: End, switch: End, fabric: str, length_m: float, full_rate: bool) -> list[Link]:
        links = []
        legs = {id(r) for r in self.fitting("leg", nic)}
        for cable in (c for c in self.fitting("head", switch) if id(c) in legs):
            if not cable_link_problems(cable, nic, switch, fabric, length_m, full_rate):
                per_port = cable.breakout // cable.ports
                text = f"{cable.kind.upper()} {cable.sku}"
                links.append(
                    Link(cable.kind.upper(), (Part(cable, "cage", 1.0),), cable.breakout, per_port, text, (cable,))
                )
        for s in self.fitting("module", switch):
            for n in self.fitting("module", nic):
                for f in self.fibres:
                    if optics_link_problems(s, f, n, nic, switch, fabric, length_m, full_rate):
                        continue
                    parts = [Part(s, "cage", 1.0), Part(n, "endpoint", 1.0 / nic.ports)]
                    # a straight fibre per NIC port; a splitter per switch engine (both engines of a used cage)
                    parts.append(Part(f, "endpoint", 1.0) if f.breakout == 1 else Part(f, "cage", float(s.ports)))
                    text = f"optics {s.sku} + {f.sku} + {n.sku}"
                    links.append(Link("optics", tuple(parts), s.ports * f.breakout, f.breakout, text, (s, f, n)))
        return links

    def switch_links(self, switch: End, fabric: str, length_m: float) -> tuple[Link, ...]:
        """Every valid way to join two cages of this switch model (parts per switch-to-switch link)."""
        key = ("switch", self._physics(switch), fabric)
        if key not in self._links:  # as node_links: the checks once at 0 m, the reach per length
            self._links[key] = tuple(self._switch_links(switch, fabric, 0.0))
        return tuple(link for link in self._links[key] if not _reach_problems(link.rows, length_m))

    def _switch_links(self, switch: End, fabric: str, length_m: float) -> list[Link]:
        links = []
        legs = {id(r) for r in self.fitting("leg", switch)}
        for cable in (c for c in self.fitting("head", switch) if id(c) in legs):
            if not switch_link_problems([cable], switch, fabric, length_m):
                parts = (Part(cable, "uplink", 1.0 / cable.ports),)
                links.append(Link(cable.kind.upper(), parts, text=f"{cable.kind.upper()} {cable.sku}", rows=(cable,)))
        for m in self.fitting("module", switch):
            for f in self.fibres:
                if not switch_link_problems([m, f, m], switch, fabric, length_m):
                    parts = (Part(m, "uplink", 2.0 / m.ports), Part(f, "uplink", 1.0))
                    links.append(Link("optics", parts, text=f"optics 2x {m.sku} + {f.sku}", rows=(m, f, m)))
        return links


def switch_link_problems(parts: list[OpticRow], switch: End, fabric: str, length_m: float) -> list[str]:
    """Why a straight cable, or module + fibre + module, cannot join two cages of one switch model at full
    rate over `length_m` (empty: it can)."""
    if len(parts) == 1:
        cable = parts[0]
        if not cable.is_cable or cable.breakout != 1:
            return [f"{cable.sku} is not a straight cable"]
        head = head_plug(cable)
        problems = plug_problems(head, switch) + plug_problems(leg_plug(cable), switch)
        problems += _full_rate(head.lanes, head.rate, switch, cable.sku)
        problems += _gbps_problems(cable.gbps / cable.ports, switch, cable.sku, True)
        return problems + _fabric_problems([cable], fabric) + _length_problems(cable, length_m)
    a, fibre, b = parts
    problems = plug_problems(module_plug(a), switch) + plug_problems(module_plug(b), switch)
    problems += _optical_problems(a, fibre, b) + _full_rate(a.lanes, rate(a.lane_gbps, a.signalling), switch, a.sku)
    problems += _gbps_problems(a.gbps, switch, a.sku, True)
    if fibre.breakout != 1:
        problems.append(f"{fibre.sku} is a splitter; switch-to-switch links use straight fibres")
    problems += _fabric_problems([a, fibre, b], fabric) + _length_problems(fibre, length_m)
    reach = min(a.reach_m, b.reach_m)
    if length_m > reach + 1e-9:
        problems.append(f"{a.sku} reaches {reach:g} m; the run is {length_m:.1f} m")
    return problems


def node_links(
    optics: list[OpticRow], nic: End, switch: End, fabric: str, length_m: float, full_rate: bool = True
) -> tuple[Link, ...]:
    """LinkBook.node_links over these optics."""
    return LinkBook(optics).node_links(nic, switch, fabric, length_m, full_rate)


def switch_links(optics: list[OpticRow], switch: End, fabric: str, length_m: float) -> tuple[Link, ...]:
    """LinkBook.switch_links over these optics."""
    return LinkBook(optics).switch_links(switch, fabric, length_m)


def cheapest(links: Iterable[Link], usd_per_w: float = 0.0, unit: str = "endpoint") -> Link | None:
    """The cheapest link per NIC port (node links: among those splitting a switch port the most ways, so no
    switch port runs below its rate when a splitter exists) or per uplink; watts priced at usd_per_w; ties by
    name."""
    if unit == "uplink":
        key = lambda link: (link.usd("uplink", usd_per_w), link.text)  # noqa: E731
    else:
        key = lambda link: (-link.breakout, link.per_endpoint_usd(usd_per_w), link.text)  # noqa: E731
    return min(links, key=key, default=None)


# ---------------------------------------------------------------- a plan's links


def link_line_problems(catalog, line) -> list[str]:
    """Why a plan's link record (results.LinkLine) is not a valid link, at each of its run lengths, rebuilt
    from the catalog rows it names (empty: every link of it is valid)."""
    optics = {o.sku.lower(): o for o in catalog.items("optics")}
    parts = [optics[p.lower()] for p in line.parts]
    switch = switch_end(catalog.rows["switches"][(line.b_sku.lower(),)])
    problems = []
    for length in sorted(float(x) for x in line.lengths):
        if line.a_kind == "switches":
            problems += switch_link_problems(parts, switch, line.fabric, length)
            continue
        server = catalog.server(line.a_server) if line.a_server else None
        nic = nic_end(catalog.nic(line.a_sku), server)
        if len(parts) == 1:
            problems += cable_link_problems(parts[0], nic, switch, line.fabric, length, line.full_rate)
        else:
            problems += optics_link_problems(*parts, nic, switch, line.fabric, length, line.full_rate)
    return list(dict.fromkeys(problems))


# ---------------------------------------------------------------- catalog checks (`planner catalog validate`)


def catalog_problems(catalog) -> list[CatalogProblem]:
    """Rows that claim a port, cage or link that cannot exist: one problem each, with file:row:column and
    the fix."""
    problems = []
    for kind, check in (("nics", _nic_row), ("switches", _switch_row), ("optics", _optic_row)):
        for row in catalog.items(kind):
            origin = catalog.origin(row)
            problems += [CatalogProblem(origin.file, origin.row, col, val, msg) for col, val, msg in check(row)]
    return problems


def _lane_rate_claims(cage: str | None, lane_gbps: float | None, modes: Iterable[str] = ()) -> list[tuple]:
    limit = MAX_LANE_GBPS.get(cage or "")
    out = []
    speeds = [(lane_gbps, "lane_gbps")] + [(float(m.split("G-")[0]), "lane_modes") for m in modes]
    for gbps, column in speeds:
        if limit and gbps and gbps > limit + 1e-9:
            out.append(
                (column, gbps, f"a {cage} cage carries at most {limit:g}G per lane; fix the cage or the lane rate")
            )
    return out


def _nic_row(nic: NicRow) -> list[tuple]:
    out = _lane_rate_claims(nic.cage, nic.lane_gbps, nic.lane_modes)
    if nic.lanes and nic.lane_gbps and abs(nic.ports * nic.lanes * nic.lane_gbps - nic.speed_gbps) > 1e-6:
        line = nic.ports * nic.lanes * nic.lane_gbps
        out.append(("speed_gbps", nic.speed_gbps, f"ports x lanes x lane_gbps = {line:g}; make them agree"))
    if nic.cage in QSFP_LANES and nic.lanes and nic.lanes > QSFP_LANES[nic.cage]:
        out.append(("lanes", nic.lanes, f"a {nic.cage} cage has {QSFP_LANES[nic.cage]} lanes"))
    if nic.cage == "OSFP" and nic.top == "finned":
        out.append(("top", nic.top, "NIC OSFP cages take flat-top modules (riding heat sink); write flat"))
    if nic.cage in QSFP_LANES and nic.ports_per_cage != 1:
        out.append(("ports_per_cage", nic.ports_per_cage, f"{nic.cage} cages are single-port; write 1"))
    return out


def _switch_row(switch: SwitchRow) -> list[tuple]:
    out = _lane_rate_claims(switch.cage, switch.lane_gbps, switch.lane_modes)
    if switch.lanes and switch.lane_gbps and abs(switch.lanes * switch.lane_gbps - switch.port_gbps) > 1e-6:
        out.append(
            ("port_gbps", switch.port_gbps, f"lanes x lane_gbps = {switch.lanes * switch.lane_gbps:g}; make them agree")
        )
    if switch.ports % switch.ports_per_cage:
        out.append(("ports", switch.ports, f"not a whole number of {switch.ports_per_cage}-port cages"))
    if switch.cage in QSFP_LANES and switch.ports_per_cage != 1:
        out.append(("ports_per_cage", switch.ports_per_cage, f"{switch.cage} cages are single-port; write 1"))
    if switch.lanes and switch.max_breakout > switch.lanes:
        out.append(
            ("max_breakout", switch.max_breakout, f"a {switch.lanes}-lane port splits at most {switch.lanes} ways")
        )
    return out


def _optic_row(row: OpticRow) -> list[tuple]:
    out = _lane_rate_claims(row.cage, row.lane_gbps)
    if row.is_cable:
        out += _lane_rate_claims(row.leg_cage, row.lane_gbps)
    if row.lanes and row.lane_gbps and abs(row.lanes * row.lane_gbps - row.gbps) > 1e-6:
        out.append(("gbps", row.gbps, f"lanes x lane_gbps = {row.lanes * row.lane_gbps:g}; gbps is per engine or leg"))
    if row.is_cable and row.lanes:
        if (row.lanes * row.breakout) % row.ports:
            out.append(
                ("ports", row.ports, f"{row.breakout} legs x {row.lanes} lanes do not split over {row.ports} ports")
            )
        head = QSFP_LANES.get(row.cage or "")
        if head and row.lanes * row.breakout > head:
            out.append(
                ("breakout", row.breakout, f"{row.breakout} legs x {row.lanes} lanes exceed a {row.cage} head's {head}")
            )
    if row.is_cable and not row.leg_cage and row.cage:
        out.append(("leg_cage", None, "a cable needs the cage its legs (or far end) plug into"))
    if row.kind in ("transceiver", "fiber") and not row.media and row.cage != "RJ45":
        out.append(("media", None, "give the optical connector and fibre, e.g. 'MMF MPO-12/APC'"))
    if row.kind == "fiber" and row.cage:
        out.append(("cage", row.cage, "a fibre plugs into transceivers, not cages: leave cage empty"))
    for metres, part in row.lengths:
        if metres > row.reach_m + 1e-9:
            out.append(("lengths", f"{metres:g}:{part}", f"longer than reach_m {row.reach_m:g}; fix one of them"))
    return out
