"""Plain-text tables for the terminal. No colours, so output pipes and diffs cleanly."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence

from planner.base.text import visible


def format_cell(column: str, value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ";".join(map(str, value))
    if isinstance(value, int | float):
        if "usd" in column:
            return f"${value:,.2f}" if value != int(value) and abs(value) < 1000 else f"${value:,.0f}"
        if float(value).is_integer():
            return f"{int(value):,}" if abs(value) >= 1e4 else str(int(value))
        return f"{value:.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
    return visible(str(value))  # one line: a note's line feed would start a row of its own


def _numeric(values: Sequence[object]) -> bool:
    present = [v for v in values if v is not None and v != ""]
    return bool(present) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present)


def format_table(
    records: Sequence[Mapping[str, object]],
    columns: Sequence[str],
    max_width: int = 48,
    wrap: Sequence[str] = (),
) -> str:
    """Aligned columns; numbers right-aligned; long text cut with an ellipsis, or, in the `wrap` columns,
    wrapped onto continuation lines at max_width so nothing is lost (two options that differ late in a
    long description must still read differently)."""
    cells = [[format_cell(c, r.get(c)) for c in columns] for r in records]
    pieces = [[_fit(v, max_width, c in wrap) for v, c in zip(row, columns, strict=True)] for row in cells]
    right = [_numeric([r.get(c) for r in records]) for c in columns]
    widths = [max([len(c)] + [len(p) for row in pieces for p in row[i]]) for i, c in enumerate(columns)]

    def line(values: Sequence[str]) -> str:
        parts = [v.rjust(w) if r else v.ljust(w) for v, w, r in zip(values, widths, right, strict=True)]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    body = []
    for row in pieces:
        for k in range(max(len(p) for p in row)):
            body.append(line([p[k] if k < len(p) else "" for p in row]))
    return "\n".join([line(list(columns)), rule] + body)


def _fit(text: str, width: int, wrap: bool) -> list[str]:
    if len(text) <= width:
        return [text]
    if not wrap:
        return [text[: width - 1] + "…"]
    return textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False) or [""]
