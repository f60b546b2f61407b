"""Pydantic types for catalog rows. No I/O here: catalog.py reads files and feeds these.

Column names carry units (price_usd, speed_gbps, hbm_gib); a cell may be a plain number in that unit or
a quantity as a person types it ("$36,000", "400Gbps", "80GiB"), parsed by planner.base.units.
"""

from __future__ import annotations

import re
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema, field_validator, model_validator
from pydantic_core import PydanticCustomError

from planner.base.limits import (
    MAX_COUNT,
    MAX_GPUS_PER_NODE,
    MAX_HOSTS_PER_NODE,
    MAX_NICS_PER_HOST,
    MAX_QUANTITY,
    MAX_RACKS_PER_NODE,
    MAX_REACH_M,
    short,
)
from planner.base.text import text_problem
from planner.base.units import parse_quantity
from planner.catalog.kinds import KINDS, SCHEMA_VERSION

__all__ = ["KINDS", "ROW_TYPES", "SCHEMA_VERSION"]


def quantity_type(dimension: str, example: str, **bounds: float):
    """A float type that also accepts text with units ("400Gbps"); its JSON schema says so."""
    schema = {
        "anyOf": [{"type": "number"}, {"type": "string", "examples": [example]}],
        "description": f"Number or quantity, e.g. {example!r}.",
    }
    parse = BeforeValidator(lambda v: parse_quantity(v, dimension))
    # every quantity has a ceiling (a field's own `le` may be lower): no absurd float reaches the model
    return Annotated[(float, parse, WithJsonSchema(schema), Field(**{"le": MAX_QUANTITY[dimension], **bounds}))]


def _whole(value: object) -> object:
    """Counts arrive as text or floats from CSV/XLSX; accept 8, '8', 8.0, '1K' but not 8.5. An int is
    kept as it is (however large): the field's `le` then names its range."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    number = parse_quantity(value, "count")
    if number != int(number):
        raise ValueError(f"{short(value)} must be a whole number")
    return int(number)


def count(ge: int | None = None, le: int = MAX_COUNT):
    """A whole-number type between ge and le (by default at most MAX_COUNT: every count then fits a C long
    for numpy and the MILP). One Field per type, so a message gives the field's own range."""
    schema = WithJsonSchema({"anyOf": [{"type": "integer"}, {"type": "string"}]})
    return Annotated[int, BeforeValidator(_whole), schema, Field(ge=ge, le=le)]


Count = count()
PositiveCount = count(ge=1)
USD = quantity_type("usd", "$36,000", ge=0)
Gbps = quantity_type("gbps", "400Gbps", gt=0)
GBps = quantity_type("gb_per_s", "900GB/s", gt=0)
GiB = quantity_type("gib", "80GiB", gt=0)
Watts = quantity_type("w", "700W", ge=0)
TFLOPs = quantity_type("tflops", "989", gt=0)
Params = quantity_type("count", "176B", gt=0)
Meters = quantity_type("count", "3", gt=0)
Terabytes = quantity_type("count", "7.68", gt=0)


def error_text(err: dict) -> str:
    """What is wrong in one pydantic error, in planner's words ("must be at most 64"): a bound names
    the allowed range, a value error is our own message."""
    kind, ctx = err["type"], err.get("ctx", {})
    bound = next((ctx[k] for k in ("gt", "ge", "lt", "le") if k in ctx), None)
    relation = {
        "greater_than": "greater than",
        "greater_than_equal": "at least",
        "less_than": "less than",
        "less_than_equal": "at most",
    }.get(kind)
    if relation and isinstance(bound, int | float):
        if bound != int(bound):
            return f"must be {relation} {bound}"
        return f"must be {relation} {int(bound):,}" if abs(bound) >= 1e4 else f"must be {relation} {int(bound)}"
    if kind == "missing":
        return "is empty; this column is required"
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected')}"
    if kind == "finite_number":
        return "must be a finite number"
    return str(err["msg"]).removeprefix("Value error, ")


Fabric = Literal["ib", "roce"]
# A compute fabric as the planner prices and times it: InfiniBand, lossless RoCE on any Ethernet switch
# (PFC + ECN configured), or NVIDIA Spectrum-X (Spectrum-4 switches with SuperNIC-class NICs).
PlanFabric = Literal["ib", "roce", "spectrum-x"]
CloudFabric = Literal["efa", "ib", "roce", "tcpx", "tcp", "none"]
Confidence = Literal["solid", "medium", "low", "estimate"]

_DATE = re.compile(r"^\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)?$")
_FABRIC_WORDS = {"ib": "ib", "infiniband": "ib", "roce": "roce", "rocev2": "roce", "ethernet": "roce", "eth": "roce"}


def _split_aliases(value: object) -> object:
    if value is None:
        return []
    if isinstance(value, str):
        return [a.strip() for a in value.split(";") if a.strip()]
    return value


def _lower(value: object) -> object:
    return value.strip().lower() if isinstance(value, str) else value


def _fabric_word(value: object) -> object:
    return _FABRIC_WORDS.get(value.strip().lower(), value) if isinstance(value, str) else value


Aliases = Annotated[list[str], BeforeValidator(_split_aliases)]

# ---- ports and connectors (planner/catalog/connectors.py reads these; docs/plan.md section 2 explains them)
Cage = Literal["OSFP", "QSFP112", "QSFP-DD", "QSFP56", "QSFP28", "RJ45"]
Top = Literal["finned", "flat"]
Signalling = Literal["NRZ", "PAM4"]
_LANE_RATE = re.compile(r"^(\d+(?:\.\d+)?)G-(NRZ|PAM4)$")


def _cage(value: object) -> object:
    if not isinstance(value, str):
        return value
    text = value.strip().upper().replace(" ", "")
    return {"QSFPDD": "QSFP-DD"}.get(text, text)


def _lane_modes(value: object) -> object:
    """'50G-PAM4;25G-NRZ' -> ['50G-PAM4', '25G-NRZ'] (each checked)."""
    modes = _split_aliases(value)
    for mode in modes if isinstance(modes, list) else []:
        if not _LANE_RATE.match(str(mode).upper()):
            raise ValueError(f"{mode!r} is not a lane rate; write e.g. 100G-PAM4 or 25G-NRZ")
    return [str(m).upper() for m in modes] if isinstance(modes, list) else modes


def _lengths(value: object) -> object:
    """'1:MCP7Y00-N001;1.5:MCP7Y00-N01A' -> [(1.0, 'MCP7Y00-N001'), (1.5, 'MCP7Y00-N01A')], shortest first."""
    if value is None or isinstance(value, list):
        return value or []
    pairs = []
    for item in str(value).split(";"):
        if not item.strip():
            continue
        metres, sep, part = item.partition(":")
        try:
            length = float(metres)
        except ValueError:
            length = -1.0
        if not sep or not part.strip() or not 0 < length <= MAX_REACH_M:  # (nan and inf fail here too)
            raise ValueError(
                f"{short(item.strip())}: write each orderable length as METRES:PART_NUMBER, e.g. 3:MFP7E10-N003 "
                f"(METRES above 0, at most {MAX_REACH_M:,.0f})"
            )
        pairs.append((length, part.strip()))
    return sorted(pairs)


def _protocols(value: object) -> object:
    """'both' -> 'ib;roce'; 'ib; roce; spectrum-x' -> 'ib;roce;spectrum-x' (each a known fabric)."""
    if not isinstance(value, str):
        return value
    words = [w.strip().lower() for w in value.replace(",", ";").split(";") if w.strip()]
    words = [f for w in words for f in (("ib", "roce") if w == "both" else (_FABRIC_WORDS.get(w, w),))]
    unknown = [w for w in words if w not in ("ib", "roce", "spectrum-x")]
    if unknown or not words:
        raise ValueError("list fabrics from ib, roce, spectrum-x separated by ';' (or write both)")
    return ";".join(dict.fromkeys(words))


CageField = Annotated[Cage, BeforeValidator(_cage)]
LaneModes = Annotated[list[str], BeforeValidator(_lane_modes)]
Lengths = Annotated[list[tuple[float, str]], BeforeValidator(_lengths)]
Uses = Annotated[list[Literal["compute", "storage", "inband", "oob"]], BeforeValidator(_split_aliases)]
Counts = Annotated[list[Annotated[int, Field(ge=1, le=MAX_NICS_PER_HOST)]], BeforeValidator(_split_aliases)]
FabricField = Annotated[Fabric, BeforeValidator(_fabric_word)]
CloudFabricField = Annotated[Literal["ib", "roce", "efa", "tcpx", "tcp"], BeforeValidator(_fabric_word)]


class CatalogRow(BaseModel):
    """Columns every catalog kind shares: where the figures come from and how sure we are."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, frozen=True)

    catalog_kind: ClassVar[str]
    key_fields: ClassVar[tuple[str, ...]] = ("name",)
    # columns `planner catalog list KIND` shows by default (the rest with --all)
    display: ClassVar[tuple[str, ...]] = ()
    # {old name: new name} of columns an earlier schema named otherwise: files using them still load
    renamed_columns: ClassVar[dict[str, str]] = {}

    source: str = Field(min_length=1, description="Where the figures come from (URL, document, quote).")
    date: str = Field(description="Date of the source: YYYY, YYYY-MM or YYYY-MM-DD.")
    confidence: Annotated[Confidence, BeforeValidator(_lower)] = Field(
        description="solid, medium, low, or estimate (derived, not quoted; say how in notes)."
    )
    notes: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _plain_text(cls, data: object) -> object:
        """Every text cell: no control characters (planner.base.limits says which and why), at most
        MAX_CELL_CHARS. One check per row, not per cell: a 100k-row catalog pays ~0.1 s for it."""
        if isinstance(data, dict):
            problem = text_problem(data)
            if problem:
                column, message = problem
                raise PydanticCustomError("text", "{message}", {"column": column, "message": message})
        return data

    @field_validator("date", mode="before")
    @classmethod
    def _iso_date(cls, value: object) -> object:
        text = str(value).strip()
        if hasattr(value, "isoformat"):  # a real date cell from a spreadsheet
            text = value.isoformat()[:10]
        if not _DATE.match(text):
            raise ValueError("write the date as YYYY, YYYY-MM or YYYY-MM-DD")
        return text

    def key(self) -> tuple[str, ...]:
        return tuple(str(getattr(self, f)).lower() for f in self.key_fields)


# GPU architectures (the compute model's efficiency is a property of the architecture, not of each SKU)
ARCHITECTURES = ("volta", "ampere", "hopper", "blackwell", "blackwell-ultra", "rubin", "cdna3", "cdna4", "gaudi3")


class GpuRow(CatalogRow):
    catalog_kind: ClassVar[str] = "gpus"
    display: ClassVar[tuple[str, ...]] = (
        "name",
        "vendor",
        "architecture",
        "peak_bf16_tflops",
        "peak_fp8_tflops",
        "peak_fp4_tflops",
        "hbm_gib",
        "hbm_gb_per_s",
        "tdp_w",
        "price_usd",
        "confidence",
    )

    name: str = Field(min_length=1)
    aliases: Aliases = Field(default_factory=list, description="Other names, separated by ';'.")
    vendor: str = Field(min_length=1)
    architecture: Annotated[Literal[ARCHITECTURES], BeforeValidator(_lower)] | None = Field(
        None, description=f"The GPU's architecture: {', '.join(ARCHITECTURES)}."
    )
    peak_bf16_tflops: TFLOPs = Field(description="Peak dense (not 2:4 sparse) fp16/bf16 tensor TFLOPs.")
    peak_fp8_tflops: TFLOPs | None = Field(None, description="Peak dense fp8 tensor TFLOPs (none: no fp8).")
    peak_fp4_tflops: TFLOPs | None = Field(
        None, description="Peak dense fp4 (NVFP4/MXFP4) tensor TFLOPs (none: no fp4)."
    )
    hbm_gib: GiB = Field(description="HBM the software sees, GiB (nvidia-smi / rocm-smi total).")
    hbm_gb_per_s: GBps
    tdp_w: Watts
    price_usd: USD | None = None

    def perf_columns(self) -> dict:
        """The GPU as the performance model reads it: its architecture (efficiency is a property of the
        architecture), its dense peaks per precision (NaN: none) and its HBM."""
        nan = float("nan")
        return {
            "gpu": self.name,
            "architecture": self.architecture or "other",
            "peak_tflops": self.peak_bf16_tflops,
            "peak_fp8_tflops": self.peak_fp8_tflops if self.peak_fp8_tflops is not None else nan,
            "peak_fp4_tflops": self.peak_fp4_tflops if self.peak_fp4_tflops is not None else nan,
            "hbm_gib": self.hbm_gib,
            "hbm_gb_per_s": self.hbm_gb_per_s,
        }

    @model_validator(mode="after")
    def _peaks_in_order(self) -> GpuRow:
        """A narrower format never runs slower than a wider one on the same tensor cores: bf16 <= fp8 <= fp4."""
        peaks = [("peak_bf16_tflops", self.peak_bf16_tflops), ("peak_fp8_tflops", self.peak_fp8_tflops)]
        peaks += [("peak_fp4_tflops", self.peak_fp4_tflops)]
        known = [(column, value) for column, value in peaks if value is not None]
        for (_, wider), (column, narrower) in zip(known, known[1:], strict=False):
            if narrower < wider:
                message = f"{narrower:g} is below the wider format's {wider:g}: give dense peaks, narrowest highest"
                raise PydanticCustomError("peaks", "{message}", {"column": column, "message": message})
        return self


class ServerRow(CatalogRow):
    catalog_kind: ClassVar[str] = "servers"
    display: ClassVar[tuple[str, ...]] = (
        "name",
        "gpu",
        "gpus_per_node",
        "hosts",
        "scale_up_gpus",
        "price_usd",
        "power_w",
        "max_nics_per_host",
        "included_nic",
        "included_nics",
        "confidence",
    )
    # schema 1 names of columns that meant the same on one-host servers (read as their new names)
    renamed_columns: ClassVar[dict[str, str]] = {
        "intra_node_gb_per_s": "scale_up_gb_per_s",
        "max_nics_per_node": "max_nics_per_host",
    }

    name: str = Field(min_length=1)
    vendor: str = Field(min_length=1)
    gpu: str = Field(min_length=1, description="A GPU name or alias from gpus.csv.")
    # -- the unit bought: one node of a plan (a server, or a whole rack-scale system), its price and power
    gpus_per_node: count(ge=1, le=MAX_GPUS_PER_NODE) = Field(
        description="GPUs in one unit of this row: a server (8 on HGX), or a whole rack-scale system (72 on NVL72)."
    )
    price_usd: USD
    power_w: Watts = Field(description="Maximum power of one unit (a rack-scale system: the whole rack).")
    # -- the scale-up domain: GPUs whose collectives never reach the scale-out NICs
    scale_up_gpus: count(ge=1, le=MAX_GPUS_PER_NODE) | None = Field(
        None,
        description="GPUs in one scale-up domain (NVLink/NVSwitch, xGMI, or a PCIe-card server's PCIe switches): "
        "8 on HGX, 72 on NVL72; a unit holds whole domains. Default: the GPUs of one host.",
    )
    scale_up_gb_per_s: GBps = Field(
        description="Scale-up bandwidth per GPU per direction inside the domain (NVLink 4: 450, NVLink 5: 900)."
    )
    # -- the host: each with its own CPUs, PCIe, DRAM and NICs (a GB200 NVL72 compute tray is one)
    hosts: count(ge=1, le=MAX_HOSTS_PER_NODE) = Field(
        1, description="Hosts (compute trays) in one unit: 1 for a server, 18 for a GB200/GB300 NVL72."
    )
    pcie_gen: count(ge=1, le=7)
    pcie_lanes: PositiveCount = Field(description="Total CPU PCIe lanes of one host.")
    pcie_lanes_per_gpu: PositiveCount
    max_nics_per_host: count(ge=1, le=MAX_NICS_PER_HOST) = Field(
        description="PCIe slots for scale-out (compute) NICs per host, e.g. 8 on HGX/DGX: one behind each GPU's "
        "PCIe switch; 4 on an NVL72 compute tray."
    )
    nic_slot_gen: count(ge=1, le=7) | None = Field(
        None, description="PCIe generation of the NIC slots (default: pcie_gen)."
    )
    nic_slot_lanes: PositiveCount = Field(16, description="PCIe lanes per NIC slot.")
    nic_counts: Counts = Field(
        default_factory=list,
        description="NIC counts per host the platform is built with, ';'-separated (default: divisors of the GPUs "
        "per host up to max_nics_per_host, i.e. one NIC per GPU or per 2, 4, ... GPUs).",
    )
    nics_fixed: bool = Field(False, description="The included NICs are built in (DGX): no other NIC or count.")
    nic_cage: CageField | None = Field(
        None, description="Cage the compute NIC ports leave the node by, when not the NIC's own."
    )
    nic_cage_ports: PositiveCount | None = Field(None, description="NIC ports per such cage (2: twin-port, DGX H100).")
    nic_cage_top: Top | None = Field(None, description="Module top that cage takes (flat: riding heat sink).")
    included_nic: str | None = Field(None, description="NIC sku (nics.csv) included in price_usd.")
    included_nics: count(ge=0, le=MAX_NICS_PER_HOST) = Field(0, description="Included compute NICs per host.")
    storage_nic: str | None = Field(
        None, description="NIC sku for storage (port 1) and in-band management (port 2), as in DGX SuperPOD."
    )
    storage_nics: count(ge=0, le=MAX_NICS_PER_HOST) = Field(0, description="Storage NICs per host.")
    storage_nics_included: bool = Field(False, description="The storage NICs come with the server (price_usd).")
    dram_gib: GiB | None = Field(None, description="DRAM of one host.")
    dram_gb_per_s: GBps | None = Field(
        None, description="Peak DRAM bandwidth of one host: sockets x channels x MT/s x 8 B."
    )
    nvme_slots: count(ge=0) = Field(0, description="NVMe drive bays of one host.")
    root_complex_gb_per_s: GBps | None = Field(None, description="CPU root-complex limit on PCIe traffic, if known.")
    host_link_gb_per_s: GBps | None = Field(
        None,
        description="GPU-to-host bandwidth per GPU per direction when the link is not PCIe (NVLink-C2C on "
        "Grace-Blackwell trays); default: pcie_lanes_per_gpu lanes of PCIe pcie_gen.",
    )
    # -- the rack: what the unit stands in, and how it is cooled
    rack_units: PositiveCount | None = Field(
        None, description="Height in rack units (U); a rack-scale system: its rack's."
    )
    racks: count(ge=0, le=MAX_RACKS_PER_NODE) = Field(
        0,
        description="0: a server, mounted in the layout's racks; N: a rack-scale system that comes as N whole racks "
        "with their power shelves and NVLink switch trays (GB200 NVL72: 1).",
    )
    cooling: Annotated[Literal["air", "liquid", "hybrid"], BeforeValidator(_lower)] = Field(
        "air", description="air, liquid (direct-to-chip: a CDU and facility water), or hybrid (liquid and air)."
    )
    liquid_fraction: quantity_type("count", "0.85", ge=0, le=1) | None = Field(
        None,
        description="Share of power_w the liquid loop removes (the rest heats the room's air): air 0, liquid 1 "
        "unless given; hybrid must say (GB200 NVL72: ~0.85).",
    )
    status: Annotated[Literal["available", "announced"], BeforeValidator(_lower)] = Field(
        "available",
        description="available (orderable), or announced (a roadmap system: planned only when named in "
        "constraints.servers, and said so)",
    )

    lead_weeks: quantity_type("count", "26", ge=0) | None = Field(
        None, description="Weeks from order to delivery (empty: its family's, planner.assumptions LEAD_WEEKS)."
    )

    @model_validator(mode="after")
    def _whole_hosts_and_domains(self) -> ServerRow:
        """A unit holds whole hosts and whole scale-up domains, and a domain is whole hosts (NVL72) or a host
        is whole domains (HGX: one)."""
        _check_topology(self.gpus_per_node, self.hosts, self.scale_up_domain)
        return self

    @model_validator(mode="after")
    def _liquid_share(self) -> ServerRow:
        """How much heat goes to liquid follows from the cooling, except for hybrid, which must say."""
        share, cooling = self.liquid_fraction, self.cooling
        problem = None
        if cooling == "hybrid" and share is None:
            problem = "hybrid cooling: give the share of power_w the liquid loop removes (0-1, e.g. 0.85)"
        elif cooling == "air" and share not in (None, 0):
            problem = "an air-cooled server sends no heat to liquid: leave liquid_fraction empty or set cooling"
        elif cooling == "liquid" and share == 0:
            problem = "a liquid-cooled server sends heat to liquid: give its share above 0, or set cooling to air"
        if problem:
            raise PydanticCustomError("cooling", "{message}", {"column": "liquid_fraction", "message": problem})
        return self

    @property
    def liquid_share(self) -> float:
        """Share of the unit's power removed by liquid (the CDUs are sized on it)."""
        if self.liquid_fraction is not None:
            return self.liquid_fraction
        return 1.0 if self.cooling == "liquid" else 0.0

    @property
    def orderable(self) -> bool:
        return self.status == "available"

    @property
    def gpus_per_host(self) -> int:
        return self.gpus_per_node // self.hosts

    @property
    def scale_up_domain(self) -> int:
        """GPUs per scale-up domain (the column, or one host's GPUs)."""
        return self.scale_up_gpus or self.gpus_per_host

    @property
    def domains_per_node(self) -> int:
        return self.gpus_per_node // self.scale_up_domain

    @property
    def rack_scale(self) -> bool:
        """A system that is its own rack(s), rather than a server mounted in the layout's racks."""
        return self.racks > 0

    def included_count(self, nic: NicRow) -> int:
        """How many of this NIC (any port mode of the card) one node's price already includes (every host's)."""
        return self.included_nics * self.hosts if (self.included_nic or "").lower() == nic.card.lower() else 0

    @property
    def storage_nics_per_node(self) -> int:
        return self.storage_nics * self.hosts

    @property
    def slot_gen(self) -> int:
        return self.nic_slot_gen or self.pcie_gen

    def nic_configurations(self, most_per_host: int | None = None) -> list[int]:
        """The compute-NIC counts per node this platform is built with, every host alike: fixed (DGX), listed,
        or one NIC per GPU or per 2, 4, ... GPUs (the divisors of the host's GPU count that fit its slots and
        `most_per_host`)."""
        if self.nics_fixed:
            per_host = [self.included_nics]
        elif self.nic_counts:
            per_host = sorted(c for c in set(self.nic_counts) if c <= self.max_nics_per_host)
        else:
            g = self.gpus_per_host
            per_host = [c for c in range(1, min(g, self.max_nics_per_host) + 1) if g % c == 0]
        return [c * self.hosts for c in per_host if most_per_host is None or c <= most_per_host]


def _check_topology(gpus: int, hosts: int, domain: int) -> None:
    """`gpus` make `hosts` equal hosts and whole `domain`-GPU scale-up domains, each domain whole hosts or a
    part of one host; else an error naming the column to fix."""
    per_host = gpus // hosts
    problem = None
    if gpus % hosts:
        problem = "hosts", f"{gpus} GPUs do not split into {hosts} equal hosts"
    elif gpus % domain:
        problem = (
            "scale_up_gpus",
            (
                f"{gpus} GPUs do not hold whole {domain}-GPU domains: one unit of a row holds whole scale-up domains "
                "(describe a rack-scale system as one row with its hosts)"
            ),
        )
    elif domain % per_host and per_host % domain:
        problem = "scale_up_gpus", f"a {domain}-GPU domain is neither whole {per_host}-GPU hosts nor a part of one host"
    if problem:
        column, message = problem
        raise PydanticCustomError("topology", "{message}", {"column": column, "message": message})


class ProductRow(CatalogRow):
    """A purchasable part identified by its SKU (NICs, switches, drives)."""

    key_fields: ClassVar[tuple[str, ...]] = ("sku",)

    sku: str = Field(min_length=1)
    name: str = Field(min_length=1)
    vendor: str = Field(min_length=1)

    lead_weeks: quantity_type("count", "26", ge=0) | None = Field(
        None, description="Weeks from order to delivery (empty: its family's, planner.assumptions LEAD_WEEKS)."
    )


class NicRow(ProductRow):
    catalog_kind: ClassVar[str] = "nics"
    display: ClassVar[tuple[str, ...]] = (
        "sku",
        "name",
        "speed_gbps",
        "ports",
        "cage",
        "protocols",
        "price_usd",
        "power_w",
        "confidence",
    )

    part_number: str | None = None
    mode_of: str | None = Field(
        None,
        description="The SKU of the card this row is another port mode of (ConnectX-8: 1x800G XDR InfiniBand or "
        "2x400GbE): the same card, so its price and power are that row's; leave them empty here.",
    )
    speed_gbps: Gbps = Field(description="Total line rate of all ports (ports x port rate).")
    ports: PositiveCount
    ports_per_cage: PositiveCount = Field(
        1, description="Ports per cage (2: two 400GbE ports in one OSFP cage, as a ConnectX-8 runs Ethernet)."
    )
    protocols: Annotated[str, BeforeValidator(_protocols)] = Field(
        description="Fabrics it runs, ';'-separated: ib, roce (lossless RoCE), spectrum-x (SuperNIC class); or both."
    )
    form_factor: str | None = None
    cage: CageField | None = Field(None, description="Port cage: OSFP, QSFP112, QSFP56, QSFP28.")
    lanes: PositiveCount | None = Field(None, description="Electrical lanes per port at its native rate.")
    lane_gbps: Gbps | None = None
    signalling: Signalling | None = None
    lane_modes: LaneModes = Field(default_factory=list, description="Other lane rates the port runs, e.g. 25G-NRZ.")
    top: Top | None = Field(None, description="Module top its cage takes (OSFP NIC cages: flat).")
    pcie_gen: count(ge=1, le=7) | None = Field(None, description="The card's PCIe generation.")
    pcie_lanes: PositiveCount | None = Field(None, description="The card's PCIe lanes.")
    price_usd: USD | None = Field(None, description="Price of the card (required, except on a port-mode row).")
    power_w: Watts | None = Field(None, description="Power of the card (required, except on a port-mode row).")
    seller: str | None = None

    @model_validator(mode="after")
    def _priced_once(self) -> NicRow:
        """A card has one price: its own row's. A port-mode row takes it from that row (filled in at load)."""
        for column in ("price_usd", "power_w"):
            value = getattr(self, column)
            if self.mode_of and value is not None:
                message = f"a port mode takes the price and power of its card ({self.mode_of}): leave {column} empty"
            elif not self.mode_of and value is None:
                message = "is empty; this column is required"
            else:
                continue
            raise PydanticCustomError("priced", "{message}", {"column": column, "message": message})
        if self.ports % self.ports_per_cage:
            message = f"{self.ports} ports do not fill whole {self.ports_per_cage}-port cages"
            raise PydanticCustomError("cages", "{message}", {"column": "ports_per_cage", "message": message})
        return self

    @property
    def card(self) -> str:
        """The SKU of the physical card (this row's, or the card it is a port mode of)."""
        return self.mode_of or self.sku

    @property
    def fabrics(self) -> tuple[str, ...]:
        return tuple(self.protocols.split(";"))

    @property
    def port_gbps(self) -> float:
        return self.speed_gbps / self.ports


class SwitchRow(ProductRow):
    catalog_kind: ClassVar[str] = "switches"
    display: ClassVar[tuple[str, ...]] = (
        "sku",
        "name",
        "fabric",
        "ports",
        "port_gbps",
        "cage",
        "uses",
        "price_usd",
        "power_w",
        "confidence",
    )

    asic: str | None = None
    fabric: FabricField = Field(description="ib (InfiniBand) or roce (Ethernet switch, RoCE with PFC/ECN).")
    ports: PositiveCount = Field(description="Logical ports at port_gbps (a twin-port OSFP cage holds two).")
    port_gbps: Gbps
    max_breakout: PositiveCount = Field(1, description="Most endpoints one port splits into (2 for 2x200G on NDR).")
    cage: CageField | None = None
    ports_per_cage: PositiveCount = Field(1, description="Logical ports per cage (2: twin-port OSFP, Quantum-2).")
    lanes: PositiveCount | None = Field(None, description="Electrical lanes per logical port.")
    lane_gbps: Gbps | None = None
    signalling: Signalling | None = None
    lane_modes: LaneModes = Field(default_factory=list, description="Other lane rates its ports run, e.g. 50G-PAM4.")
    top: Top | None = Field(None, description="Module top its cages need (air-cooled OSFP: finned).")
    managed: bool | None = Field(None, description="Runs its own subnet manager (IB); false needs UFM.")
    spectrum_x: bool = Field(False, description="A Spectrum-X switch (Spectrum-4 class).")
    uses: Uses = Field(
        default_factory=lambda: ["compute", "storage"], description="compute, storage, inband, oob (';'-separated)."
    )
    rack_units: PositiveCount = 1
    price_usd: USD
    power_w: Watts

    @property
    def fabrics(self) -> tuple[str, ...]:
        """The planner fabrics it carries: ib; or roce, and spectrum-x on a Spectrum-X switch."""
        if self.fabric == "ib":
            return ("ib",)
        return ("roce", "spectrum-x") if self.spectrum_x else ("roce",)


class OpticRow(CatalogRow):
    catalog_kind: ClassVar[str] = "optics"
    key_fields: ClassVar[tuple[str, ...]] = ("sku",)
    display: ClassVar[tuple[str, ...]] = (
        "sku",
        "kind",
        "cage",
        "leg_cage",
        "fabric",
        "gbps",
        "breakout",
        "reach_m",
        "price_usd",
        "power_w",
        "confidence",
    )

    sku: str = Field(min_length=1)
    name: str = Field(min_length=1)
    kind: Annotated[Literal["transceiver", "dac", "acc", "aoc", "fiber"], BeforeValidator(_lower)] = Field(
        description="transceiver (per link end), dac/acc/aoc (whole link, head and legs), fiber (between transceivers)."
    )
    fabric: Annotated[Literal["ib", "roce", "any"], BeforeValidator(_fabric_word)]
    form_factor: str | None = None
    cage: CageField | None = Field(None, description="Cage the module or the cable's head plugs into.")
    top: Top | None = Field(None, description="Top of the module or head: finned (switch) or flat (NIC).")
    ports: PositiveCount = Field(1, description="Engines of a transceiver (2: twin-port, two links).")
    lanes: PositiveCount | None = Field(None, description="Lanes per engine, per cable leg or per fibre leg.")
    lane_gbps: Gbps | None = None
    signalling: Signalling | None = None
    gbps: Gbps = Field(description="Rate per engine or per leg (lanes x lane rate).")
    breakout: PositiveCount = Field(1, description="Legs of a cable or fibre (2: one 800G head to two 400G legs).")
    leg_cage: CageField | None = Field(None, description="Cage each leg of a cable plugs into.")
    leg_top: Top | None = None
    reach_m: Meters
    lengths: Lengths = Field(
        default_factory=list,
        description="Orderable lengths of a cable or fibre: METRES:PART;... (e.g. 3:MFP7E10-N003).",
    )
    media: str | None = Field(None, description="Optical connector and fibre, e.g. 'MMF MPO-12/APC'.")
    price_usd: USD
    power_w: Watts

    lead_weeks: quantity_type("count", "26", ge=0) | None = Field(
        None, description="Weeks from order to delivery (empty: its family's, planner.assumptions LEAD_WEEKS)."
    )

    @property
    def is_cable(self) -> bool:
        return self.kind in ("dac", "acc", "aoc")

    def length_for(self, metres: float) -> tuple[float, str] | None:
        """The shortest orderable length that reaches `metres` (its part number), or None. A row without
        lengths is one part reaching reach_m."""
        if not self.lengths:
            return (self.reach_m, self.sku) if metres <= self.reach_m + 1e-9 else None
        return next(((m, pn) for m, pn in self.lengths if m + 1e-9 >= metres), None)


class NvmeRow(ProductRow):
    catalog_kind: ClassVar[str] = "nvme"
    display: ClassVar[tuple[str, ...]] = (
        "sku",
        "name",
        "interface",
        "read_gb_per_s",
        "capacity_tb",
        "price_usd",
        "power_w",
        "confidence",
    )

    interface: str | None = None
    read_gb_per_s: GBps = Field(description="Sequential read, GB/s.")
    capacity_tb: Terabytes = Field(description="Capacity in TB (1e12 bytes).")
    price_usd: USD
    power_w: Watts


class InfraRow(ProductRow):
    """Racks, PDUs and subnet-manager appliances: what the cluster sits in and is run by."""

    catalog_kind: ClassVar[str] = "infra"
    display: ClassVar[tuple[str, ...]] = ("sku", "name", "kind", "rack_units", "capacity_kw", "price_usd", "confidence")

    kind: Annotated[
        Literal["rack", "pdu", "subnet-manager", "cdu", "management-server", "storage"], BeforeValidator(_lower)
    ] = Field(
        description="rack, pdu, subnet-manager, cdu (a coolant distribution unit for liquid-cooled servers), "
        "management-server (head, control-plane and login nodes), or storage (a building block of the shared "
        "file system: capacity and read/write GB/s)."
    )
    rack_units: PositiveCount | None = Field(None, description="Rack: usable height in U; appliance: its height.")
    capacity_kw: quantity_type("count", "22", gt=0) | None = Field(
        None, description="PDU: rated load in kW; CDU: heat it removes to facility water, kW."
    )
    usable_tb: quantity_type("count", "260.9", gt=0) | None = Field(None, description="Storage: usable TB.")
    read_gb_per_s: quantity_type("gb_per_s", "99", gt=0) | None = Field(None, description="Storage: read GB/s.")
    write_gb_per_s: quantity_type("gb_per_s", "80", gt=0) | None = Field(None, description="Storage: write GB/s.")
    price_usd: USD
    power_w: Watts = 0.0

    @model_validator(mode="after")
    def _rated(self) -> InfraRow:
        if self.kind in ("pdu", "cdu") and self.capacity_kw is None:
            message = f"a {self.kind.upper()} needs its rated capacity in kW"
            raise PydanticCustomError("capacity", "{message}", {"column": "capacity_kw", "message": message})
        if self.kind == "storage":
            for column in ("usable_tb", "read_gb_per_s", "write_gb_per_s"):
                if getattr(self, column) is None:
                    message = f"a storage block needs its {column} (usable TB, read and write GB/s)"
                    raise PydanticCustomError("capacity", "{message}", {"column": column, "message": message})
        return self


class CloudRow(CatalogRow):
    catalog_kind: ClassVar[str] = "cloud"
    key_fields: ClassVar[tuple[str, ...]] = ("provider", "instance", "region")
    display: ClassVar[tuple[str, ...]] = (
        "provider",
        "instance",
        "region",
        "gpu",
        "gpus",
        "ondemand_usd_per_h",
        "spot_usd_per_h",
        "reserved_usd_per_h",
        "internode_gbps",
        "fabric",
    )

    provider: str = Field(min_length=1)
    instance: str = Field(min_length=1)
    region: str = Field(min_length=1)
    gpu: str = Field(min_length=1)
    gpus: count(ge=1, le=MAX_GPUS_PER_NODE) = Field(description="GPUs in one instance.")
    hosts: count(ge=1, le=MAX_HOSTS_PER_NODE) = Field(
        1, description="Hosts in one instance: 1 for a VM or bare-metal server, 18 for a GB200 NVL72 rack."
    )
    scale_up_gpus: count(ge=1, le=MAX_GPUS_PER_NODE) | None = Field(
        None, description="GPUs in one NVLink domain (default: the instance's GPUs, or one host's)."
    )
    scale_up_gb_per_s: GBps | None = Field(
        None,
        description="Scale-up bandwidth per GPU per direction (default: a catalog server's of the same GPU and "
        "domain size, so buying and renting are modelled alike).",
    )
    ondemand_usd_per_h: USD | None = None
    spot_usd_per_h: USD | None = None
    reserved_usd_per_h: USD | None = None
    reserved_kind: str | None = None
    committed_1y_usd_per_h: USD | None = Field(
        None, description="Per instance-hour under a 1-year commitment (savings plan, CUD, reserved instance)."
    )
    committed_3y_usd_per_h: USD | None = Field(None, description="Per instance-hour under a 3-year commitment.")
    internode_gbps: Gbps | None = None
    fabric: Annotated[CloudFabric, BeforeValidator(_lower)] = Field(
        description="efa, ib, roce, tcpx (GPUDirect-TCPX/O), tcp, or none (single-node only)."
    )
    bw_source: str | None = None

    @model_validator(mode="after")
    def _whole_domains(self) -> CloudRow:
        _check_topology(self.gpus, self.hosts, self.scale_up_domain)
        return self

    @property
    def gpus_per_host(self) -> int:
        return self.gpus // self.hosts

    @property
    def scale_up_domain(self) -> int:
        return self.scale_up_gpus or self.gpus_per_host


class ModelRow(CatalogRow):
    """A model's shape: dense, or Mixture-of-Experts (MoE) when experts, top_k and expert_ffn are given.

    A MoE row's layers are `dense_layers` with a dense gated FFN of width ffn_hidden, then MoE layers, each
    with `experts` routed experts of width expert_ffn (top_k of them per token), `shared_experts` always-on
    experts of the same width, and a router. `params` is always the nominal total from the model card (a
    MoE model's total is not computed here); `active_params` is what one token uses, computed from the shape.
    """

    catalog_kind: ClassVar[str] = "models"
    display: ClassVar[tuple[str, ...]] = (
        "name",
        "params",
        "layers",
        "hidden",
        "heads",
        "kv_heads",
        "vocab",
        "seq_len",
    )

    name: str = Field(min_length=1)
    aliases: Aliases = Field(default_factory=list)
    params: Params
    layers: PositiveCount
    hidden: PositiveCount
    heads: PositiveCount
    kv_heads: PositiveCount | None = None
    ffn_hidden: PositiveCount | None = Field(
        None, description="Width of a dense FFN (a MoE row: of its dense_layers; blank when it has none)."
    )
    vocab: PositiveCount
    seq_len: PositiveCount
    # -- attention shape, when it is not plain multi-head attention of hidden/heads per head
    head_dim: PositiveCount | None = Field(
        None,
        description="Width of one attention head (HF head_dim; blank: hidden/heads). With MLA: the non-rotary "
        "query/key width and the value width (HF qk_nope_head_dim = v_head_dim).",
    )
    q_lora_rank: PositiveCount | None = Field(
        None, description="MLA only: rank of the low-rank query projection (HF q_lora_rank; blank: full rank)."
    )
    kv_lora_rank: PositiveCount | None = Field(
        None, description="Multi-head latent attention (DeepSeek, Kimi): rank of the compressed key/value latent."
    )
    rope_head_dim: PositiveCount | None = Field(
        None, description="MLA only: rotary query/key width per head (HF qk_rope_head_dim)."
    )
    # -- Mixture-of-Experts (blank for a dense model)
    experts: PositiveCount | None = Field(None, description="Routed experts per MoE layer.")
    top_k: PositiveCount | None = Field(None, description="Routed experts each token uses per MoE layer.")
    expert_ffn: PositiveCount | None = Field(
        None, description="FFN width of one routed expert (HF moe_intermediate_size)."
    )
    shared_experts: count(ge=0) | None = Field(
        None, description="Always-on experts per MoE layer, each of width expert_ffn (0 or blank: none)."
    )
    dense_layers: count(ge=0) | None = Field(
        None,
        description="Layers with a dense FFN of width ffn_hidden instead of experts (0 or blank: none); counted "
        "as the leading layers (HF first_k_dense_replace).",
    )

    @model_validator(mode="after")
    def _moe_shape(self) -> ModelRow:
        """A MoE layer needs experts, top_k and expert_ffn together; a token uses at most every expert; at
        least one layer has experts; dense layers say their FFN width; MLA gives its latent shape."""
        moe = {"experts": self.experts, "top_k": self.top_k, "expert_ffn": self.expert_ffn}
        given = [column for column, value in moe.items() if value is not None]
        problem = None
        if given and len(given) < len(moe):
            missing = [column for column in moe if column not in given]
            problem = (
                missing[0],
                (
                    f"is empty, but {' and '.join(given)} {'is' if len(given) == 1 else 'are'} given: give experts, "
                    "top_k and expert_ffn together (all three for a MoE model, none for a dense one)"
                ),
            )
        elif not given and (self.shared_experts or self.dense_layers):
            column = "shared_experts" if self.shared_experts else "dense_layers"
            problem = column, "describes a MoE model: give experts, top_k and expert_ffn too (or leave it empty)"
        elif given and self.top_k > self.experts:
            problem = "top_k", f"{self.top_k} is more than the {self.experts} routed experts: top_k <= experts"
        elif self.dense_layers is not None and self.dense_layers >= self.layers:
            problem = (
                "dense_layers",
                (
                    f"{self.dense_layers} is not less than the {self.layers} layers: a MoE model has at least one MoE "
                    "layer (a dense model leaves experts, top_k, expert_ffn and dense_layers empty)"
                ),
            )
        elif self.dense_layers and self.ffn_hidden is None:
            problem = "ffn_hidden", f"is empty: give the FFN width of the {self.dense_layers} dense layers"
        elif (self.kv_lora_rank is None) != (self.rope_head_dim is None):
            column = "rope_head_dim" if self.rope_head_dim is None else "kv_lora_rank"
            problem = column, "is empty: multi-head latent attention gives kv_lora_rank and rope_head_dim together"
        elif self.q_lora_rank is not None and self.kv_lora_rank is None:
            problem = "kv_lora_rank", "is empty: q_lora_rank describes multi-head latent attention; give its shape"
        elif self.kv_lora_rank is not None and self.head_dim is None:
            problem = "head_dim", "is empty: multi-head latent attention gives its head width (HF qk_nope_head_dim)"
        if problem:
            column, message = problem
            raise PydanticCustomError("moe", "{message}", {"column": column, "message": message})
        return self

    @property
    def is_moe(self) -> bool:
        return self.experts is not None

    @property
    def attention_params(self) -> int:
        """Weights of one layer's attention projections (no biases, norms or sinks).

        Multi-head / grouped-query attention: hidden x head_dim x (2 heads + 2 kv_heads), kv_heads defaulting to
        heads and head_dim to hidden/heads; that is hidden^2 x (2 + 2 kv_heads/heads) when head_dim x heads =
        hidden, and counts Qwen3's and GPT-OSS's wider heads right when head_dim is given. Multi-head latent
        attention (MLA: DeepSeek-V3, Kimi-K2) is counted from its latent shape when the row gives it
        (kv_lora_rank, rope_head_dim, q_lora_rank, head_dim = HF qk_nope_head_dim = v_head_dim); without it
        MLA is approximated by the MHA count, which overstates Kimi-K2's attention about 2x (64 heads).
        """
        h, heads = self.hidden, self.heads
        head = self.head_dim or h / heads
        if self.kv_lora_rank is None:
            return round(h * head * (2 * heads + 2 * (self.kv_heads or heads)))
        rope, kv_rank, q_rank = self.rope_head_dim, self.kv_lora_rank, self.q_lora_rank
        query = (h * q_rank + q_rank * heads * (head + rope)) if q_rank else h * heads * (head + rope)
        key_value = h * (kv_rank + rope) + kv_rank * heads * 2 * head
        return round(query + key_value + heads * head * h)

    @property
    def active_params(self) -> float:
        """Parameters one token uses: for a dense row its `params`; for a MoE row computed from the shape.

        MoE: the output projection vocab x hidden, plus per layer its attention (`attention_params`), plus a
        gated FFN 3 x hidden x width: ffn_hidden on the dense layers, (top_k + shared_experts) x expert_ffn on
        the MoE layers, which also have a router hidden x experts. Not counted: the input embedding (a table
        lookup of one row per token: no multiply, so the 2 x active FLOPs per token hold; tied or untied makes
        no difference), norms, biases, and multi-token-prediction modules. DeepSeek's own figure (36.6B
        including the 0.9B output head) and GPT-OSS's (5.1B) count the same way; Mistral's, Qwen's and Meta's
        stated figures also count the input embedding (vocab x hidden more: ~2-10% at these sizes).
        """
        if not self.is_moe:
            return self.params
        h = self.hidden
        dense = self.dense_layers or 0
        moe_layers = self.layers - dense
        routed = (self.top_k + (self.shared_experts or 0)) * 3 * h * self.expert_ffn + h * self.experts
        ffn = dense * 3 * h * (self.ffn_hidden or 0) + moe_layers * routed
        return float(self.vocab * h + self.layers * self.attention_params + ffn)


ROW_TYPES: dict[str, type[CatalogRow]] = {
    t.catalog_kind: t for t in (GpuRow, ServerRow, NicRow, SwitchRow, OpticRow, NvmeRow, CloudRow, ModelRow, InfraRow)
}
assert tuple(ROW_TYPES) == KINDS, "planner.catalog.kinds.KINDS must list the row types in order"
