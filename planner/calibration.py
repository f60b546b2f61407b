"""Calibration: the fitted efficiencies (eta_comp per GPU, eta_net per fabric, overlap) the model uses.

The shipped default is fitted to DeepSpeed issue #2928's measured bands (planner/data/) by the same
`fit()` a user runs on their own measurements with `planner calibrate`; tests re-run that fit and check it
reproduces planner/data/calibration_default.json.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from planner import assumptions as A
from planner.errors import PlannerError
from planner.fileio import read_text
from planner.limits import MAX_CALIBRATION_BYTES, check_value, cut, short
from planner.models import error_text
from planner.resources import data_dir
from planner.safeyaml import YamlProblem, load_json, load_yaml

DEFAULT_FILE = "calibration_default.json"
Fraction = Annotated[float, Field(gt=0, le=1)]  # an efficiency: above 0, at most all of peak


class Calibration(BaseModel):
    """Efficiencies that replace the priors in planner.assumptions. Missing entries fall back to them."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    eta_comp: dict[str, Fraction] = Field(default_factory=dict, description="GPU name -> fraction of peak")
    eta_net: dict[str, Fraction] = Field(default_factory=dict, description="fabric -> fraction of line rate")
    overlap: float = Field(A.OVERLAP_PRIOR.value, ge=0, le=1)
    source: str = "priors of planner.assumptions (no fit)"
    fit: dict = Field(default_factory=dict, description="how it was fitted: inputs, per-point errors, RMS")

    # names and source end up in reports and workbooks: no control characters (planner.limits)
    _text = field_validator("*", mode="before")(check_value)

    def eta_comp_for(self, gpu: str) -> float:
        if gpu in self.eta_comp:
            return self.eta_comp[gpu]
        return A.ETA_COMP.get(gpu, A.ETA_COMP_DEFAULT).value

    def eta_net_for(self, fabric: str) -> float:
        """A fitted value; else the prior scaled by the ratio of a fitted fabric to its prior (a fit that
        lowers IB's efficiency lowers RoCE's and EFA's alike, so no unmeasured fabric looks better)."""
        if fabric in self.eta_net:
            return self.eta_net[fabric]
        prior = A.ETA_NET_PRIOR[fabric].value if fabric in A.ETA_NET_PRIOR else 0.0
        reference = next((f for f in A.ETA_NET_PRIOR if f in self.eta_net), None)
        if reference is None:
            return prior
        return prior * self.eta_net[reference] / A.ETA_NET_PRIOR[reference].value

    @classmethod
    def priors(cls) -> Calibration:
        return cls()

    @classmethod
    def default(cls) -> Calibration:
        """The shipped calibration (fitted to DeepSpeed issue #2928)."""
        return _DEFAULT if _DEFAULT is not None else cls.priors()

    def write(self, path: str | Path) -> None:
        from planner.fileio import write_text_atomic

        write_text_atomic(Path(path), self.model_dump_json(indent=2) + "\n")


def load_calibration(path: str | Path | None) -> Calibration:
    """Read a calibration file (JSON or YAML). None -> the shipped default."""
    if path is None:
        return Calibration.default()
    path = Path(path)
    text = read_text(path, MAX_CALIBRATION_BYTES, "calibration")
    try:
        data = load_json(text) if path.suffix.lower() == ".json" else load_yaml(text)
    except YamlProblem as exc:
        raise PlannerError(f"{path}: not valid JSON/YAML ({exc})") from None
    try:
        return Calibration.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"]) or "(top level)"
        value = "" if err["type"] == "missing" else f" = {short(err.get('input'))}"
        message = error_text(err) if err["type"] != "missing" else str(err["msg"])
        raise PlannerError(f"{path}: {cut(where, 60)}{value}: {message}; write it with `planner calibrate`") from None


_DEFAULT: Calibration | None = None
_DEFAULT = load_calibration(data_dir() / DEFAULT_FILE) if (data_dir() / DEFAULT_FILE).exists() else None
