"""A named modelling constant: its value, unit and source (planner.assumptions lists them all)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Constant:
    name: str
    value: float
    unit: str
    source: str
