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
    tmp = None
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
        os.close(fd)
        tmp = Path(tmp_name)
        write(tmp)
        os.chmod(tmp, _mode_for(path))
        os.replace(tmp, path)
    except OSError as exc:
        raise PlannerError(f"{path}: cannot write ({exc.strerror}); nothing was changed") from None
    finally:
        if tmp is not None and tmp.exists():
            tmp.unlink()


def write_text_atomic(path: Path, text: str) -> None:
    write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def _mode_for(path: Path) -> int:
    """Keep an existing file's permissions; a new file gets the usual 0666 less the umask (mkstemp's 0600
    would make reports unreadable to colleagues)."""
    if path.exists():
        return path.stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
