"""Named, sourced defaults for what a plan costs and risks beyond its hardware: run interruptions and
checkpoints (goodput), colocation, support and staff (TCO), and the terms cloud capacity is sold on.

Each value is a Constant with its unit and source (the research behind them: docs/plan.md section 7). The
scenario's `reliability:` and `objective:` sections take their defaults from here, so a reviewer finds one
figure in one place; `all_constants()` lists them on the workbook's Assumptions sheet. Figures labelled
"estimate" are derived or assumed, not quoted.
"""

from __future__ import annotations

from planner.assumptions.constant import Constant

# ---------------------------------------------------------------- interruptions, checkpoints, restarts

# Job interruptions by what fails, per unit per day, applied to the counts in the plan's bill of materials
# (planner.model.reliability). Research, sources and arithmetic: docs/research/reliability (2026-12-01). None of
# these rates comes from Llama 3's report: its 419 unexpected interruptions in 54 days on 16,384 H100 (Grattafiori
# et al., arXiv 2407.21783, Table 5) are held out to check the model (tests/test_reliability.py).
_DRAFT = "docs/research/reliability/FINDINGS.md section 3"
FAILURE_RATES = {
    "gpu": Constant(
        "failure_rate.gpu", 3.5e-4, "job interruptions per GPU-day",
        "estimate: HBM 2.25e-4 (NCSA Delta H100 per-GB MTBE, arXiv 2503.11901 v4, x 80 GB) + other GPU errors "
        "1.25e-4; B200 measured 3.6e-4 (10 in 504 GPUs x 55 days, arXiv 2605.09370); " + _DRAFT,
    ),
    "host": Constant(
        "failure_rate.host", 2.0e-4, "job interruptions per host-day",
        "estimate, bottom-up: DIMM 2 x 3.6e-5 (Schroeder et al. SIGMETRICS 2009), 2 in-path SSDs x 2.9e-5 "
        "(Backblaze 2022), PSU 1.4e-5, board/PCIe/BMC/OS 5.5e-5; " + _DRAFT,
    ),
    "nic": Constant(
        "failure_rate.nic", 2.0e-5, "job interruptions per NIC-day",
        "estimate: no public per-adapter rate (range 1e-5 to 3e-5); " + _DRAFT,
    ),
    "node_link": Constant(
        "failure_rate.node_link", 2.5e-5, "job interruptions per NIC-to-leaf link-day",
        "between Alibaba HPN's 0.057% of NIC-ToR links a month (1.87e-5, SIGCOMM 2024 sec 2.3) and two "
        "transceivers at Huawei's 6.3 per 1000 a year (3.4e-5); " + _DRAFT,
    ),
    "fabric_link": Constant(
        "failure_rate.fabric_link", 7.5e-6, "job interruptions per switch-to-switch link-day",
        "estimate: the node link's 2.5e-5 x 0.3, the share a multipath fabric does not route around; " + _DRAFT,
    ),
    "leaf": Constant(
        "failure_rate.leaf", 1.7e-5, "job interruptions per leaf-switch-day",
        "Alibaba HPN: 0.051% of ToR switches crash a month (SIGCOMM 2024 sec 2.3); any-failure rates up to "
        "2.2e-4 (Singh et al. CCR 2021) are upper bounds; " + _DRAFT,
    ),
    "upper_switch": Constant(
        "failure_rate.upper_switch", 8.5e-6, "job interruptions per spine- or core-switch-day",
        "estimate: the leaf's 1.7e-5 x 0.5, one switch being 1/N of the paths; " + _DRAFT,
    ),
    "storage_client": Constant(
        "failure_rate.storage_client", 1.0e-4, "job interruptions per host-day",
        "estimate: Meta RSC ranks file-system mounts with IB links among the top attributed causes (Kokolis et "
        "al., arXiv 2410.21680); range 5e-5 to 2e-4; " + _DRAFT,
    ),
}  # fmt: skip
SOFTWARE_SHARE = Constant(
    "failure_rate.software_share",
    0.20,
    "share of unexpected interruptions from software (NCCL, driver, framework)",
    "estimate from ByteRobust (SOSP 2025: code rollback 9.2%, transient reattempt 22.7% of incidents), EROICA "
    "(NSDI 2026) and Meta RSC; range 10-35%; " + _DRAFT,
)

RESTART_MINUTES = Constant(
    "restart_minutes",
    5.0,
    "minutes per interruption (detect, reschedule, reload; lost work counted apart)",
    "Kokolis et al., arXiv 2410.21680, ETTR model's restart overhead (as relayed by public notes: medium); "
    "2.5 min in FlashRecovery (arXiv 2509.03047) to over 30 min with manual diagnosis (arXiv 2411.01791)",
)
REPAIR_HOURS = Constant(
    "repair_hours",
    24.0,
    "hours a failed node is out of service (reset, part swap from stock, or vendor return)",
    "estimate (docs/research/reliability/REPAIR.md): 40% cleared by a reset in ~1 h, 45% a part swap from "
    "on-site stock in ~12 h, 15% a vendor return in ~120 h = 24 h (range 4-120 h); Delta's 2.2 h mean GPU-error "
    "recovery (arXiv 2503.11901) is a floor; ByteRobust (arXiv 2509.16293): 'hours to days'",
)
REPAIR_HOURS_RACK_SCALE = Constant(
    "repair_hours_rack_scale",
    4.0,
    "hours a rack-scale system (NVL72) is out when a compute tray fails: the tray swapped from stock",
    "SemiAnalysis 2025-08 (via a public compilation, low): a GB200 NVL72 compute-tray swap takes 1-4 h without "
    "draining the rack (a backplane 8-24 h); the upper end taken (docs/research/reliability/REPAIR.md A8)",
)
CHECKPOINT_WRITE_GB_PER_S_PER_NODE = Constant(
    "checkpoint_write_gb_per_s_per_node",
    2.0,
    "GB/s per node to shared storage",
    "NVIDIA DGX SuperPOD H100 reference architecture RA-11333-001 V11, Table 6: single-node write 'Good' "
    "2 GBps (Better 4, Best 20); its aggregate per 32-node SU is lower (7 GBps Good), so set yours",
)
CHECKPOINT_BYTES_PER_PARAM = Constant(
    "checkpoint_bytes_per_param",
    14.0,
    "bytes written per parameter",
    "derived from ZeRO (Rajbhandari et al., arXiv 1910.02054 sec 3.1): 2 bf16 weights + 12 fp32 master "
    "weights, momentum and variance; gradients are not saved",
)
LOST_WORK_SHARE_OF_INTERVAL = Constant(
    "lost_work_share_of_interval",
    0.5,
    "share of a checkpoint interval recomputed per interruption",
    "expected value for a failure uniform in the interval; BLOOM: checkpoint every 3 h, 'on average we would "
    "lose 1.5h of training' (HF blog 'The Technology Behind BLOOM Training', 2022)",
)
YOUNG_DALY = (
    "Young 1974 (CACM 17(9)) / Daly 2006 (FGCS 22(3)): checkpoint interval sqrt(2 x write time x MTBF), "
    "as used in arXiv 2410.21680"
)

# ---------------------------------------------------------------- running a purchased cluster (TCO)

COLOCATION_USD_PER_KW_MONTH = Constant(
    "colocation_usd_per_kw_month",
    194.95,
    "USD per kW of IT capacity per month",
    "CBRE North America Data Center Trends H2 2025: wholesale 250-500 kW in primary markets, $194.95 (as "
    "reported in a reprint: medium); H2 2024 $184.06 (cbre.com: solid)",
)
SUPPORT_SHARE_OF_CAPEX_PER_YEAR = Constant(
    "support_share_of_capex_per_year",
    0.08,
    "fraction of capex per year",
    "CTWatch Quarterly 2006 (ICL/UTK), 'Designing and supporting high-end computational facilities': annual "
    "maintenance 4-8% of purchase price (upper end taken; low confidence; one source quotes ~20%/yr for DGX)",
)
STAFF_USD_PER_FTE_YEAR = Constant(
    "staff_usd_per_fte_year",
    96_800.0,
    "USD per full-time employee per year (median base wage, no benefits)",
    "US BLS OEWS 15-1244 Network and Computer Systems Administrators, national median 2024 (via "
    "careerdatalab.com: medium); no sourced FTE-per-MW figure, so the FTE count is the user's",
)

# ---------------------------------------------------------------- cloud terms

CAPACITY_BLOCK_DAILY_UP_TO_DAYS = Constant(
    "capacity_block_daily_up_to_days",
    14.0,
    "days: blocks are sold in 1-day steps up to this length",
    "AWS EC2 User Guide, 'Find and purchase Capacity Blocks' (capacity-blocks-purchase): 1-day increments "
    "up to 14 days",
)
CAPACITY_BLOCK_STEP_DAYS = Constant(
    "capacity_block_step_days",
    7.0,
    "days: step of longer blocks",
    "AWS EC2 User Guide, 'Find and purchase Capacity Blocks': 7-day increments from 14 up to 182 days",
)
CAPACITY_BLOCK_MAX_DAYS = Constant(
    "capacity_block_max_days",
    182.0,
    "days: the longest block",
    "AWS EC2 User Guide, 'Find and purchase Capacity Blocks'",
)
CAPACITY_BLOCK_MAX_INSTANCES = Constant(
    "capacity_block_max_instances",
    256.0,
    "instances across all Capacity Blocks",
    "AWS EC2 User Guide, 'Capacity Blocks for ML': up to 64 instances per block and 256 across blocks",
)
COMMITTED_TERM_HOURS = {
    "committed-1y": Constant(
        "committed_1y_term_hours",
        8760.0,
        "hours billed for a 1-year commitment, used or not",
        "AWS Savings Plans and Reserved Instances, Azure reservations and Google committed-use discounts are sold "
        "for 1 or 3 years and billed for the whole term (AWS, Azure, Google pricing pages as read 2026-09, "
        "docs/research/cloud FINDINGS.md)",
    ),
    "committed-3y": Constant(
        "committed_3y_term_hours",
        26280.0,
        "hours billed for a 3-year commitment, used or not",
        "as committed_1y_term_hours: 3 x 8,760 hours",
    ),
}
SPOT_INTERRUPTIONS_PER_1000_INSTANCE_DAYS = Constant(
    "spot_interruptions_per_1000_instance_days",
    6.6,
    "preemptions per 1000 spot instance-days",
    "estimate: AWS Spot Instance Advisor's highest 'frequency of interruption' bucket (>20% of instances per "
    "trailing month) taken at 20% / 30.4 days; no published rate per GPU type was found",
)
SPOT_RESTART_MINUTES = Constant(
    "spot_restart_minutes",
    60.0,
    "minutes per preemption (replacement capacity, then restart)",
    "estimate: no published figure; a preempted 8-GPU instance must be replaced before a synchronous job "
    "resumes, and spot GPU capacity can take far longer to return",
)

# ---------------------------------------------------------------- the scenario's defaults for energy and the horizon

YEARS = Constant(
    "objective.years",
    5.0,
    "years: the TCO horizon, and a bought server's service life in a fleet",
    "github:epoch-research/training-cost-trends/cost_analysis_standalone.py get_server_lifetime(): 5 years "
    "for hardware from 2023 (shared/reference/prices/datacenter_assumptions.csv, 2026-04)",
)
USD_PER_KWH = Constant(
    "objective.usd_per_kwh",
    0.0826,
    "USD per kWh",
    "US industrial electricity 2025: github:epoch-research/training-cost-trends/cost_analysis_standalone.py "
    "energy_price() (shared/reference/prices/datacenter_assumptions.csv, 2026-04)",
)
PUE = Constant(
    "objective.pue",
    1.25,
    "power usage effectiveness (facility power / IT power) of air-cooled IT",
    "Epoch AI's modelling default for non-hyperscale sites (1.1 hyperscale), cost_analysis_standalone.py "
    "power_usage_effectiveness(); industry average 1.56 (Uptime Institute 2024)",
)
PUE_LIQUID = Constant(
    "objective.pue_liquid",
    1.15,
    "power usage effectiveness of heat removed by liquid (direct-to-chip, warm water)",
    "estimate: liquid heat leaves through warm facility water with pumps and dry coolers, no chillers: AWS expects "
    "1.08 for its new liquid-cooling designs and hyperscale fleets run 1.08-1.18 (Meta, Google, Microsoft; "
    "DatacenterDynamics 2024-12); 1.15 taken for a colocation hall, against 1.25 for air (objective.pue)",
)
SERVER_DRAW_FRACTION = Constant(
    "objective.server_draw_fraction",
    0.75,
    "training draw / server nameplate power",
    "Epoch AI, cost_analysis_standalone.py chip_to_server_power(): training draw = 75% of server TDP",
)
DISCOUNT_RATE = Constant(
    "costs.discount_rate",
    0.08,
    "per year",
    "estimate: a cost of capital for a fleet's cash flows (set your own)",
)

# ---------------------------------------------------------------- the scenario's default racks and rows

RACK_KW = Constant(
    "layout.rack_kw",
    40.8,
    "kW of IT power per air-cooled rack",
    "NVIDIA DGX SuperPOD H100 reference architecture RA-11333-001: four 10.2 kW DGX H100 per rack",
)
LIQUID_RACK_KW = Constant(
    "layout.liquid_rack_kw",
    155.0,
    "kW of IT power per liquid-cooled rack position",
    "Lenovo LP2357 (GB300 NVL72): 135 kW typical, 155 kW peak (EDPp) per rack, the figure a hall is provisioned "
    "for; NVIDIA's GB300 NVL72 RA plans 'up to 142 kW' (docs/research/nvidia_systems S03)",
)
CDU_SPARES = Constant(
    "cdu_spares",
    1.0,
    "spare coolant distribution units per liquid-cooled plan (N+1)",
    "estimate: N+1, the redundancy CDU makers quote (Supermicro GB300 NVL72 in-rack CDU 'N+1 pumps'; CoolIT "
    "CHx 'N+1'/'N+N'); one spare unit keeps the loop running through a unit's failure or service",
)
RACK_UNITS = Constant("layout.rack_units", 48.0, "U per rack", "the 48U racks of RA-11333-001 (NetShelter SX 48U)")
RESERVED_UNITS = Constant(
    "layout.reserved_units",
    4.0,
    "U kept free per compute rack",
    "estimate: patch panels, a top-of-rack leaf and an out-of-band switch",
)
RACK_WIDTH_M = Constant("layout.rack_width_m", 0.6, "m", "a 600 mm wide rack (NetShelter SX 600 mm)")
ROW_PITCH_M = Constant(
    "layout.row_pitch_m", 2.4, "m row to row", "estimate: a 1.2 m deep rack plus a 1.2 m aisle (hot/cold aisle)"
)
RACKS_PER_ROW = Constant(
    "layout.racks_per_row",
    8.0,
    "compute racks per row",
    "RA-11333-001: one scalable unit of 32 DGX H100 = 8 racks of 4, one row",
)
SLACK_M = Constant("layout.slack_m", 0.5, "m added to every cable run", "estimate: service loops and dressing")
ROWS_PER_HALL = Constant(
    "layout.rows_per_hall",
    32.0,
    "rows per data hall",
    "estimate: 32 rows of 8 racks at 40 kW is a ~10 MW hall, the size hyperscale halls are built in; halls stand "
    "side by side on a floor as near square as whole halls make it, the spine and core rooms at its centre",
)
HALL_AISLE_M = Constant(
    "layout.hall_aisle_m", 3.0, "m between halls", "estimate: a corridor and wall between neighbouring halls"
)

# Installation and cabling labour (docs/research/quote_lines: no AI-cluster installation price is published)
INSTALL_USD_PER_HOUR = Constant(
    "install.usd_per_hour",
    120.0,
    "USD per technician-hour",
    "estimate: between US data-centre technician wages (~$31-52/h, Cushman & Wakefield 2025) with burden and "
    "margin, and a colocation smart-hands list rate ($180-200/h, QTS rate card)",
)
INSTALL_HOURS = {
    "server": Constant("install.hours_per_server", 3.0, "technician-hours per server",
                       "estimate: unbox, rails, a two-person lift, power and label"),
    "rack_scale": Constant("install.hours_per_rack_scale_system", 60.0, "technician-hours per rack-scale system",
                           "estimate: an NVL72 rack takes days (liquid connection, leak and pressure tests; "
                           "Leviathan Systems 2026)"),
    "cable": Constant("install.hours_per_cable", 0.2, "technician-hours per cable or link",
                      "estimate: plug, dress, label, clean and test one pre-terminated link"),
    "box": Constant("install.hours_per_switch", 1.5, "technician-hours per switch or appliance",
                    "estimate: mount, power, cable management, first configuration"),
}  # fmt: skip
INSTALL_OVERHEAD = Constant(
    "install.overhead", 0.2, "share added to the hours", "estimate: testing and project management"
)
