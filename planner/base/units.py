"""Parse and print quantities the way people type them: "176B", "400Gbps", "80GiB", "$36,000", "10.2kW".

Each dimension has one canonical unit, the one in the column or option name:
count (plain number), gbps (Gbit/s), gb_per_s (GByte/s), gib (GiB), usd, w (watts), s (seconds),
days, tflops. A bare number is taken in the canonical unit. Parsing is strict: an unknown unit is an
error that lists the units the dimension accepts, never a silent guess.
"""

from __future__ import annotations

import math
import re

from planner.base.limits import MAX_QUANTITY_CHARS, short

SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86400.0
HOURS_PER_YEAR = 8760.0
HOURS_PER_MONTH = HOURS_PER_YEAR / 12  # 730: the cloud providers' billing month
GIB = 2**30
GB = 1e9  # decimal gigabyte (bandwidths in GB/s)

_NUMBER = re.compile(
    r"^\s*(?P<currency>\$|usd\s*)?\s*(?P<num>[+-]?(?:\d[\d,_]*\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*"
    r"(?P<unit>[^\d\s].*?)?\s*$",
    re.IGNORECASE,
)
_GROUPED = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?$")

# unit text (matched case-sensitively first, then case-insensitively) -> factor to the canonical unit
_UNITS: dict[str, dict[str, float]] = {
    "count": {"": 1, "k": 1e3, "m": 1e6, "b": 1e9, "bn": 1e9, "g": 1e9, "t": 1e12},
    "gbps": {
        "": 1,
        "bps": 1e-9,
        "kbps": 1e-6,
        "mbps": 1e-3,
        "gbps": 1,
        "tbps": 1e3,
        "kb/s": 1e-6,
        "mb/s": 1e-3,
        "gb/s": 1,
        "tb/s": 1e3,
        "gbit/s": 1,
        "tbit/s": 1e3,
        "g": 1,
        "t": 1e3,
        # bytes per second, case-sensitive capital B, converted to bits
        "B/s": 8e-9,
        "KB/s": 8e-6,
        "MB/s": 8e-3,
        "GB/s": 8,
        "TB/s": 8e3,
        "GBps": 8,
        "TBps": 8e3,
    },
    "gb_per_s": {
        "": 1,
        "GB/s": 1,
        "TB/s": 1e3,
        "MB/s": 1e-3,
        "GBps": 1,
        "TBps": 1e3,
        "GiB/s": 2**30 / 1e9,
        "TiB/s": 2**40 / 1e9,
        "gbps": 1 / 8,
        "tbps": 1e3 / 8,
        "gb/s": 1 / 8,
        "gbit/s": 1 / 8,
    },
    "gib": {
        "": 1,
        "b": 2**-30,
        "kb": 1e3 / 2**30,
        "mb": 1e6 / 2**30,
        "gb": 1e9 / 2**30,
        "tb": 1e12 / 2**30,
        "kib": 2**-20,
        "mib": 2**-10,
        "gib": 1,
        "tib": 2**10,
    },
    "usd": {"": 1, "usd": 1, "k": 1e3, "m": 1e6, "b": 1e9, "kusd": 1e3, "musd": 1e6},
    "w": {"": 1, "w": 1, "kw": 1e3, "mw": 1e6},
    "s": {
        "": 1,
        "s": 1,
        "sec": 1,
        "ms": 1e-3,
        "us": 1e-6,
        "µs": 1e-6,
        "min": 60,
        "h": 3600,
        "d": 86400,
        "day": 86400,
        "days": 86400,
    },
    "days": {"": 1, "d": 1, "day": 1, "days": 1, "w": 7, "week": 7, "weeks": 7, "h": 1 / 24, "y": 365},
    "tflops": {"": 1, "tflops": 1, "tflop/s": 1, "pflops": 1e3, "gflops": 1e-3, "t": 1, "p": 1e3},
}

_EXAMPLES = {
    "count": "176B, 1.2T, 7e9 or 384",
    "gbps": "400Gbps, 3.2Tbps, 400G or 50GB/s",
    "gb_per_s": "900GB/s, 3.35TB/s or 400Gbps",
    "gib": "80GiB, 80GB or 1.5TiB",
    "usd": "$36,000, 36k or $1.2M",
    "w": "700W or 10.2kW",
    "s": "1s, 500ms or 2h",
    "days": "30d, 4w or 720h",
    "tflops": "40, 40TFLOPs or 2.25PFLOPs",
}


# units without a capital letter also match case-insensitively ("GBPS"); built once, not per cell
_LOWERED = {
    dimension: {k.lower(): v for k, v in table.items() if not any(c.isupper() for c in k)}
    for dimension, table in _UNITS.items()
}


def _factor(dimension: str, unit: str) -> float | None:
    table = _UNITS[dimension]
    if unit in table:
        return table[unit]
    return _LOWERED[dimension].get(unit.lower())


def parse_quantity(value: object, dimension: str) -> float:
    """Return value in the canonical unit of dimension, a finite float. Raises ValueError with the
    accepted forms. (The largest value each field accepts is the field's own bound: planner.base.limits.)"""
    if type(value) is str:  # the usual case first: every catalog cell (a 100k-row catalog has 400k)
        number = _parse_text(value, dimension)
    elif isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"expected a number like {_EXAMPLES[dimension]}, not {short(value)}")
    elif isinstance(value, str):
        number = _parse_text(value, dimension)
    else:
        try:
            number = float(value)
        except OverflowError:  # an int beyond float range (a 400-digit YAML integer)
            raise ValueError("out of range: larger than any quantity") from None
    if math.isnan(number) or math.isinf(number):
        raise ValueError(f"expected a finite number like {_EXAMPLES[dimension]}")
    return number


def _parse_text(text: str, dimension: str) -> float:
    if len(text) > MAX_QUANTITY_CHARS:
        raise ValueError(f"too long for a quantity ({len(text):,} characters; at most {MAX_QUANTITY_CHARS})")
    try:  # fast path: a plain number (most catalog cells)
        number = float(text)
    except ValueError:
        pass  # a unit, a currency sign, thousands separators: the full parser below
    else:
        if math.isfinite(number):
            return number  # (nan and inf fall through, to be named by the parser)
    match = _NUMBER.match(text.replace("\u00a0", " "))
    if not match:
        raise ValueError(f"{text!r} is not a quantity; write it like {_EXAMPLES[dimension]}")
    num = match["num"]
    if "," in num and not _GROUPED.match(num):
        raise ValueError(f"{text!r}: commas may only separate thousands (write 1.5, not 1,5)")
    unit = (match["unit"] or "").strip()
    if match["currency"]:
        if dimension != "usd":
            raise ValueError(f"{text!r} is money, but a {dimension} quantity is expected here")
        unit = re.sub(r"(?i)\s*usd$", "", unit)
    factor = _factor(dimension, unit.replace(" ", ""))
    if factor is None:
        raise ValueError(f"{text!r} has an unknown unit {unit!r}; write it like {_EXAMPLES[dimension]}")
    return float(num.replace(",", "").replace("_", "")) * factor


def _sig(value: float) -> str:
    """Up to 6 significant digits, no trailing zeros (so parse(format(x)) == x to 1e-6 relative)."""
    return f"{value:.6g}"


def format_count(value: float) -> str:
    for suffix, factor in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(value) >= factor:
            return _sig(value / factor) + suffix
    return _sig(value)


def format_gbps(gbps: float) -> str:
    return _sig(gbps / 1e3) + "Tbps" if abs(gbps) >= 1e4 else _sig(gbps) + "Gbps"


def format_gib(gib: float) -> str:
    return _sig(gib) + "GiB"


def format_usd(usd: float, cents: bool = False) -> str:
    sign = "-" if usd < 0 else ""
    return f"{sign}${abs(usd):,.2f}" if cents else f"{sign}${abs(usd):,.0f}"


def format_w(watts: float) -> str:
    return _sig(watts / 1e3) + "kW" if abs(watts) >= 1e4 else _sig(watts) + "W"
