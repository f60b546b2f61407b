"""Command-line interface: parse options, call the library, print. Each module registers its commands on
the one click group in base.py."""

from planner.cli import (  # noqa: F401  (registration)
    catalog_cmd,
    cloud_cmd,
    fleet_cmd,
    inference_cmd,
    perf_cmd,
    plan_cmd,
    serve_cmd,
    sweep_cmd,
)
from planner.cli.base import main

__all__ = ["main"]
