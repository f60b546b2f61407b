"""Pydantic types for catalog rows. No I/O here: catalog.py reads files and feeds these.

Column names carry units (price_usd, speed_gbps, hbm_gib); a cell may be a plain number in that unit or
a quantity as a person types it ("$36,000", "400Gbps", "80GiB"), parsed by planner.units.
"""

from __future__ import annotations

import re
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema, field_validator, model_validator
from pydantic_core import PydanticCustomError

from planner.limits import MAX_COUNT, MAX_GPUS_PER_NODE, MAX_NICS_PER_NODE, MAX_QUANTITY, text_problem
from planner.units import parse_quantity

SCHEMA_VERSION = 1


def _quantity(dimension: str, example: str, **bounds: float):
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
        raise ValueError(f"{value!r} must be a whole number")
    return int(number)


def count(ge: int | None = None, le: int = MAX_COUNT):
    """A whole-number type between ge and le (by default at most MAX_COUNT: every count then fits a C long
    for numpy and the MILP). One Field per type, so a message gives the field's own range."""
    schema = WithJsonSchema({"anyOf": [{"type": "integer"}, {"type": "string"}]})
    return Annotated[int, BeforeValidator(_whole), schema, Field(ge=ge, le=le)]


Count = count()
PositiveCount = count(ge=1)
USD = _quantity("usd", "$36,000", ge=0)
Gbps = _quantity("gbps", "400Gbps", gt=0)
GBps = _quantity("gb_per_s", "900GB/s", gt=0)
GiB = _quantity("gib", "80GiB", gt=0)
Watts = _quantity("w", "700W", ge=0)
TFLOPs = _quantity("tflops", "989", gt=0)
Params = _quantity("count", "176B", gt=0)
Meters = _quantity("count", "3", gt=0)
Terabytes = _quantity("count", "7.68", gt=0)


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
        return (
            f"must be {relation} {bound:,}"
            if bound == int(bound) and abs(bound) >= 1e4
            else f"must be {relation} {bound}"
        )
    if kind == "missing":
        return "is empty; this column is required"
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected')}"
    if kind == "finite_number":
        return "must be a finite number"
    return str(err["msg"]).removeprefix("Value error, ")


Fabric = Literal["ib", "roce"]
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
FabricField = Annotated[Fabric, BeforeValidator(_fabric_word)]
CloudFabricField = Annotated[Literal["ib", "roce", "efa", "tcpx", "tcp"], BeforeValidator(_fabric_word)]


class CatalogRow(BaseModel):
    """Columns every catalog kind shares: where the figures come from and how sure we are."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, frozen=True)

    catalog_kind: ClassVar[str]
    key_fields: ClassVar[tuple[str, ...]] = ("name",)
    # columns `planner catalog list KIND` shows by default (the rest with --all)
    display: ClassVar[tuple[str, ...]] = ()

    source: str = Field(min_length=1, description="Where the figures come from (URL, document, quote).")
    date: str = Field(description="Date of the source: YYYY, YYYY-MM or YYYY-MM-DD.")
    confidence: Annotated[Confidence, BeforeValidator(_lower)] = Field(
        description="solid, medium, low, or estimate (derived, not quoted; say how in notes)."
    )
    notes: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _plain_text(cls, data: object) -> object:
        """Every text cell: no control characters (planner.limits says which and why), at most
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


class GpuRow(CatalogRow):
    catalog_kind: ClassVar[str] = "gpus"
    display: ClassVar[tuple[str, ...]] = (
        "name",
        "vendor",
        "peak_bf16_tflops",
        "hbm_gib",
        "hbm_gb_per_s",
        "tdp_w",
        "price_usd",
        "confidence",
    )

    name: str = Field(min_length=1)
    aliases: Aliases = Field(default_factory=list, description="Other names, separated by ';'.")
    vendor: str = Field(min_length=1)
    peak_bf16_tflops: TFLOPs = Field(description="Peak dense fp16/bf16 tensor TFLOPs.")
    hbm_gib: GiB
    hbm_gb_per_s: GBps
    tdp_w: Watts
    price_usd: USD | None = None


class ServerRow(CatalogRow):
    catalog_kind: ClassVar[str] = "servers"
    display: ClassVar[tuple[str, ...]] = (
        "name",
        "gpu",
        "gpus_per_node",
        "price_usd",
        "power_w",
        "max_nics_per_node",
        "included_nic",
        "included_nics",
        "confidence",
    )

    name: str = Field(min_length=1)
    vendor: str = Field(min_length=1)
    gpu: str = Field(min_length=1, description="A GPU name or alias from gpus.csv.")
    gpus_per_node: count(ge=1, le=MAX_GPUS_PER_NODE)
    price_usd: USD
    power_w: Watts = Field(description="Maximum system power.")
    pcie_gen: count(ge=1, le=7)
    pcie_lanes: PositiveCount = Field(description="Total CPU PCIe lanes of the platform.")
    pcie_lanes_per_gpu: PositiveCount
    intra_node_gb_per_s: GBps = Field(description="NVLink/NVSwitch bandwidth per GPU per direction.")
    max_nics_per_node: count(ge=1, le=MAX_NICS_PER_NODE)
    included_nic: str | None = Field(None, description="NIC sku (nics.csv) included in price_usd.")
    included_nics: count(ge=0, le=MAX_NICS_PER_NODE) = 0
    dram_gib: GiB | None = None
    dram_gb_per_s: GBps | None = Field(None, description="Peak DRAM bandwidth: sockets x channels x MT/s x 8 B.")
    nvme_slots: count(ge=0) = 0
    root_complex_gb_per_s: GBps | None = Field(None, description="CPU root-complex limit on PCIe traffic, if known.")

    def included_count(self, nic_sku: str) -> int:
        """How many NICs of this SKU the server's price already includes."""
        return self.included_nics if (self.included_nic or "").lower() == nic_sku.lower() else 0


class ProductRow(CatalogRow):
    """A purchasable part identified by its SKU (NICs, switches, drives)."""

    key_fields: ClassVar[tuple[str, ...]] = ("sku",)

    sku: str = Field(min_length=1)
    name: str = Field(min_length=1)
    vendor: str = Field(min_length=1)


class NicRow(ProductRow):
    catalog_kind: ClassVar[str] = "nics"
    display: ClassVar[tuple[str, ...]] = (
        "sku",
        "name",
        "speed_gbps",
        "ports",
        "protocols",
        "price_usd",
        "power_w",
        "confidence",
    )

    part_number: str | None = None
    speed_gbps: Gbps = Field(description="Total rate the card delivers to the fabric.")
    ports: PositiveCount
    protocols: Annotated[Literal["ib", "roce", "both"], BeforeValidator(_lower)]
    form_factor: str | None = None
    price_usd: USD
    power_w: Watts
    seller: str | None = None

    @property
    def fabrics(self) -> tuple[str, ...]:
        return ("ib", "roce") if self.protocols == "both" else (self.protocols,)

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
        "price_usd",
        "power_w",
        "confidence",
    )

    asic: str | None = None
    fabric: FabricField = Field(description="ib (InfiniBand) or roce (Ethernet switch for RoCE).")
    ports: PositiveCount
    port_gbps: Gbps
    max_breakout: PositiveCount = Field(1, description="Most endpoints one port splits into (2 for 2x200G on NDR).")
    price_usd: USD
    power_w: Watts


class OpticRow(CatalogRow):
    catalog_kind: ClassVar[str] = "optics"
    key_fields: ClassVar[tuple[str, ...]] = ("sku",)
    display: ClassVar[tuple[str, ...]] = (
        "sku",
        "kind",
        "fabric",
        "gbps",
        "reach_m",
        "price_usd",
        "power_w",
        "confidence",
    )

    sku: str = Field(min_length=1)
    name: str = Field(min_length=1)
    kind: Annotated[Literal["transceiver", "dac", "aoc", "fiber"], BeforeValidator(_lower)] = Field(
        description="transceiver (per link end), dac/aoc (whole link), fiber (patch between transceivers)."
    )
    fabric: Annotated[Literal["ib", "roce", "any"], BeforeValidator(_fabric_word)]
    form_factor: str | None = None
    gbps: Gbps
    breakout: PositiveCount = Field(1, description="Endpoint legs of a splitter cable (2 for 800G to 2x400G).")
    reach_m: Meters
    media: str | None = None
    price_usd: USD
    power_w: Watts


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
    gpus: count(ge=1, le=MAX_GPUS_PER_NODE)
    ondemand_usd_per_h: USD | None = None
    spot_usd_per_h: USD | None = None
    reserved_usd_per_h: USD | None = None
    reserved_kind: str | None = None
    internode_gbps: Gbps | None = None
    fabric: Annotated[CloudFabric, BeforeValidator(_lower)] = Field(
        description="efa, ib, roce, tcpx (GPUDirect-TCPX/O), tcp, or none (single-node only)."
    )
    bw_source: str | None = None


class ModelRow(CatalogRow):
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
    ffn_hidden: PositiveCount | None = None
    vocab: PositiveCount
    seq_len: PositiveCount


ROW_TYPES: dict[str, type[CatalogRow]] = {
    t.catalog_kind: t for t in (GpuRow, ServerRow, NicRow, SwitchRow, OpticRow, NvmeRow, CloudRow, ModelRow)
}
KINDS: tuple[str, ...] = tuple(ROW_TYPES)
