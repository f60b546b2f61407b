"""How `planner sweep` draws what a plan does not know (planner/model/draws.py): prices by their catalog rows'
confidence, throughput from the model's validated residuals, interruption rates and lead times from the spread
of their sources; and which configurations a sweep compares. Each a stated assumption, none a measurement."""

from __future__ import annotations

from planner.assumptions.constant import Constant

PRICE_FAMILY_SHARE = Constant(
    "sweep.price_family_share",
    0.5,
    "share of a price's log-variance common to its vendor and part category",
    "planner convention: a vendor's discount, a list-price change or a distributor's margin moves every part "
    "of one family together (a server maker's SKUs, one switch vendor's optics), the rest is the part's own; "
    "half and half, since no published price panel separates them",
)
FAILURE_RATE_SPREAD = Constant(
    "sweep.failure_rate_spread",
    0.4,
    "log standard deviation of the job's interruption rate (one multiplier on every failure rate)",
    "the failure rates' own stated ranges (planner/assumptions/facility.py: NIC 1e-5 to 3e-5, storage client "
    "5e-5 to 2e-4, software share 10-35%) read as p5-p95: ln(3)/3.29 = 0.33 to ln(4)/3.29 = 0.42",
)
LEAD_TIME_SPREAD = Constant(
    "sweep.lead_time_spread",
    0.33,
    "log standard deviation of a part family's lead time (median: its LEAD_WEEKS value)",
    "Gartner (2026-03): data-centre switch lead times 3 to 9 months, read as p5-p95: ln(3)/3.29 = 0.33",
)
CONFIGURATIONS = Constant(
    "sweep.configurations",
    40.0,
    "distinct configurations a sweep compares (the cheapest by the point plan's objective)",
    "planner convention: a configuration below the 40th would need its price to fall, or the others' to rise, "
    "by more than the catalog's widest stated uncertainty (40%) to win in most catalogs",
)
COUNT_RANGE = (0.8, 1.6)  # the node counts a configuration is compared at, relative to its point-plan count
COUNTS = Constant(
    "sweep.counts",
    16.0,
    "node counts per configuration between 0.8x and 1.6x its point-plan count (geometrically spread)",
    "planner convention: the p5 throughput draw of the widest validated group is ~0.6x the prediction",
)
DRAWS_PER_TASK = 50  # draws per Dask task: a task is ~0.1 s, long enough that scheduling costs little
