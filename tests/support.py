"""Helpers the test modules share: a catalog built from row dicts, the tiny catalog whose optima are worked by
hand, a scenario builder, and the DeepSpeed #2928 predict arguments. (pytest's fixtures stay in conftest.py.)"""

from __future__ import annotations

import numpy as np

from planner.inputs.scenario import Scenario
from planner.model.calibration import Calibration

# DeepSpeed issue #2928: 176B on 384 V100 in 16-GPU nodes at 2048 tokens per GPU per micro-step
DS2928 = ["--params", "176B", "--gpu", "V100", "--gpus", "384", "--gpus-per-node", "16", "--tokens-per-gpu", "2048"]


def make_catalog(**rows_by_kind):
    """An in-memory catalog from row dicts per kind (source/date/confidence filled in)."""
    from planner.catalog.load import Catalog, Origin
    from planner.catalog.rows import ROW_TYPES

    catalog = Catalog()
    for kind, rows in rows_by_kind.items():
        for i, values in enumerate(rows, start=2):
            row = ROW_TYPES[kind].model_validate({"source": "test", "date": "2026", "confidence": "solid", **values})
            catalog.rows[kind][row.key()] = row
            catalog.origins[(kind, row.key())] = Origin(f"{kind}.csv", i)
    return catalog


# ---------------------------------------------------------------- a tiny catalog whose optima are worked by hand

CAL = Calibration(gemm_efficiency={"other": 0.5}, eta_net={"ib": 0.9, "roce": 0.8}, overlap=0.0)

GPU = dict(name="T1", vendor="Acme", peak_bf16_tflops=100, hbm_gib=80, hbm_gb_per_s=2000, tdp_w=500)
SERVER = dict(
    name="S8",
    vendor="Acme",
    gpu="T1",
    gpus_per_node=8,
    price_usd=100000,
    power_w=5000,
    pcie_gen=5,
    pcie_lanes=128,
    pcie_lanes_per_gpu=16,
    scale_up_gb_per_s=300,
    max_nics_per_host=2,
)
NICS = [
    dict(sku="N100", name="N100", vendor="Acme", speed_gbps=100, ports=1, protocols="both", price_usd=1000, power_w=10),
    dict(sku="N200", name="N200", vendor="Acme", speed_gbps=200, ports=1, protocols="roce", price_usd=3000, power_w=15),
]
SWITCHES = [
    dict(
        sku="SW-A",
        name="IB 8x200",
        vendor="Acme",
        fabric="ib",
        ports=8,
        port_gbps=200,
        max_breakout=2,
        price_usd=10000,
        power_w=100,
    ),
    dict(
        sku="SW-B", name="Eth 4x100", vendor="Acme", fabric="roce", ports=4, port_gbps=100, price_usd=2000, power_w=50
    ),
]
OPTICS = [
    dict(sku="DAC100", name="DAC100", kind="dac", fabric="any", gbps=100, reach_m=3, price_usd=50, power_w=0),
    dict(
        sku="SPLIT200",
        name="SPLIT200",
        kind="dac",
        fabric="any",
        gbps=100,  # per leg: a 200G head split into two 100G legs
        breakout=2,
        reach_m=3,
        price_usd=120,
        power_w=0,
    ),
    dict(sku="T100", name="T100", kind="transceiver", fabric="any", gbps=100, reach_m=100, price_usd=100, power_w=2),
    dict(sku="T200", name="T200", kind="transceiver", fabric="any", gbps=200, reach_m=100, price_usd=200, power_w=3),
    dict(sku="F100", name="F100", kind="fiber", fabric="any", gbps=100, reach_m=30, price_usd=10, power_w=0),
    dict(sku="F200", name="F200", kind="fiber", fabric="any", gbps=200, reach_m=30, price_usd=10, power_w=0),
]


def tiny(**over):
    kinds = dict(gpus=[GPU], servers=[SERVER], nics=NICS, switches=SWITCHES, optics=OPTICS)
    kinds.update(over)
    return make_catalog(**kinds)


def scenario(**over) -> Scenario:
    data = {
        "workload": {"params": "1B", "seq_len": 1024, "micro_batches": [1]},
        "requirement": {"gpus": 32},
        "target_tflops": 1,
        # no spares unless a test asks: the hand-priced optima below are the parts alone
        "spares": {"node_share": 0.0, "link_share": 0.0, "switches_per_model": 0},
        # and, with no spare node, no wait for repairs (which spares would cover) unless a test asks
        "reliability": {"repair_hours": 0.0},
        "include": {"installation": False},
    }
    for key, value in over.items():
        section, _, leaf = key.partition("__")
        if leaf:
            data.setdefault(section, {})[leaf] = value
        else:
            data[section] = value
    return Scenario.model_validate(data)


class Draw:
    """Seeded draws for the random problems: the same seed, the same catalog and scenario."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def pick(self, options: list):
        return options[int(self.rng.integers(len(options)))]

    def int(self, lo: int, hi: int) -> int:
        return int(self.rng.integers(lo, hi + 1))

    def real(self, lo: float, hi: float) -> float:
        return float(self.rng.uniform(lo, hi))

    def flag(self) -> bool:
        return bool(self.rng.integers(2))

    def subset(self, options: list, least: int, most: int) -> list:
        size = self.int(least, most)
        return [options[i] for i in sorted(self.rng.choice(len(options), size=size, replace=False))]


def bom_parts(plan, hosts_per_node: int = 1):
    """A plan's parts counted from what its report lists (choice and links), not from the sizing code."""
    from planner.model import reliability

    c = plan.choice
    links = {line.segment: line.count for line in plan.links if line.section == "compute fabric"}
    tiers = c.switches_by_tier
    return reliability.Parts(
        gpus=c.gpus,
        hosts=c.nodes * hosts_per_node,
        nics=c.nodes * c.nics_per_node,
        node_links=links.get("node-leaf", 0),
        fabric_links=links.get("switch-switch", 0),
        leaves=tiers.get("leaf", 0),
        upper_switches=tiers.get("spine", 0) + tiers.get("core", 0),
        spare_nodes=sum(b.quantity for b in plan.bom if b.section == "spares" and b.category == "servers"),
    )


def refused(result, code: int, *fragments: str) -> str:
    """The checks every hostile case shares: exit code, no traceback, a short message with fragments."""
    output = result.stdout + result.stderr
    assert result.exit_code == code, output[:2000]
    assert "Traceback" not in output
    assert len(result.stderr.encode()) < 2048, result.stderr[:2000]
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr
    return result.stderr


# The NIC catalog's required columns, as a user's CSV or sheet writes them
NIC_COLUMNS = [
    "sku",
    "name",
    "vendor",
    "speed_gbps",
    "ports",
    "protocols",
    "price_usd",
    "power_w",
    "source",
    "date",
    "confidence",
]
NIC_HEADER = ",".join(NIC_COLUMNS) + "\n"


def row_csv(row: dict) -> str:
    """A catalog row (a model_dump) as a user's one-row CSV: its filled columns, lists ';'-joined."""
    return rows_csv([row])


def rows_csv(rows: list[dict]) -> str:
    """Catalog rows (model_dumps) as one CSV over every column any of them fills (but notes and aliases), lists
    ';'-joined, a cell left empty where its row has no value."""
    empty = (None, [], ())
    columns = list(
        dict.fromkeys(c for row in rows for c in row if row[c] not in empty and c not in ("notes", "aliases"))
    )

    def cell(value) -> str:
        if value in empty:
            return ""
        return '"' + (";".join(map(str, value)) if isinstance(value, list | tuple) else str(value)) + '"'

    return "".join(",".join(line) + "\n" for line in [columns, *([cell(row.get(c)) for c in columns] for row in rows)])
