"""planner: optimization-based GPU cluster planner (buy, rent and serve for large-model training).

The Python API (planner.api, docs/api.md): planner.plan, planner.cloud, planner.fleet, planner.predict,
planner.sweep and planner.serve return the typed results of planner.results; they are imported on first use,
so `import planner` stays light.
"""

__version__ = "0.1.0"

_API = ("plan", "cloud", "fleet", "predict", "sweep", "serve")


def __getattr__(name: str):
    if name in _API:
        from planner import api

        return getattr(api, name)
    raise AttributeError(f"module 'planner' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
