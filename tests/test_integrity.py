"""Vendor files a buyer can trust (issue #33): one price per part across the sheets and files of one --catalog,
hidden sheets never read, no spoofed text in any output, outputs that survive SIGTERM/SIGHUP, a full disk and long
names, inputs that say they are waiting, and errors that name what they refer to."""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import openpyxl
import pytest
from support import NIC_COLUMNS as SHIPPED_NIC_COLUMNS
from support import refused

from planner.base.fileio import Outputs, read_bytes
from planner.base.text import check_text, keep_invisible, visible
from planner.catalog.load import load_catalog

NIC_COLUMNS = [*SHIPPED_NIC_COLUMNS, "notes"]
SCENARIO = """name: {name}
workload:
  params: 7B
  seq_len: 2048
requirement:
  gpus: 64
constraints:
  gpus: [H100]
"""


def nic(sku: str, price: float, name: str = "NIC", notes: str | None = None) -> list:
    return [sku, name, "Acme", 400, 1, "both", price, 20, "test", "2026", "solid", notes]


def quote(path: Path, *sheets: tuple[str, list[list], str]) -> Path:
    """A workbook of (title, rows, state) sheets, each with the NIC header."""
    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    for title, rows, state in sheets:
        ws = workbook.create_sheet(title)
        ws.append(NIC_COLUMNS)
        for row in rows:
            ws.append(row)
        ws.sheet_state = state
    workbook.save(path)
    return path


# ---------------------------------------------------------------- 1. one price per part


@pytest.mark.parametrize("state", ["hidden", "veryHidden"])
def test_a_hidden_sheet_never_sets_a_price_and_validation_names_it(run, tmp_path, state):
    path = quote(tmp_path / "q.xlsx", ("nics", [nic("ACME-1", 1000)], "visible"), ("Sheet2", [nic("ACME-1", 1)], state))
    result = run("catalog", "validate", path)
    assert result.exit_code == 0, result.output
    assert "1 rows valid (nics 1)" in result.stdout
    shown = "very hidden" if state == "veryHidden" else "hidden"
    assert f"not read: {path}[Sheet2] is a {shown} sheet" in result.stdout
    assert load_catalog([path]).nic("ACME-1").price_usd == 1000


def test_a_key_twice_across_sheets_is_refused_naming_both(run, tmp_path):
    path = quote(
        tmp_path / "q.xlsx", ("nics", [nic("ACME-1", 1000)], "visible"), ("more", [nic("acme-1", 1)], "visible")
    )
    stderr = refused(run("catalog", "validate", path), 1)
    assert f"{path}[more]:2: column 'sku' = 'acme-1': duplicate sku (also in {path}[nics], row 2)" in stderr


def test_a_key_twice_across_files_of_a_folder_is_refused_but_a_later_catalog_replaces(run, write, tmp_path):
    header = ",".join(NIC_COLUMNS) + "\n"
    write("mine/a.csv", header + "X1,NIC,Acme,400,1,both,1000,20,test,2026,solid,\n")
    write("mine/b.csv", header + "X1,NIC,Acme,400,1,both,5,20,test,2026,solid,\n")
    stderr = refused(run("catalog", "validate", tmp_path / "mine"), 1)
    assert (
        f"{tmp_path}/mine/b.csv:2: column 'sku' = 'X1': duplicate sku (also in {tmp_path}/mine/a.csv, row 2)" in stderr
    )
    later = write("later.csv", header + "X1,NIC,Acme,400,1,both,5,20,test,2026,solid,\n")
    assert load_catalog([tmp_path / "mine" / "a.csv", later]).nic("X1").price_usd == 5


def test_a_header_only_catalog_does_not_validate(run, write):
    path = write("nics.csv", ",".join(NIC_COLUMNS) + "\n")
    refused(run("catalog", "validate", path), 1, f"{path}: a header and no rows; add rows, or leave it out")


def test_catalog_hashes_are_of_the_bytes_read(tmp_path):
    path = quote(tmp_path / "q.xlsx", ("nics", [nic("ACME-1", 1000)], "visible"), ("h", [nic("Z", 1)], "hidden"))
    loaded = load_catalog([path])
    assert loaded.files[str(path)] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert loaded.hidden_sheets == {f"{path}[h]": "hidden"}


# ---------------------------------------------------------------- 2. text that cannot spoof


@pytest.mark.parametrize(
    ("text", "lines", "fragment"),
    [
        ("Quote \u202e0001$", False, "U+202E (RIGHT-TO-LEFT OVERRIDE) at position 7"),
        ("Quote\rXX", False, "a line break, U+000D (CR) at position 6"),
        ("two\nlines", False, "a line break, U+000A (LF) at position 4"),
        ("a\rb", True, "a carriage return not followed by a line feed"),
        ("x\u2066y", True, "U+2066 (LEFT-TO-RIGHT ISOLATE)"),
        ("H100\u200b", False, "U+200B (ZERO WIDTH SPACE)"),
    ],
)
def test_hidden_characters_are_refused_with_their_name_and_position(text, lines, fragment):
    with pytest.raises(ValueError, match=re.escape(fragment)):
        check_text(text, lines=lines)


def test_notes_may_hold_line_feeds():
    assert check_text("line 1\nline 2\r\nline 3", lines=True)


def test_visible_escapes_every_hidden_character_and_keeps_the_rest():
    assert visible("$\u202e0001 \u200f\r\n\x1b") == "$\\u202e0001 \\u200f\\r\\n\\x1b"
    assert visible("a\r\nb\nc\rd", lines=True) == "a\r\nb\nc\\rd"
    assert visible("Zürich 東京 - plain") == "Zürich 東京 - plain"


@pytest.mark.parametrize(
    ("where", "fragment"),
    [
        ("name", "name = 'Quote \\u202e0001': contains the invisible character U+202E"),
        ("cr", "name = 'Quote\\rXX': contains a line break"),
        ("flag", "--name: name = 'Q \\u202e1': contains the invisible character U+202E"),
        ("catalog name", "column 'name' = 'NIC \\u202e1': contains the invisible character U+202E"),
        ("catalog cr", "column 'name' = 'NIC\\r2': contains a line break"),
        ("notes", "column 'notes' = 'a\\u202eb': contains the invisible character"),
        ("notes cr", "column 'notes' = 'a\\rb': contains a carriage return not followed by a line feed"),
        ("fleet", "contains the invisible character U+202E"),
    ],
)
def test_the_eight_spoofing_cases_are_refused_at_load(run, write, where, fragment):
    header = ",".join(NIC_COLUMNS) + "\n"
    scenario = write("s.yaml", SCENARIO.format(name="ok"))
    if where == "name":
        args = ["plan", write("s.yaml", SCENARIO.format(name='"Quote \\u202e0001"'))]
    elif where == "cr":
        args = ["plan", write("s.yaml", SCENARIO.format(name='"Quote\\rXX"'))]
    elif where == "flag":
        args = ["plan", scenario, "--name", "Q \u202e1"]
    elif where == "fleet":
        fleet = (Path(__file__).parents[1] / "examples" / "fleet-startup.yaml").read_text(encoding="utf-8")
        args = ["fleet", write("f.yaml", fleet.replace("name: startup", 'name: "start\\u202eup"', 1))]
    else:
        cells = {
            "catalog name": 'X1,"NIC \u202e1",Acme,400,1,both,1000,20,test,2026,solid,',
            "catalog cr": 'X1,"NIC\r2",Acme,400,1,both,1000,20,test,2026,solid,',
            "notes": 'X1,NIC,Acme,400,1,both,1000,20,test,2026,solid,"a\u202eb"',
            "notes cr": 'X1,NIC,Acme,400,1,both,1000,20,test,2026,solid,"a\rb"',
        }
        args = ["catalog", "validate", write("nics.csv", header + cells[where] + "\n")]
    refused(run(*args), 1, fragment)


def test_kept_invisible_characters_are_shown_escaped_in_every_output(run, write, tmp_path):
    scenario = write("s.yaml", SCENARIO.format(name='"Quote for \\u202e0001$"'))
    out = tmp_path / "out"
    out.mkdir()
    try:
        results = [
            run("--keep-invisible", "plan", scenario, "-q", "-o", out / "p.xlsx", "--csv", out / "b.csv"),
            run("--keep-invisible", "plan", scenario, "-q", "-o", out / "p.json"),
        ]
        terminal = run("--keep-invisible", "plan", scenario, "-q").stdout
    finally:
        keep_invisible(False)
    assert all(r.exit_code == 0 for r in results), [r.output for r in results]
    assert "Quote for \\u202e0001$" in terminal and "\u202e" not in terminal
    assert json.loads((out / "p.json").read_text(encoding="utf-8"))["scenario"] == "Quote for \u202e0001$"
    assert "\u202e" not in (out / "p.json").read_text(encoding="utf-8")  # JSON escapes it: \u202e
    cells = [c for ws in openpyxl.load_workbook(out / "p.xlsx") for row in ws.iter_rows(values_only=True) for c in row]
    texts = [c for c in cells if isinstance(c, str)]
    assert any("\\u202e" in c for c in texts) and not any("\u202e" in c for c in texts)
    assert "\u202e" not in (out / "b.csv").read_text(encoding="utf-8")


# ---------------------------------------------------------------- 3-5. outputs: signals, full disk, long names

_KILLER = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from planner.base.fileio import Outputs, stop_on_signals, Stopped
    from planner.report import xlsx
    folder, where, signum = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    real_replace = os.replace

    def kill():
        os.kill(os.getpid(), signum)

    def replace(a, b):  # the signal arrives between the renames of one commit
        real_replace(a, b)
        if where == "between-renames" and Path(b).name == "a.json":  # the commit's first rename
            kill()

    os.replace = replace

    def workbook(tmp):
        import openpyxl
        wb = openpyxl.Workbook()
        wb.active["A1"] = "new"
        if where == "mid-write":
            kill()
        xlsx.save(wb, tmp)

    try:
        with stop_on_signals():
            out = Outputs()
            out.add_text("", folder / "a.json", "new")
            out.add("", folder / "b.xlsx", workbook)
            if where == "before-commit":
                kill()
            out.commit()
    except Stopped as s:
        sys.exit(128 + s.signum)
    """
)


@pytest.mark.parametrize("where", ["before-commit", "mid-write", "between-renames"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_at_any_moment_leaves_no_temporary_and_all_or_none_written(tmp_path, where, signum):
    (tmp_path / "a.json").write_text("old")
    (tmp_path / "b.xlsx").write_text("old")
    code = subprocess.run([sys.executable, "-c", _KILLER, tmp_path, where, str(int(signum))], capture_output=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.xlsx"], code.stderr
    contents = {(tmp_path / "a.json").read_text().strip(), (tmp_path / "b.xlsx").read_bytes()[:2].decode("latin-1")}
    if where == "between-renames":  # the renames finish before the held signal is handled
        assert contents == {"new", "PK"}, (where, contents)
    else:  # all or none: a signal sent to the process may reach another thread (OpenBLAS's), and Python then
        # handles it some bytecodes later, possibly inside the commit, which holds it to the end
        assert contents in ({"new", "PK"}, {"old", "ol"}), (where, contents)
    assert code.returncode != 0 and b"Traceback" not in code.stderr or signum == signal.SIGINT


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_planning_command_is_one_line_and_its_signal_status(tmp_path, signum):
    """SIGTERM, and Ctrl-C likewise (not click's "Aborted!" and 1): one line, 128 + the signal's number (143,
    130), nothing written."""
    example = Path(__file__).parents[1] / "examples" / "llama-70b-h100.yaml"
    (tmp_path / "plan.xlsx").write_text("old")
    process = subprocess.Popen(
        [sys.executable, "-m", "planner", "plan", example, "-o", tmp_path / "plan.xlsx"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    first = process.stderr.readline()  # the first progress line: imported, the plan (seconds) still ahead
    process.send_signal(signum)
    rest = process.stderr.read()
    process.wait(timeout=60)
    assert first.startswith(b"... ") and process.returncode == 128 + signum, (first, rest)
    name = signal.Signals(signum).name
    assert rest.decode().strip().splitlines()[-1:] == [
        f"error: stopped by {name}; the outputs are all written or all as they were"
    ], rest
    assert b"Traceback" not in rest
    assert [p.name for p in tmp_path.iterdir()] == ["plan.xlsx"] and (tmp_path / "plan.xlsx").read_text() == "old"


@pytest.mark.parametrize("suffix", [".json", ".xlsx"])
def test_the_longest_legal_names_are_written(tmp_path, suffix):
    from planner.report import xlsx

    target = tmp_path / ("é" * ((255 - len(suffix)) // 2) + "x" * ((255 - len(suffix)) % 2) + suffix)
    assert len(os.fsencode(target.name)) == 255
    out = Outputs()
    out.add("", target, lambda tmp: xlsx.save(openpyxl.Workbook(), tmp))
    out.commit()
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


def test_a_full_disk_during_a_workbook_save_is_one_line(tmp_path):
    """RLIMIT_FSIZE fails the write as a full disk does (EFBIG, like ENOSPC) without mounting anything."""
    example = Path(__file__).parents[1] / "examples" / "llama-70b-h100.yaml"
    (tmp_path / "plan.xlsx").write_text("old")
    script = (
        "import resource, runpy, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000)); "
        f"sys.argv = ['planner', 'plan', {str(example)!r}, '-q', '-o', {str(tmp_path / 'plan.xlsx')!r}]; "
        "runpy.run_module('planner', run_name='__main__')"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "Traceback" not in result.stderr and "Exception ignored" not in result.stderr
    assert result.stderr.strip().endswith("cannot write (File too large); nothing was changed"), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["plan.xlsx"] and (tmp_path / "plan.xlsx").read_text() == "old"


# ---------------------------------------------------------------- 6-7. waiting inputs, missing folders, calibration


def test_a_fifo_with_no_writer_says_it_is_waiting(tmp_path, capfd):
    fifo = tmp_path / "s.yaml"
    os.mkfifo(fifo)

    def writer():
        time.sleep(1.6)
        with open(fifo, "w") as handle:
            handle.write("name: late\n")

    threading.Thread(target=writer, daemon=True).start()
    assert read_bytes(fifo, 1000, "scenario") == b"name: late\n"
    assert f"waiting for the scenario file {fifo} from a FIFO: nothing has arrived yet" in capfd.readouterr().err


def test_a_fifo_that_answers_at_once_says_nothing(run, tmp_path, capfd):
    fifo = tmp_path / "s.yaml"
    os.mkfifo(fifo)
    threading.Thread(target=lambda: fifo.write_text("name: quick\n"), daemon=True).start()
    assert read_bytes(fifo, 1000, "scenario") == b"name: quick\n"
    assert "waiting" not in capfd.readouterr().err


def test_a_deleted_working_folder_is_named(tmp_path):
    example = Path(__file__).parents[1] / "examples" / "llama-70b-h100.yaml"
    gone = tmp_path / "gone"
    gone.mkdir()
    script = (
        f"import os, runpy, sys; os.chdir({str(gone)!r}); os.rmdir({str(gone)!r}); "
        f"sys.argv = ['planner', 'plan', {str(example)!r}, '-q', '-o', 'x.json']; "
        "runpy.run_module('planner', run_name='__main__')"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip() == (
        "error: x.json: cannot write: the current folder no longer exists (deleted or moved): cd to one that does, "
        "or give absolute paths"
    )


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"eta_comp": NaN}', "line 1, key 'eta_comp': NaN is not a number JSON allows"),
        ('{\n "a": 1,\n "eta": Infinity}', "line 3, key 'eta': Infinity is not a number JSON allows"),
        ('{"b": [1, 2,\n -Infinity]}', "line 2, key 'b': -Infinity is not a number JSON allows"),
        ('{"x": 1' + "1" * 400 + "}", "line 1, key 'x': a number of 401 digits; at most 100"),
    ],
)
def test_calibration_number_errors_name_the_line_and_key(run, write, text, fragment):
    calibration = write("cal.json", text)
    refused(run("plan", write("s.yaml", SCENARIO.format(name="ok")), "--calibration", calibration), 1, fragment)
