"""Where the shipped catalogs, examples and reference data live, installed or in a checkout."""

from __future__ import annotations

import functools
import os
from importlib.resources import files
from pathlib import Path

_PACKAGE = Path(str(files("planner")))
_CHECKOUT = _PACKAGE.parent


def _first_existing(*candidates: Path) -> Path:
    for path in candidates:
        if path.is_dir():
            return path
    raise FileNotFoundError(f"packaged data missing: looked in {', '.join(map(str, candidates))}")


def catalogs_dir() -> Path:
    """The default catalogs: package data in a wheel, top-level catalogs/ in a checkout."""
    return _first_existing(_PACKAGE / "_data" / "catalogs", _CHECKOUT / "catalogs")


def examples_dir() -> Path:
    return _first_existing(_PACKAGE / "_data" / "examples", _CHECKOUT / "examples")


def data_dir() -> Path:
    """Reference data shipped inside the package (measurements used for the default calibration)."""
    return _PACKAGE / "data"


def display_name(path: str | Path) -> str:
    """A catalog file as the file that was read: relative to the working folder when it lies inside it, else
    its full path (an installed planner's shipped catalogs are cited where they are installed, so a reader
    opens the very file; `planner catalog export` copies them for editing)."""
    return _display_name(str(path), os.getcwd())


@functools.lru_cache(maxsize=256)  # every bill-of-materials line names its file: resolve each file once
def _display_name(name: str, cwd: str) -> str:
    path = Path(name)
    try:
        return path.resolve().relative_to(Path(cwd).resolve()).as_posix()
    except (ValueError, OSError):
        return str(path.resolve()) if path.exists() else str(path)
