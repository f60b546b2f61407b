"""Plain-text tables for the terminal. No colours, so output pipes and diffs cleanly."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


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
    return str(value)


def _numeric(values: Sequence[object]) -> bool:
    present = [v for v in values if v is not None and v != ""]
    return bool(present) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present)


def format_table(records: Sequence[Mapping[str, object]], columns: Sequence[str], max_width: int = 48) -> str:
    """Aligned columns; numbers right-aligned; long text cut with an ellipsis."""
    cells = [[format_cell(c, r.get(c)) for c in columns] for r in records]
    cells = [[v if len(v) <= max_width else v[: max_width - 1] + "…" for v in row] for row in cells]
    right = [_numeric([r.get(c) for r in records]) for c in columns]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]

    def line(values: Sequence[str]) -> str:
        parts = [v.rjust(w) if r else v.ljust(w) for v, w, r in zip(values, widths, right, strict=True)]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(list(columns)), rule] + [line(row) for row in cells])
