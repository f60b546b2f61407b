"""Reading input files within limits, and writing output files safely.

Reading: `read_text` reads at most a limit of bytes (so /dev/zero or a 20 MB file never reaches a parser)
and accepts UTF-8 with or without a BOM; anything else is one line naming the file and the encoding.

Writing: `Outputs` is the one transaction every command uses for the files it writes. Each file is written
to a temporary file in its target's folder, and only when every one was written are they renamed into
place, so a failure (a missing folder, a full disk, a file-size limit) leaves every existing file as it was.
Targets are checked before the command's work starts: a target that is one of the command's inputs, or
that is not a regular file (a device such as /dev/null, a FIFO, a socket, a folder), is refused: renaming
over it would replace the device or input itself. To see a result on the terminal, use --json instead.
"""

from __future__ import annotations

import codecs
import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from planner.base.errors import PlannerError, UsageError
from planner.base.limits import MIB

# ---------------------------------------------------------------- reading

_OTHER_ENCODINGS = (  # byte-order marks of encodings people save by mistake; UTF-32 first (it extends UTF-16's)
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


class InputFileError(PlannerError):
    """A whole input file is unusable (unreadable, too large, not UTF-8 text). str() names the file."""

    def __init__(self, path: str | Path, reason: str):
        self.path, self.reason = str(path), reason
        super().__init__(f"{path}: {reason}")


def read_bytes(path: str | Path, max_bytes: int, what: str) -> bytes:
    """At most max_bytes of a file; more is an InputFileError naming the limit. Devices are refused (a
    FIFO, as from `<(command)`, is read like a file)."""
    try:
        with open(path, "rb") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                raise InputFileError(path, f"is a device, not a {what} file")
            data = handle.read(max_bytes + 1)
    except IsADirectoryError:
        raise InputFileError(path, f"is a folder, not a {what} file") from None
    except OSError as exc:
        raise InputFileError(path, f"cannot read {what} file ({exc.strerror}); check the path") from None
    if len(data) > max_bytes:
        raise InputFileError(path, f"larger than {_size(max_bytes)}, the limit for a {what} file")
    return data


def decode_text(path: str | Path, data: bytes, what: str, nul_ok: bool = False) -> str:
    """UTF-8 text, a leading BOM dropped. Other encodings and binary data are one clear error. nul_ok:
    a table reader lets NUL through, to name its row and column with the other control characters."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    for bom, name in _OTHER_ENCODINGS:
        if data.startswith(bom):
            raise InputFileError(path, f"is {name} text, not UTF-8; save the {what} file as UTF-8")
    nul = -1 if nul_ok else data.find(b"\0")
    if nul >= 0:
        raise InputFileError(path, f"holds a NUL byte (byte {nul + 1:,}): binary data, not a {what} text file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputFileError(
            path,
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); save the {what} file as UTF-8 "
            "(Latin-1 and Windows-1252 files must be converted)",
        ) from None


def read_text(path: str | Path, max_bytes: int, what: str) -> str:
    """The UTF-8 text of a file of at most max_bytes, or an InputFileError naming file and problem."""
    return decode_text(path, read_bytes(path, max_bytes, what), what)


def _size(n_bytes: int) -> str:
    return f"{n_bytes / MIB:g} MiB" if n_bytes >= MIB else f"{n_bytes:,} bytes"


# ---------------------------------------------------------------- writing


class WriteError(PlannerError):
    """Writing an output failed; nothing was changed."""

    def __init__(self, path: str | Path, reason: str):
        self.path, self.reason = str(path), reason
        super().__init__(f"{path}: cannot write ({reason}); nothing was changed")


Writer = Callable[[Path], None]


class Outputs:
    """The files one command writes, committed together (see the module docstring).

    inputs: (what, path) pairs of everything the command reads: a file, or a folder whose .csv/.xlsx
    files it reads. `check` a target as soon as the command knows it (before the long work), `add` its
    writer when the content is ready, then `commit` once.
    """

    def __init__(self, inputs: Iterable[tuple[str, str | Path | None]] = ()):
        self._inputs = [(what, Path(p)) for what, p in inputs if p]
        self._pending: list[tuple[str, Path, Path, Writer]] = []  # option, as given, resolved, writer
        self._claimed: dict[Path, tuple[str, str]] = {}  # resolved target -> (option, label) that claimed it

    def check(self, option: str, path: str | Path | None) -> Path | None:
        """The resolved target of path, or a UsageError/PlannerError saying why it cannot be written."""
        if not path:
            return None
        given = Path(path)
        target = Path(os.path.realpath(given))  # through symlinks: a link to a file is written through
        label = f"{option} {given}" if option else str(given)
        _check_not_special(label, target)
        if not target.parent.is_dir():
            raise PlannerError(f"{given}: folder {given.parent} does not exist; create it first")
        for what, source in self._inputs:
            if _is_input(target, source):
                raise UsageError(f"{label}: that is the {what} {source} this command reads; write elsewhere")
        other_option, other_label = self._claimed.setdefault(target, (option, label))
        if other_option != option:
            raise UsageError(f"{label}: {other_label} writes the same file; give two paths")
        return target

    def add(self, option: str, path: str | Path, write: Writer) -> None:
        target = self.check(option, path)
        if target is not None:
            self._pending.append((option, Path(path), target, write))

    def add_text(self, option: str, path: str | Path, text: str) -> None:
        body = text if text.endswith("\n") else text + "\n"
        self.add(option, path, lambda tmp: tmp.write_text(body, encoding="utf-8"))

    def commit(self) -> None:
        """Write every output to a temporary file, then rename them all into place. Any failure removes
        the temporaries and raises a WriteError: no target was touched. (The renames are within one
        folder each; only a folder changing under us between write and rename could stop one.)"""
        written: list[tuple[Path, Path]] = []
        try:
            for _, given, target, write in self._pending:
                _check_not_special(str(given), target)  # again: the work may have taken minutes
                written.append((_write_temporary(given, target, write), target))
            for tmp, target in written:
                os.replace(tmp, target)
        except OSError as exc:
            raise WriteError(_failed(self._pending, written), exc.strerror or type(exc).__name__) from None
        finally:
            for tmp, _ in written:
                if tmp.exists():
                    tmp.unlink()
            self._pending = []


def _write_temporary(given: Path, target: Path, write: Writer) -> Path:
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        os.chmod(tmp, _mode_for(target))
    except WriteError as exc:  # a writer that itself writes atomically (a workbook's save)
        tmp.unlink(missing_ok=True)
        raise WriteError(given, exc.reason) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def _failed(pending: list, written: list) -> Path:
    """The output being written when the failure happened."""
    index = min(len(written), len(pending) - 1)
    return pending[index][1]


def _check_not_special(label: str, target: Path) -> None:
    try:
        mode = target.stat().st_mode
    except OSError:
        return  # a new file
    if not stat.S_ISREG(mode):
        kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
        raise UsageError(f"{label}: {kind}, not a regular file; give a file name (to print the result, use --json)")


_KINDS = {
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a folder",
}


def _is_input(target: Path, source: Path) -> bool:
    """target is the input file source, or a catalog file directly in the input folder source."""
    try:
        real = Path(os.path.realpath(source))
        if real.is_dir():
            return target.parent == real and target.suffix.lower() in (".csv", ".xlsx")
        return target == real or (target.exists() and real.exists() and os.path.samefile(target, real))
    except OSError:
        return False


def write_atomic(path: Path, write: Writer) -> None:
    """Call write(tmp_path) and rename tmp_path onto path. Errors leave path untouched."""
    outputs = Outputs()
    outputs.add("", path, write)
    outputs.commit()


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
