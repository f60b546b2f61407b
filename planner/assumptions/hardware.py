"""Named, sourced assumptions of how the hardware is designed and priced: the networks beside the compute
fabric, PCIe's protocol overhead, and how far a catalog price may be off by its confidence."""

from __future__ import annotations

from planner.assumptions.constant import Constant

STORAGE_OVERSUBSCRIPTION = Constant(
    "storage_oversubscription",
    4 / 3,
    "storage leaf down-ports per up-port",
    "NVIDIA DGX SuperPOD H100 reference architecture RA-11333-001: DGX storage links 'slightly oversubscribed "
    "... near 4:3'",
)
INBAND_UPLINK_SHARE = Constant(
    "inband_uplink_share",
    1 / 8,
    "share of in-band switch ports kept for uplinks",
    "estimate: the in-band network's ports to the data-centre network",
)
UFM_PER_FABRIC = Constant(
    "ufm_per_fabric",
    2.0,
    "subnet-manager appliances per InfiniBand fabric of unmanaged switches",
    "a high-availability pair, as in RA-11333-001 (UFM appliances)",
)
PCIE_MAX_PAYLOAD_BYTES = Constant(
    "pcie_max_payload_bytes",
    256.0,
    "bytes per PCIe transaction-layer packet",
    "the maximum payload size server root complexes and NICs negotiate (PCI Express Base Specification, MPS)",
)
PCIE_TLP_OVERHEAD_BYTES = Constant(
    "pcie_tlp_overhead_bytes",
    24.0,
    "bytes of overhead per packet",
    "a 4-dword header for 64-bit addresses, sequence number, LCRC and framing (PCI Express Base Specification)",
)
STALE_PRICE_MONTHS = Constant(
    "stale_price_months",
    12.0,
    "months: a price older than this is flagged wherever it is used",
    "planner convention: GPU prices move by tens of percent within a year (catalogs/cloud.csv: AWS p4d "
    "on-demand 33% lower after its 2025 cut; capacity blocks re-priced 2026-07-01)",
)
DECISIVE_PRICE_SHARE = Constant(
    "decisive_price_share",
    0.01,
    "share of capex: a bill-of-materials line at least this large decides the plan's price",
    "planner convention: a line under 1% of capex cannot move a plan's price by more than a part's own "
    "price uncertainty moves it (PRICE_UNCERTAINTY: 5-40%)",
)
PRICE_UNCERTAINTY = {
    "solid": Constant("price_uncertainty[solid]", 0.05, "fraction of a price", "estimate: a list price or firm quote"),
    "medium": Constant(
        "price_uncertainty[medium]", 0.15, "fraction of a price", "estimate: a reseller listing or street price"
    ),
    "low": Constant(
        "price_uncertainty[low]", 0.30, "fraction of a price", "estimate: an unidentified or aggregator price"
    ),
    "estimate": Constant(
        "price_uncertainty[estimate]", 0.40, "fraction of a price", "estimate: a price derived, not quoted"
    ),
}

# Spares (the scenario's `spares` section; docs/research/quote_lines/quote_lines_draft.csv)
SPARE_NODE_SHARE = Constant(
    "spares.node_share",
    0.02,
    "spare nodes per node bought (rounded to the nearest node)",
    "SemiAnalysis, 'How Much Do GPU Clusters Really Cost?' (2026-02-05): GPU clouds keep 2-6% of their nodes in "
    "a hot-spare pool; Delta (arXiv 2503.11901, SC25) needs ~5% overprovisioning for 99.9% job availability; "
    "the low end, for a buyer with vendor RMA behind it",
)
SPARE_LINK_SHARE = Constant(
    "spares.link_share",
    0.02,
    "spare links (transceivers and cables) per link of each kind, rounded up to whole parts",
    "estimate: ~1%/yr optics failures over a 3-month RMA, ~1% dead on arrival or damaged at installation, and a "
    "margin (SemiAnalysis 2024: transceivers are the highest-failure network part); the 2-5% buyers add",
)
SPARE_REPAIR_COVER = Constant(
    "spares.repair_cover",
    0.99,
    "quantile of the nodes under repair at once that the spare nodes cover (at least)",
    "ByteRobust (SOSP 2025, arXiv 2509.16293) sizes its warm standbys at the P99 of the machines failing within a "
    "repair window, ~4 per 1,024 instances (docs/research/reliability/REPAIR.md section 3); nodes under repair "
    "are Poisson with mean node failures a day x repair days",
)
SPARE_SWITCHES_PER_MODEL = Constant(
    "spares.switches_per_model",
    1.0,
    "spare switches per switch model in use",
    "estimate: one cold spare per model and site (Alibaba HPN: 0.61%/yr critical ToR failures; Microsoft: ~2% "
    "of switches fail within 3 months of deployment), so a failed switch is replaced the same day",
)

# The storage system and the management servers (docs/research/storage, docs/research/quote_lines)
STORAGE_READ_GB_PER_S_PER_GPU = Constant(
    "storage.read_gb_per_s_per_gpu",
    40 / 256,
    "GB/s of shared-storage read per GPU",
    "NVIDIA DGX SuperPOD B200 RA, storage 'Standard': 40 GB/s read, 20 GB/s write per 32-node (256-GPU) SU "
    "(the H100 RA's 'Better'; 'Enhanced' is 125/62); docs/research/storage FINDINGS",
)
STORAGE_CHECKPOINTS_KEPT = Constant(
    "storage.checkpoints_kept",
    5.0,
    "full checkpoints the file system keeps",
    "estimate: the last few checkpoints to roll back to past a bad step, plus one being written",
)
STORAGE_BYTES_PER_TOKEN = Constant(
    "storage.dataset_bytes_per_token",
    4.0,
    "bytes of tokenised training data per token",
    "estimate: uint32 token ids (a 128k vocabulary does not fit uint16), kept once on the file system",
)
MANAGEMENT_SERVERS = Constant(
    "management_servers",
    10.0,
    "management servers for a cluster of up to MANAGEMENT_GPUS_PER_STEP GPUs",
    "NVIDIA Mission Control 2.1 (DGX B300; the same roles for B200 and GB200/GB300 in 2.3) and the Rubin DGX "
    "SuperPOD RA: 2 Base Command Manager heads, 3 admin and 3 user Kubernetes nodes, 2 Slurm login nodes",
)
MANAGEMENT_SERVERS_PER_STEP = Constant(
    "management_servers_per_step",
    2.0,
    "more login nodes per further MANAGEMENT_GPUS_PER_STEP GPUs",
    "estimate: NVIDIA states no rule beyond 4 SUs; two more login nodes per further 4 SUs (docs/research/quote_lines)",
)
MANAGEMENT_GPUS_PER_STEP = Constant(
    "management_gpus_per_step",
    1024.0,
    "GPUs per step of the management-server rule",
    "4 SUs of 32 eight-GPU nodes, the size the reference architectures size their control plane for",
)


def _weeks(name: str, weeks: float, source: str) -> Constant:
    return Constant(f"lead_weeks.{name}", weeks, "weeks from order to delivery", source)


# Delivery lead times by part family, late 2026, for a mid-size buyer ordering through an OEM or reseller
# (docs/research/lead_times: no vendor publishes lead times; every 2025-26 figure in weeks is a broker's,
# an aggregator's or an estimate). A catalog row's own `lead_weeks` overrides its family's.
LEAD_WEEKS = {
    "rack-scale": _weeks("rack-scale", 39, "low: full NVL72 racks 6-12 months and strategic queues 10-14 months "
                         "(broker pages, 2025-26); 'booked out 12 months' at Blackwell's launch (Morgan Stanley, "
                         "2024-10)"),
    "blackwell": _weeks("blackwell", 26, "low: B200 about 8 months standard (broker page, 2025); HGX B300 forward "
                        "curve implying 27-31 weeks (broker, 2026-05); host CPUs up to ~26 weeks (Reuters, 2026)"),
    "hopper": _weeks("hopper", 20, "estimate: 8-12 weeks in April 2024 (Dell, medium) as the floor, resellers' "
                     "36-52 as the top, end-of-line parts hit by the 2026 memory shortage"),
    "amd-cdna4": _weeks("amd-cdna4", 20, "estimate: nothing published in weeks (AMD: supply tight through 2025)"),
    "amd-cdna3": _weeks("amd-cdna3", 12, "estimate: nothing published in weeks; a shipping generation"),
    "older-gpu": _weeks("older-gpu", 8, "estimate: A100/V100-class systems sell from stock or refurbished"),
    "announced": _weeks("announced", 52, "estimate: an announced roadmap system, first volume a year out"),
    "ib-switch": _weeks("ib-switch", 26, "estimate: Gartner (2026-03): data-centre switches went from 1-2 to 3-9 "
                        "months; InfiniBand tied to NVIDIA allocation"),
    "ethernet-switch": _weeks("ethernet-switch", 20, "estimate: Gartner (2026-03) 3-9 months for data-centre "
                              "switches, AI fabrics favoured"),
    "transceiver-1.6t": _weeks("transceiver-1.6t", 40, "estimate: lasers (EML) sold out past 2027 (TrendForce "
                               "2025-12, Lumentum 2026-02)"),
    "transceiver-800g": _weeks("transceiver-800g", 30, "low: 800G modules 30-50 weeks (one page, 2025); 2026 "
                               "supply 35-40M against ~60M demand (expert call, 2026-02)"),
    "transceiver": _weeks("transceiver", 12, "estimate: 400G and slower modules, the mature lines"),
    "cable": _weeks("cable", 12, "low: high-speed connectors 10-12 weeks (distributor page)"),
    "nic": _weeks("nic", 12, "estimate: ConnectX-7 and BlueField-3, shipping in volume (ConnectX-8 rows carry "
                  "their own)"),
    "rack": _weeks("rack", 8, "estimate: nothing published"),
    "pdu": _weeks("pdu", 12, "estimate: nothing published"),
    "cdu": _weeks("cdu", 26, "medium: electrical and thermal gear ~28 weeks on average (The Register, 2025-03); "
                  "some CDU makers a year (LiquidStack, 2025)"),
    "subnet-manager": _weeks("subnet-manager", 26, "estimate: as the InfiniBand switches it manages"),
    "storage": _weeks("storage", 16, "estimate: all-NVMe appliances; 2026 NAND shortage"),
    "management-server": _weeks("management-server", 12, "estimate: 2-socket x86 servers; CPU waits of 8-26 "
                                "weeks (Reuters, 2026)"),
}  # fmt: skip
