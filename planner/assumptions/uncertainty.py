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

# ================================================================ futures of a fleet (planner/answers/futures.py)
# What the sampled futures of `buy now or wait` perturb, and by how much. None of these is measured: the repository
# has no record of how vendor quotes, rental rates, deliveries or demand forecasts moved against a plan. Each value
# is a stated planner convention, with what it was sized against (answers/futures.Spread changes them). Purchase
# prices use the catalog's own price uncertainty by confidence as a lognormal sigma, with PRICE_FAMILY_SHARE of
# the log-variance common to a vendor's offers.

_CONVENTION = "planner convention, not measured: "

# ---------------------------------------------------------------- cloud rental rates

RENT_DECLINE_MIN = Constant(
    "futures.rent_decline_min_per_period",
    0.0,
    "fraction a cloud rate falls per quarter (the low end of a uniform draw, one per future)",
    _CONVENTION + "rates held, as the fleet model assumes (catalogs/cloud.csv gives one dated rate per row)",
)
RENT_DECLINE_MAX = Constant(
    "futures.rent_decline_max_per_period",
    0.095,
    "fraction a cloud rate falls per quarter (the high end of a uniform draw, one per future)",
    _CONVENTION + "the one dated cut in the catalog, AWS p4d.24xlarge on-demand 33% lower after AWS's 2025 "
    "cut (catalogs/cloud.csv row 3: 21.96 against 32.7726), spread over a year: 1 - 0.67^(1/4) = 9.5%/quarter",
)

# ---------------------------------------------------------------- deliveries

SLIP_PROBABILITY = Constant(
    "futures.slip_probability",
    0.25,
    "probability an offer's delivery slips one quarter more (each further quarter again, up to the maximum)",
    _CONVENTION + "docs/research/lead_times/FINDINGS.md gives no slip rates, only wide ranges around its "
    "defaults (Blackwell 26 weeks, 13-52; Hopper 20, 8-52); a quarter's slip in one order of four",
)
MAX_SLIP_PERIODS = Constant(
    "futures.max_slip_periods",
    2.0,
    "quarters an offer's delivery may slip at most",
    _CONVENTION + "the lead-time ranges run to about twice the default (Blackwell 26 weeks to 52: two "
    "quarters later; docs/research/lead_times/FINDINGS.md)",
)

# ---------------------------------------------------------------- demand

DEMAND_SIGMA = Constant(
    "futures.demand_sigma",
    0.2,
    "lognormal sigma of a workload's mean-one demand factor (a job's tokens; a service's tokens/s and, "
    "apart, its growth rate)",
    _CONVENTION + "no forecast-error data in the repository; 20% at one sigma, independent per workload",
)

# ---------------------------------------------------------------- what a future that cannot be met costs

# A future (under a policy) that no plan meets is solved with every limit relaxed and each unit of
# violation priced (optimize/fleet.violation's units): about ten times what the shipped catalog charges for
# the way out, so a plan falls short only when it cannot buy, rent or wait its way to the requirement. They
# are sized for 8-GPU servers and 70B-class serving (examples/fleet-*.yaml); far larger models need more.
SHORTFALL_USD = {
    "deadlines": Constant(
        "futures.shortfall_usd[deadlines]", 10e6, "USD per quarter a run with a hard deadline finishes late",
        _CONVENTION + "above every soft late penalty of the shipped examples ($1.5M and $3M a quarter)",
    ),
    "power": Constant(
        "futures.shortfall_usd[power]", 150e3, "USD per kW over the site's nameplate power, per quarter",
        _CONVENTION + "about ten times renting the node instead: p5.48xlarge $55.04/h x 2,190 h over 10.2 kW "
        "= $11.8k per kW-quarter, p6-b200 $17.4k (catalogs/cloud.csv)",
    ),
    "racks": Constant(
        "futures.shortfall_usd[racks]", 4e6, "USD per rack over the site's racks, per quarter",
        _CONVENTION + "a rack of 2-4 nodes, about 30 kW, at the power shortfall's price",
    ),
    "stock": Constant(
        "futures.shortfall_usd[stock]", 3e6, "USD per unit delivered beyond a vendor's stock",
        _CONVENTION + "about ten times an 8-GPU server ($297k-379k in the startup example's offers)",
    ),
    "quota": Constant(
        "futures.shortfall_usd[quota]", 3e6, "USD per cloud instance over its quota, per quarter",
        _CONVENTION + "about ten times the dearest instance-quarter of the example (p6-b300 $142.42/h x 2,190 h)",
    ),
    "demand": Constant(
        "futures.shortfall_usd[demand]", 250e3, "USD per thousand output tokens/s not served, per quarter",
        _CONVENTION + "about ten times the dearest on-demand rental serving a 70B model in the shipped catalog "
        "($9k-28k per thousand tokens/s a quarter)",
    ),
}  # fmt: skip
