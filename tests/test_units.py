import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.base.units import format_count, format_gbps, format_gib, format_usd, format_w, parse_quantity


@pytest.mark.parametrize(
    ("text", "dimension", "expected"),
    [
        ("176B", "count", 176e9),
        ("1.2T", "count", 1.2e12),
        ("7e9", "count", 7e9),
        ("1,000", "count", 1000),
        ("400Gbps", "gbps", 400),
        ("400G", "gbps", 400),
        ("3.2Tbps", "gbps", 3200),
        ("100 Gb/s", "gbps", 100),
        ("50GB/s", "gbps", 400),  # bytes per second become bits
        ("80GiB", "gib", 80),
        ("80GB", "gib", 80e9 / 2**30),  # decimal GB are not GiB
        ("1TiB", "gib", 1024),
        ("$36,000", "usd", 36000),
        ("USD 1,599", "usd", 1599),
        ("36k", "usd", 36000),
        ("$1.2M", "usd", 1.2e6),
        ("10.2kW", "w", 10200),
        ("700 W", "w", 700),
        ("500ms", "s", 0.5),
        ("30d", "days", 30),
        ("2.25PFLOPs", "tflops", 2250),
        (125, "tflops", 125),
    ],
)
def test_parses_what_people_type(text, dimension, expected):
    assert parse_quantity(text, dimension) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "dimension", "fragment"),
    [
        ("80 apples", "gib", "unknown unit 'apples'"),
        ("1,5", "count", "commas may only separate thousands"),
        ("fast", "gbps", "not a quantity"),
        ("$400", "gbps", "is money"),
        ("400GiB", "gbps", "unknown unit"),
        ("nan", "count", "not a quantity"),
    ],
)
def test_rejects_with_a_fix(text, dimension, fragment):
    with pytest.raises(ValueError, match="write it like|commas|money|not a quantity") as info:
        parse_quantity(text, dimension)
    assert fragment in str(info.value)


def test_rejects_booleans_and_infinity():
    with pytest.raises(ValueError):
        parse_quantity(True, "count")
    with pytest.raises(ValueError):
        parse_quantity(math.inf, "count")


positive = st.floats(min_value=1e-3, max_value=1e15, allow_nan=False, allow_infinity=False)


@given(positive)
def test_count_round_trip(value):
    assert parse_quantity(format_count(value), "count") == pytest.approx(value, rel=1e-5)


@given(positive)
def test_gbps_round_trip(value):
    assert parse_quantity(format_gbps(value), "gbps") == pytest.approx(value, rel=1e-5)


@given(positive)
def test_gib_round_trip(value):
    assert parse_quantity(format_gib(value), "gib") == pytest.approx(value, rel=1e-5)


@given(positive)
def test_watts_round_trip(value):
    assert parse_quantity(format_w(value), "w") == pytest.approx(value, rel=1e-5)


@given(st.integers(min_value=0, max_value=10**12))
def test_usd_round_trip_is_exact_for_whole_dollars(value):
    assert parse_quantity(format_usd(value), "usd") == value
