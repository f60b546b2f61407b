"""The serving scenario of `planner serve FILE`: the model, the load, the latency targets, what may be bought or
rented, and the limits. YAML in, pydantic-validated (extra keys refused, each problem one line naming the file
and field). The command's options are the same fields (`--rate` is load.rate_per_s ...): given with a file,
they override it; without one, they are the whole scenario.

    model: Llama-3.1-70B
    load: {rate_per_s: 20, input_tokens: 2000, output_tokens: 256, input_cv: 1.0, output_cv: 1.0}
    targets: {ttft: 1s, tpot: 50ms, percentile: 0.9}
    hardware: {precisions: [bf16, fp8], gpus: [H200, B200], rent: false}
    constraints: {budget_usd: $2M}
    objective: tco
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from planner.base import limits as L
from planner.base.errors import ScenarioError
from planner.catalog.rows import count, quantity_type
from planner.inputs.scenario import USD, _Strict, apply_overrides, field_message, read_yaml, validation_messages
from planner.inputs.trace import read_trace

Seconds = quantity_type("s", "50ms", gt=0)
Watts = quantity_type("w", "500kW", gt=0)
Rate = quantity_type("count", "20", gt=0, le=L.MAX_REQUESTS_PER_S)
Tokens = count(ge=1, le=L.MAX_SEQ_LEN)


class Load(_Strict):
    rate_per_s: Rate = Field(description="Requests per second.")
    input_tokens: Tokens | None = Field(None, description="Mean tokens in per request (or a trace).")
    output_tokens: Tokens | None = Field(None, description="Mean tokens out per request (or a trace).")
    input_cv: float = Field(
        0.0, ge=0, le=L.MAX_LENGTH_CV, description="Input lengths' standard deviation / mean (0: all alike)."
    )
    output_cv: float = Field(0.0, ge=0, le=L.MAX_LENGTH_CV, description="Output lengths' standard deviation / mean.")
    trace: str | None = Field(
        None,
        description="A CSV of one request per row (input_tokens, output_tokens; or prompt_tokens, "
        "completion_tokens), relative to this file: its means and spreads are the lengths.",
    )

    @model_validator(mode="after")
    def _lengths(self) -> Load:
        given = [f for f in ("input_tokens", "output_tokens") if getattr(self, f) is not None]
        if self.trace is not None and (given or self.input_cv or self.output_cv):
            raise ValueError(
                "a trace gives the lengths and their spread: leave input_tokens, output_tokens and the cvs out"
            )
        if self.trace is None and len(given) < 2:
            raise ValueError("give input_tokens and output_tokens (the mean lengths), or a trace")
        return self


class LatencyTargets(_Strict):
    ttft: Seconds | None = Field(None, description="Time to first token at the percentile, e.g. 1s.")
    tpot: Seconds | None = Field(None, description="Time per output token at the percentile, e.g. 50ms.")
    percentile: float = Field(0.9, ge=0.5, le=0.999, description="0.9: p90, 0.99: p99.")

    @model_validator(mode="after")
    def _some_target(self) -> LatencyTargets:
        if self.ttft is None and self.tpot is None:
            raise ValueError("give a latency target: ttft (e.g. 1s), tpot (e.g. 50ms) or both")
        return self


class Hardware(_Strict):
    precisions: list[Literal["bf16", "fp8", "fp4"]] = Field(
        ["bf16", "fp8"], min_length=1, description="Allowed weight precisions (fp4 changes outputs more: opt-in)."
    )
    gpus: list[str] = Field([], description="Allowed GPUs (none: every one in the catalog).")
    servers: list[str] = Field([], description="Allowed servers (buying).")
    rent: bool = Field(False, description="Rent cloud instances on demand instead of buying.")
    providers: list[str] = Field([], description="Allowed cloud providers (renting).")

    @model_validator(mode="after")
    def _buy_or_rent(self) -> Hardware:
        if self.rent and self.servers:
            raise ValueError("servers are for buying: with rent: true name gpus or providers")
        if self.providers and not self.rent:
            raise ValueError("providers choose cloud instances: set rent: true with them")
        return self


class Limits(_Strict):
    budget_usd: USD | None = Field(None, description="Most the servers may cost (renting: USD per hour).")
    max_power_w: Watts | None = Field(None, description="Most nameplate power (buying), e.g. 500kW.")


class ServeScenario(_Strict):
    name: str | None = Field(None, max_length=L.MAX_NAME_CHARS)
    model: str = Field(min_length=1, description="A model from models.csv.")
    load: Load
    targets: LatencyTargets | None = None
    hardware: Hardware = Hardware()
    constraints: Limits = Limits()
    objective: Literal["capex", "tco"] = Field(
        "capex", description="Buying: minimise the price or the TCO (renting minimises the hourly price)."
    )
    single_kind: bool = Field(False, description="Buy (or rent) one kind of machine only.")
    catalogs: list[str] = Field([], description="Your catalog files or folders, relative to this file.")

    @model_validator(mode="after")
    def _rent_limits(self) -> ServeScenario:
        if self.targets is None:
            raise ValueError("give a latency target: targets.ttft (--ttft, e.g. 1s), targets.tpot (--tpot) or both")
        if self.hardware.rent and self.constraints.max_power_w is not None:
            raise ValueError("renting: max_power_w is for buying (an instance's power is its provider's)")
        return self


def serve_message(label: str, err: dict) -> str:
    return field_message(label, err, "serve", root=ServeScenario)


def load_serving(path: str | Path | None, overrides: dict[str, object]) -> ServeScenario:
    """The scenario of a file (or none) with `overrides` (dotted fields: the options given) applied."""
    label = str(path) if path is not None else "serve options"
    data: dict = {}
    if path is not None:
        read = read_yaml(Path(path), "serving scenario")
        if not isinstance(read, dict):
            raise ScenarioError(f"{path}: a serving scenario is a YAML mapping with model, load, targets, ...")
        if "workload" in read and "load" not in read:
            raise ScenarioError(f"{path}: this is a plan scenario (workload, requirement); run `planner plan {path}`")
        if "horizon" in read and "load" not in read:
            raise ScenarioError(
                f"{path}: this is a fleet file (horizon, training, inference); run `planner fleet {path}`"
            )
        data = read
    try:
        data = apply_overrides(data, overrides)
    except ScenarioError as exc:  # the file's value where an option's section should be
        raise ScenarioError(f"{label}: {exc}") from None
    try:
        scenario = ServeScenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError("\n".join(validation_messages(label, exc, serve_message))) from None
    base = Path(path).parent if path is not None else Path(".")
    if path is not None:
        scenario = scenario.model_copy(update={"catalogs": [str((base / c).resolve()) for c in scenario.catalogs]})
    if scenario.load.trace is not None:  # relative to the file (an option's: to the working folder)
        where = scenario.load.trace if "load.trace" in overrides else str(base / scenario.load.trace)
        trace = read_trace(where)
        read = {"input_tokens": trace.input_tokens, "output_tokens": trace.output_tokens, "trace": where}
        spread = {"input_cv": trace.input_cv, "output_cv": trace.output_cv}
        scenario = scenario.model_copy(update={"load": scenario.load.model_copy(update={**read, **spread})})
    return scenario
