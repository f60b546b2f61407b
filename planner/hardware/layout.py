"""Physical layout (docs/plan.md section 2): nodes per rack from rack power and space, racks in rows, where
the leaves sit, and the cable runs that follow (they choose the medium and each cable's orderable length).

Geometry, all from the scenario's `layout:` section:
  * a rack is `rack_units` high (EIA-310: 44.45 mm per U) and `rack_width_m` wide; servers stack from the
    bottom; `reserved_units` stay free for patch panels and top-of-rack gear;
  * nodes per rack = min(rack_kw / server nameplate kW, (rack_units - reserved_units) / server U)
    (DGX SuperPOD H100: 4 x 10.2 kW DGX in a 40.8 kW rack, RA-11333-001); liquid and hybrid cooled servers
    take liquid_rack_kw instead, and a rack-scale system must fit it (a GB300 NVL72 peaks at 155 kW);
  * compute racks stand in rows of `racks_per_row` (a rail-optimised fabric: one scalable unit per row),
    each row with one network rack: in its middle (middle-of-row) or at its end (end-of-row);
  * a run from a node climbs to the overhead tray at the rack top, crosses k racks, and drops to the
    middle of the network rack; top-of-rack runs stay in the rack; `slack_m` is added to every run;
  * rows stand `row_pitch_m` apart and the spine racks stand in the middle row: a leaf-to-spine run crosses
    |row offset| x pitch plus half a row.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from planner.assumptions import facility as D

U_METRES = 0.04445  # one rack unit, EIA-310
PLACEMENTS = ("top-of-rack", "middle-of-row", "end-of-row")


@dataclass(frozen=True)
class Geometry:
    """The layout section's figures (planner.inputs.scenario.Layout); its defaults are planner.assumptions'."""

    rack_kw: float = D.RACK_KW.value
    liquid_rack_kw: float = D.LIQUID_RACK_KW.value
    rack_units: int = int(D.RACK_UNITS.value)
    reserved_units: int = int(D.RESERVED_UNITS.value)
    rack_width_m: float = D.RACK_WIDTH_M.value
    row_pitch_m: float = D.ROW_PITCH_M.value
    racks_per_row: int = int(D.RACKS_PER_ROW.value)
    slack_m: float = D.SLACK_M.value

    @classmethod
    def of(cls, layout) -> Geometry:
        return cls(**{f: getattr(layout, f) for f in cls.__dataclass_fields__})

    @property
    def height_m(self) -> float:
        return self.rack_units * U_METRES

    @property
    def usable_units(self) -> int:
        return self.rack_units - self.reserved_units


def rack_w(g: Geometry, liquid: bool) -> float:
    """The IT power one rack position takes: an air-cooled rack's, or a liquid-cooled one's."""
    return (g.liquid_rack_kw if liquid else g.rack_kw) * 1e3


def nodes_per_rack(server_w: float, server_units: int | None, g: Geometry, liquid: bool = False) -> int:
    """How many servers one rack powers and holds (0: one server alone exceeds the rack's power); liquid and
    hybrid cooled servers stand in liquid-cooled racks."""
    by_power = math.floor(rack_w(g, liquid) / server_w + 1e-9) if server_w > 0 else 10**6
    by_space = g.usable_units // server_units if server_units else 10**6
    return max(0, min(by_power, by_space))


def pdus_per_rack(load_w: float, pdu_kw: float) -> int:
    """PDUs for a rack's load, N+1: enough to carry the load, plus one (SuperPOD H100: 3 x 34.5 kVA per
    40.8 kW compute rack, 2 per management rack; RA-11333-001 Table 7)."""
    return math.ceil(load_w / (pdu_kw * 1e3) - 1e-9) + 1


# ---------------------------------------------------------------- runs


def node_height_m(slot: int, server_units: int | None) -> float:
    """Height of a node's ports above the rack floor (servers stack from the bottom)."""
    return (slot + 0.5) * (server_units or 1) * U_METRES


@functools.lru_cache(maxsize=4096)
def node_run_m(slot: int, racks_away: int, placement: str, server_units: int | None, g: Geometry) -> float:
    """Cable run from the node in `slot` to its leaf: up to the top of its own rack (top-of-rack), or up to
    the tray, across `racks_away` racks and down to the middle of the network rack."""
    up = g.height_m - node_height_m(slot, server_units)
    if placement == "top-of-rack":
        return up + g.slack_m
    return up + racks_away * g.rack_width_m + g.height_m / 2 + g.slack_m


@functools.lru_cache(maxsize=4096)
def racks_away(position: int, racks_in_row: int, placement: str) -> int:
    """How many racks separate compute rack `position` (0-based) of a row from its network rack: beside it
    at the row's end, or on either side of it in the row's middle."""
    if placement == "top-of-rack":
        return 0
    if placement == "end-of-row":
        return position + 1
    left = math.ceil(racks_in_row / 2)
    return position + 1 if position < left else position - left + 1


@functools.lru_cache(maxsize=4096)
def longest_node_run_m(placement: str, npr: int, server_units: int | None, racks_in_row: int, g: Geometry) -> float:
    """The longest node-to-leaf run of a full row (it decides the medium)."""
    far = max(racks_away(p, racks_in_row, placement) for p in range(max(racks_in_row, 1)))
    return node_run_m(0, far, placement, server_units, g)


@functools.lru_cache(maxsize=4096)
def uplink_run_m(row_offset: int, racks_in_row: int, g: Geometry) -> float:
    """Leaf (in its row's network rack) to the spine racks in the middle row: up, half a row along, across
    the rows, down. Spine-to-core runs stay in the spine row (row_offset 0)."""
    return g.height_m + (racks_in_row / 2) * g.rack_width_m + row_offset * g.row_pitch_m + g.height_m / 2 + g.slack_m


def rows_within(reach_m: float, racks_in_row: int, g: Geometry) -> int:
    """How many rows the spine row's uplinks reach (rows on both sides of the middle row)."""
    if uplink_run_m(0, racks_in_row, g) > reach_m + 1e-9:
        return 0
    offset = math.floor((reach_m - uplink_run_m(0, racks_in_row, g)) / g.row_pitch_m + 1e-9)
    return 2 * offset + 1


def rows_of(racks: int, racks_in_row: int) -> int:
    return -(-racks // max(racks_in_row, 1))


def row_offset(row: int, rows: int) -> int:
    """Distance in rows from row `row` to the middle row of `rows`."""
    return abs(row - (rows - 1) // 2)
