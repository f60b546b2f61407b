"""Atomic file writes: write a temporary file in the target's folder, then rename it into place, so a
failure never leaves a half-written file or clobbers the previous one."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from planner.errors import PlannerError


def write_atomic(path: Path, write: Callable[[Path], None]) -> None:
    """Call write(tmp_path) and rename tmp_path onto path. Errors leave path untouched."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise PlannerError(f"{path}: folder {folder} does not exist; create it first")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        raise PlannerError(f"{path}: cannot write ({exc.strerror}); nothing was changed") from None
    finally:
        if tmp.exists():
            tmp.unlink()


def write_text_atomic(path: Path, text: str) -> None:
    write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
