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
