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
import contextlib
import os
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
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
    """At most max_bytes of a file; more is an InputFileError naming the limit. Devices are refused but a
    terminal; a FIFO (as from `<(command)`) is read like a file. Either may keep us waiting: stderr says
    so (a FIFO after WAIT_NOTE_S, since `<(command)` usually answers at once; a terminal at once)."""
    waiting = _WaitNote(path, what)
    try:
        with waiting, open(path, "rb") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            if os.isatty(handle.fileno()):
                waiting.say("from the terminal: type or paste it, then Ctrl-D")
            elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                raise InputFileError(path, f"is a device, not a {what} file")
            data = handle.read(max_bytes + 1)
    except IsADirectoryError:
        raise InputFileError(path, f"is a folder, not a {what} file") from None
    except OSError as exc:
        hint = CWD_GONE if not Path(path).is_absolute() and cwd_gone() else "check the path"
        raise InputFileError(path, f"cannot read {what} file ({exc.strerror}); {hint}") from None
    if len(data) > max_bytes:
        raise InputFileError(path, f"larger than {_size(max_bytes)}, the limit for a {what} file")
    return data


WAIT_NOTE_S = 1.0


class _WaitNote:
    """While reading a FIFO, a line on stderr once WAIT_NOTE_S pass with no data (opening a FIFO blocks
    until a writer comes), so a forgotten `mkfifo` is not a silent hang."""

    def __init__(self, path: str | Path, what: str):
        self.path, self.what, self._timer = path, what, None

    def __enter__(self):
        try:
            fifo = stat.S_ISFIFO(os.stat(self.path).st_mode)
        except OSError:
            fifo = False
        if fifo:
            self._timer = threading.Timer(WAIT_NOTE_S, self.say, ("from a FIFO: nothing has arrived yet",))
            self._timer.daemon = True
            self._timer.start()
        return self

    def say(self, how: str) -> None:
        from planner.base.text import visible

        sys.stderr.write(visible(f"waiting for the {self.what} file {self.path} {how} (Ctrl-C stops)") + "\n")
        sys.stderr.flush()

    def __exit__(self, *exc) -> None:
        if self._timer is not None:
            self._timer.cancel()


CWD_GONE = "the current folder no longer exists (deleted or moved): cd to one that does, or give absolute paths"


def cwd_gone() -> bool:
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    return False


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
        if not given.is_absolute() and cwd_gone():
            raise PlannerError(f"{given}: cannot write: {CWD_GONE}")
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
        folder each; only a folder changing under us between write and rename could stop one.) Signals
        wait while a temporary is created and recorded, and while the renames and the clean-up run: a
        SIGTERM, SIGHUP or Ctrl-C at any moment leaves every target as it was or every one replaced, and no
        temporary behind."""
        written: list[tuple[Path, Path]] = []
        try:
            for _, given, target, write in self._pending:
                _check_not_special(str(given), target)  # again: the work may have taken minutes
                with signals_held():
                    tmp = _new_temporary(target)
                    written.append((tmp, target))
                _fill(tmp, given, target, write)
            with signals_held():
                for tmp, target in written:
                    os.replace(tmp, target)
        except OSError as exc:
            raise WriteError(_failed(self._pending, written), exc.strerror or type(exc).__name__) from None
        finally:
            with signals_held():
                for tmp, _ in written:
                    tmp.unlink(missing_ok=True)
            self._pending = []


# ---------------------------------------------------------------- signals

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Stopped(BaseException):
    """SIGTERM or SIGHUP arrived (a batch scheduler, a closed terminal): raised where the program is, so
    every clean-up (temporary files) runs as for Ctrl-C, which the CLI turns into one too once its clean-ups
    ran (cli/base.py). BaseException: no `except Exception` swallows it."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


def _stop(signum: int, _frame) -> None:
    raise Stopped(signum)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP raise Stopped while the block runs (their default would end the process on the
    spot, leaving temporaries); the previous handlers come back after. A no-op outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, _stop) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """STOP_SIGNALS that arrive while the block runs wait until it ends, then are raised again (their usual
    handling follows): for the few steps that must not be cut in two, such as creating a temporary file and
    recording it. Handlers, not the signal mask: a signal sent to the process may be delivered to any
    thread, and the mask holds one thread only."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []
    previous = {s: signal.signal(s, lambda signum, _frame: arrived.append(signum)) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if arrived:
            signal.raise_signal(arrived[0])


# ---------------------------------------------------------------- temporaries

_TEMPORARY_EXTRA = len("..") + 8 + len(".tmp")  # the leading dot, the separator, mkstemp's 8 characters, suffix


def _new_temporary(target: Path) -> Path:
    """An empty temporary file beside target, named `.NAME.XXXXXXXX.tmp` with NAME cut (at a byte; the name
    is bytes to the file system) so that it fits the folder's limit (255 bytes) for every legal target."""
    try:
        limit = os.pathconf(target.parent, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    name = os.fsencode(target.name)[: max(1, limit - _TEMPORARY_EXTRA)]
    fd, tmp = tempfile.mkstemp(prefix=b"." + name + b".", suffix=b".tmp", dir=os.fsencode(target.parent))
    os.close(fd)
    return Path(os.fsdecode(tmp))


def _fill(tmp: Path, given: Path, target: Path, write: Writer) -> None:
    """Call write(tmp) and give tmp the target's permissions."""
    try:
        write(tmp)
        os.chmod(tmp, _mode_for(target))
    except WriteError as exc:  # a writer's own failure: name the file the user gave
        raise WriteError(given, exc.reason) from None


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
