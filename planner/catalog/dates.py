"""How old a catalog figure is: a row's date (YYYY, YYYY-MM or YYYY-MM-DD) against the day a plan is made.

A date that names only a year or a month is read as its first day: a price known only as "2025" may be from
January, so it is taken as old as it may be (a stale price is flagged rather than missed)."""

from __future__ import annotations

import datetime as dt


def period_start(text: str) -> dt.date:
    """The first day of the period a catalog date names ("2025" -> 2025-01-01, "2025-07" -> 2025-07-01)."""
    parts = [int(p) for p in str(text).split("-")]
    return dt.date(parts[0], parts[1] if len(parts) > 1 else 1, parts[2] if len(parts) > 2 else 1)


def months_old(text: str, as_of: dt.date) -> int:
    """Whole months from the date's period start to as_of (0 when not before it)."""
    start = period_start(text)
    months = (as_of.year - start.year) * 12 + (as_of.month - start.month) - (as_of.day < start.day)
    return max(0, months)


def is_stale(text: str, as_of: dt.date, months: int) -> bool:
    """Older than `months` whole months as of that day."""
    return months_old(text, as_of) > months
