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
  * rows stand `row_pitch_m` apart in data halls of `rows_per_hall` rows; halls stand side by side, in as
    many columns as make the floor nearest to square (a hall is a row's length wide plus `hall_aisle_m`, its
    rows deep plus the aisle), and the spine and core racks stand at the floor's centre (the median row
    position on each axis, which minimises the total run); a leaf-to-spine run climbs, crosses half a row,
    runs the Manhattan distance from its row's network rack to the centre and drops. One hall: the spines
    stand in the middle row and a run crosses |row offset| x pitch.
"""

from __future__ import annotations

import functools
import itertools
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
    rows_per_hall: int = int(D.ROWS_PER_HALL.value)
    hall_aisle_m: float = D.HALL_AISLE_M.value

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


def _base_uplink_m(racks_in_row: int, g: Geometry) -> float:
    """A switch-to-switch run that stays in the spine room: up, half a row along, down."""
    return g.height_m + (racks_in_row / 2) * g.rack_width_m + g.height_m / 2 + g.slack_m


def hall_size_m(rows: int, racks_in_row: int, g: Geometry) -> tuple[float, float]:
    """(width, depth) of a hall of a floor of `rows` rows: a row and its network rack plus the aisle; its
    rows (a full hall's, or all of them in one hall) plus the aisle."""
    return (racks_in_row + 1) * g.rack_width_m + g.hall_aisle_m, min(rows, g.rows_per_hall) * g.row_pitch_m + (
        g.hall_aisle_m
    )


def hall_columns(rows: int, racks_in_row: int, g: Geometry) -> int:
    """Columns of halls: the whole number that makes the floor nearest to square (1 for one hall)."""
    halls = rows_of(rows, g.rows_per_hall)
    width, depth = hall_size_m(rows, racks_in_row, g)
    return min(range(1, halls + 1), key=lambda c: (abs(c * width - rows_of(halls, c) * depth), c))


@dataclass(frozen=True)
class Floor:
    """Where each row's network rack stands: rows `rows_per_hall` to a hall, halls in `columns` columns of
    `width` m, grid rows of `depth` m; the spine room at `centre` (the lower median of the rows' positions
    on each axis: the middle row of one hall)."""

    rows: int
    per_hall: int
    columns: int
    width: float
    depth: float
    pitch: float
    centre: tuple[float, float]

    def hall_rows(self, hall: int) -> int:
        return min(self.per_hall, self.rows - hall * self.per_hall)

    def spot(self, row: int) -> tuple[float, float]:
        hall, in_hall = divmod(row, self.per_hall)
        return (hall % self.columns) * self.width, (hall // self.columns) * self.depth + in_hall * self.pitch

    def farthest_m(self) -> float:
        """The longest Manhattan distance from a row to the centre: at a hall's first or last row."""
        cx, cy = self.centre
        far = 0.0
        for hall in range(rows_of(self.rows, self.per_hall)):
            x, y0 = self.spot(hall * self.per_hall)
            y1 = y0 + (self.hall_rows(hall) - 1) * self.pitch
            far = max(far, abs(x - cx) + max(abs(y0 - cy), abs(y1 - cy)))
        return far


def floor(rows: int, racks_in_row: int, g: Geometry) -> Floor:
    rows = max(rows, 1)
    width, depth = hall_size_m(rows, racks_in_row, g)
    columns, per_hall = hall_columns(rows, racks_in_row, g), g.rows_per_hall
    halls = rows_of(rows, per_hall)
    bare = Floor(rows, per_hall, columns, width, depth, g.row_pitch_m, (0.0, 0.0))
    median = (rows - 1) // 2  # the lower median's rank
    by_column = [0] * columns
    for hall in range(halls):
        by_column[hall % columns] += bare.hall_rows(hall)
    cx = next(c for c, seen in enumerate(itertools.accumulate(by_column)) if seen > median) * width
    grid_rows = [[h for h in range(halls) if h // columns == r] for r in range(rows_of(halls, columns))]
    before = 0
    for r, members in enumerate(grid_rows):
        here = sum(bare.hall_rows(h) for h in members)
        if before + here > median:  # the median's row position within this grid row, by multiplicity
            for i in range(per_hall):
                before += sum(1 for h in members if bare.hall_rows(h) > i)
                if before > median:
                    cy = r * depth + i * g.row_pitch_m
                    break
            break
        before += here
    return Floor(rows, per_hall, columns, width, depth, g.row_pitch_m, (cx, cy))


@functools.lru_cache(maxsize=4096)
def row_uplink_runs_m(rows: int, racks_in_row: int, g: Geometry) -> tuple[float, ...]:
    """Each row's leaf-to-spine run: up, half a row, the Manhattan distance to the spine room, down."""
    f, base = floor(rows, racks_in_row, g), _base_uplink_m(racks_in_row, g)
    cx, cy = f.centre
    return tuple(base + abs(x - cx) + abs(y - cy) for x, y in map(f.spot, range(f.rows)))


_LONGEST: dict[tuple[int, Geometry], list[float]] = {}


def longest_uplink_run_m(rows: int, racks_in_row: int, g: Geometry) -> float:
    """The longest leaf-to-spine run of any floor of up to `rows` rows (non-decreasing in rows, so that a
    link chosen for a size serves every smaller plan)."""
    known = _LONGEST.setdefault((racks_in_row, g), [_base_uplink_m(racks_in_row, g)])
    while len(known) < max(rows, 1):
        far = floor(len(known) + 1, racks_in_row, g).farthest_m()
        known.append(max(known[-1], _base_uplink_m(racks_in_row, g) + far))
    return known[max(rows, 1) - 1]


def spine_room_run_m(racks_in_row: int, g: Geometry) -> float:
    """Spine-to-core runs stay in the spine room at the floor's centre."""
    return _base_uplink_m(racks_in_row, g)


def rows_of(racks: int, racks_in_row: int) -> int:
    return -(-racks // max(racks_in_row, 1))
