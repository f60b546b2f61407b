"""Every modelling constant and sourced default, with its unit and source: the performance model's
(model.py), the facility's and the scenario's defaults (facility.py), and the hardware design's (hardware.py).
`all_constants()` lists them all, in the order they are defined, for the workbook's Assumptions sheet and the
JSON output: a constant defined in one of these modules is listed without being registered anywhere else.
What `planner sweep` draws and its fleet futures perturb (uncertainty.py) is listed in the sweep's own report,
not in every plan's."""

from __future__ import annotations


def all_constants() -> list:
    """Every Constant of the assumption modules (alone, or in a dict of variants such as eta_net[fabric])."""
    from planner.assumptions import facility, hardware, model
    from planner.assumptions.constant import Constant

    found = []
    for module in (model, facility, hardware):
        for value in vars(module).values():
            if isinstance(value, Constant):
                found.append(value)
            elif isinstance(value, dict) and value and all(isinstance(v, Constant) for v in value.values()):
                found += value.values()
    return found
