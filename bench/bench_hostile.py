"""Issue #14's hostile and huge inputs, run as a person would: each command in its own process under
`timeout 20` and a 2 GiB address-space limit, checking exit code (1 or 2), no traceback, a message under
2 KB, and that no file (inputs, earlier outputs, devices) changed. Not a test (the suite has smaller
versions in tests/test_hostile.py): run it by hand and quote the table.

    python bench/bench_hostile.py              # every case (~3 minutes on 2 cores)
    python bench/bench_hostile.py bomb xlsx    # the cases whose name contains a word

Inputs are generated in a temporary folder (~150 MB, removed afterwards).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
DATABASE = REPO / "planner" / "data" / "measurements.csv"
PLANNER = [sys.executable, "-m", "planner"]
SCENARIO = """name: test
workload:
  params: 7B
  seq_len: 2048
requirement:
  gpus: 64
target_tflops: 100
constraints:
  gpus: [H100]
"""
NIC_HEADER = "sku,name,vendor,speed_gbps,ports,protocols,price_usd,power_w,source,date,confidence\n"
MEASURED = "gpu,gpus,gpus_per_node,node_gbps,fabric,params,tokens_per_gpu,measured_tflops\n"
PREDICT = ["predict", "--params", "7B", "--gpu", "H100", "--gpus", "8", "--gpus-per-node", "8"]
PREDICT += ["--node-gbps", "400", "--tokens-per-gpu", "2048"]


def nic(i: int, name: str | None = None, ports: str = "1") -> str:
    return f"X{i},{name or f'NIC {i}'},Acme,400,{ports},both,1000,20,test,2026,solid\n"


def bomb(levels: int, width: int = 9) -> str:
    lines = ["a0: &a0 [" + ",".join(["x"] * width) + "]"]
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def xlsx(path: Path, sheet: Callable, shared: Callable | None = None) -> None:
    """A one-sheet workbook whose sheet (and shared strings) XML is streamed by the given writers."""
    main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    pkg = "http://schemas.openxmlformats.org/package/2006/relationships"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(
            "[Content_Types].xml",
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/></Types>',
        )
        z.writestr(
            "_rels/.rels",
            f'<Relationships xmlns="{pkg}"><Relationship Id="rId1" Type="{rel}/officeDocument" '
            'Target="xl/workbook.xml"/></Relationships>',
        )
        z.writestr(
            "xl/workbook.xml",
            f'<workbook xmlns="{main}" xmlns:r="{rel}"><sheets><sheet name="nics" sheetId="1" r:id="rId1"/>'
            "</sheets></workbook>",
        )
        z.writestr(
            "xl/_rels/workbook.xml.rels",
            f'<Relationships xmlns="{pkg}"><Relationship Id="rId1" Type="{rel}/worksheet" '
            'Target="worksheets/sheet1.xml"/></Relationships>',
        )
        for member, writer in (("xl/worksheets/sheet1.xml", sheet), ("xl/sharedStrings.xml", shared)):
            if writer is not None:
                with z.open(member, "w", force_zip64=True) as handle:
                    writer(handle)


HEAD = b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
TAIL = b"</sheetData></worksheet>"


def big_cell(f) -> None:  # one 1 GiB cell
    f.write(HEAD + b'<row r="1"><c r="A1" t="inlineStr"><is><t>')
    for _ in range(1024):
        f.write(b"A" * (1 << 20))
    f.write(b"</t></is></c></row>" + TAIL)


def many_rows(f) -> None:  # 3M rows
    f.write(HEAD)
    for i in range(1, 3_000_001):
        f.write(b'<row r="%d"><c r="A%d"><v>1</v></c></row>' % (i, i))
    f.write(TAIL)


def one_shared(f) -> None:
    f.write(HEAD + b'<row r="1"><c r="A1" t="s"><v>0</v></c></row>' + TAIL)


def shared_strings(f) -> None:  # 20M shared strings
    f.write(b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">')
    for _ in range(20_000):
        f.write(b"<si><t>x</t></si>" * 1000)
    f.write(b"</sst>")


def make_inputs(d: Path) -> None:
    def w(name: str, text: str | bytes, encoding: str = "utf-8") -> None:
        path = d / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode(encoding))

    w("ok.yaml", SCENARIO)
    w("ok.json", json.dumps({"name": "test", "workload": {"params": "7B"}, "requirement": {"gpus": 64}}))
    for n in (6, 7, 9):
        w(f"bomb{n}.yaml", SCENARIO + bomb(n))
    w("biglist.yaml", SCENARIO + "junk: [" + ",".join(["1"] * 1_000_000) + "]\n")
    w("comments.yaml", SCENARIO + ("# " + "x" * 98 + "\n") * 200_000)
    w("int400.yaml", SCENARIO.replace("gpus: 64", "gpus: " + "9" * 400))
    w("int100k.yaml", SCENARIO.replace("gpus: 64", "gpus: " + "9" * 100_000))
    w("maxnodes.yaml", SCENARIO + "  max_nodes: 1e19\n")
    w("gpus1e30.yaml", SCENARIO.replace("gpus: 64", "gpus: 1e30"))
    w("years.yaml", SCENARIO + "objective:\n  kind: tco\n  years: .inf\n")
    w("kwh.yaml", SCENARIO + "objective:\n  kind: tco\n  usd_per_kwh: .inf\n")
    w("latin1.yaml", SCENARIO.replace("test", "café"), "latin-1")
    w("utf16.yaml", SCENARIO, "utf-16")
    w("deep3000.yaml", SCENARIO + "junk: " + "[" * 3000 + "]" * 3000 + "\n")
    w("deep5000.yaml", SCENARIO + "junk: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n")
    w("dup.yaml", SCENARIO + "target_tflops: 200\n")
    w("ctrl.yaml", SCENARIO.replace("name: test", 'name: "bad\\0name\\x07"'))
    cloud = (REPO / "examples" / "cloud-70b.yaml").read_text()
    for name, extra in (("inst1e5", "100000"), ("inst1e9", "1000000000")):
        w(f"cloud_{name}.yaml", cloud.replace("max_instances: 64", f"max_instances: {extra}"))
    w("cal_latin1.json", '{"source": "café"}', "latin-1")
    w("cal_utf16.json", '{"source": "x"}', "utf-16")
    w("cal_deep.json", "[" * 100_000 + "]" * 100_000)
    w("cal_ctrl.json", json.dumps({"source": "evil\u0000src"}))
    w("cal_bigint.json", '{"overlap": ' + "9" * 100_000 + "}")
    w("nics100k.csv", NIC_HEADER + "".join(nic(i) for i in range(100_000)))
    w("cat1m/nics.csv", NIC_HEADER + "".join(nic(i) for i in range(1_000_000)))
    w("wide.csv", ",".join(f"c{i}" for i in range(100_000)) + "\n")
    w("nics_ctrl.csv", NIC_HEADER + nic(1, "bad\x00name") + nic(2, "bell\x07"))
    w("nics_bigint.csv", NIC_HEADER + nic(1, ports="9" * 400) + nic(2, ports="9" * 100_000))
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(NIC_HEADER.strip().split(","))
    for i, name in enumerate(['=HYPERLINK("http://x","y")', "+1+cmd|' /C calc'!A0", "-1+1", "@SUM(1)"]):
        writer.writerow([f"F{i}", name, *nic(0).strip().split(",")[2:]])
    w("nics_formula.csv", buffer.getvalue())
    servers = (REPO / "catalogs" / "servers.csv").read_text().splitlines()
    header, row = servers[1].split(","), next(csv.reader([next(s for s in servers[2:] if "H100" in s)]))
    row[header.index("max_nics_per_host")], row[0] = "1000000000", "Monster"
    buffer = io.StringIO()
    csv.writer(buffer).writerows([header, row])
    w("servers_maxnics.csv", buffer.getvalue())
    w("m_ok.csv", MEASURED + "V100,384,16,100,ib,176B,2048,20\nV100,384,16,400,ib,176B,2048,35\n")
    w("m_nan.csv", MEASURED + "V100,384,16,100,ib,176B,2048,nan\nV100,384,16,400,ib,176B,2048,inf\n")
    points = "".join(
        f"V100,{16 * (1 + i % 64)},16,{100 * (1 + i % 8)},ib,176B,2048,{20 + i % 20}\n" for i in range(5000)
    )
    w("m5000.csv", MEASURED + points)
    groups = "".join(f"V100,{16 * (1 + i % 8)},16,100,ib,176B,2048,20,set{i}\n" for i in range(100))
    w("m_groups.csv", MEASURED.strip() + ",source_group\n" + groups)
    quantiles = {"p5": -1e300, "p10": -0.1, "p25": 0.0, "p50": 0.0, "p75": 0.1, "p90": 0.2, "p95": 0.3}
    w("cal_quantiles.json", json.dumps({"uncertainty": {"all": quantiles}}))
    w("layout.yaml", SCENARIO + "layout:\n  rack_units: 48\n  reserved_units: 48\n")
    w("reliability.yaml", SCENARIO + "reliability:\n  restart_minutes: .inf\n")
    fleet = (REPO / "examples" / "fleet-startup.yaml").read_text()
    w("fleet_bomb.yaml", fleet + bomb(9))
    w("fleet_nan.yaml", fleet.replace("growth_per_period: 0.15", "growth_per_period: .nan"))
    w("fleet_ctrl.yaml", fleet.replace("name: startup", 'name: "start\\0up"'))
    w("fleet_maxnodes.yaml", fleet.replace("target_tflops: 300", "target_tflops: 300\n    max_nodes: 1e19"))
    services = "".join(f"  - {{name: s{i}, model: Llama-3-8B, tokens_per_s: 1k}}\n" for i in range(101))
    w("fleet_many.yaml", fleet.replace("inference:\n", "inference:\n" + services))
    w("fleet.json", json.dumps(yaml.safe_load(fleet)))
    xlsx(d / "bomb_cell.xlsx", big_cell)
    xlsx(d / "bomb_rows.xlsx", many_rows)
    xlsx(d / "bomb_sst.xlsx", one_shared, shared_strings)
    (d / "mycat").mkdir()
    shutil.copy(REPO / "catalogs" / "nics.csv", d / "mycat" / "nics.csv")
    (d / "out").mkdir()
    (d / "out" / "keep.json").write_text("precious\n")
    (d / "out" / "null.json").symlink_to("/dev/null")
    os.mkfifo(d / "out" / "fifo.json")
    # issue #33: what a buyer receives (quote workbooks, pasted names) and long legal output names
    import openpyxl

    book = openpyxl.Workbook()
    for title, price, state in (("nics", 1000, "visible"), ("Sheet2", 1, "veryHidden")):
        ws = book.active if title == "nics" else book.create_sheet(title)
        ws.title = title
        ws.append(NIC_HEADER.strip().split(","))
        ws.append(["ACME-1", "NIC", "Acme", 400, 1, "both", price, 20, "test", "2026", "solid"])
        ws.sheet_state = state
    book.save(d / "quote_hidden.xlsx")
    book["Sheet2"].sheet_state = "visible"
    book.save(d / "quote_twice.xlsx")
    w("header_only.csv", NIC_HEADER)
    w("bidi_name.yaml", SCENARIO.replace("name: test", 'name: "Quote for \\u202e0001$"'))
    w("cr_name.yaml", SCENARIO.replace("name: test", 'name: "Quote\\rXX"'))
    w("bidi_nic.csv", NIC_HEADER + nic(1, '"NIC \u202e1"'))
    w("cal_nan.json", '{\n "eta_comp": NaN}')
    # issue #32: a sweep's results file and engine
    w("junk.npz", b"PK\x03\x04 not numpy")
    os.mkfifo(d / "out" / "fifo.npz")


PLAN = ["plan", "ok.yaml", "-q"]
SWEEP = ["sweep", str(REPO / "examples" / "llama-70b-h100.yaml"), "-q", "--workers", "0"]
LIST = ["catalog", "list", "nics"]
# name, arguments after `planner`, the exit code expected (None: 1 or 2)
CASES = [
    ("alias bomb, 9 levels (plan)", ["plan", "bomb9.yaml", "-q"], None),
    ("alias bomb, 9 levels (cloud)", ["cloud", "bomb9.yaml"], None),
    ("alias bomb, 6 levels", ["plan", "bomb6.yaml", "-q"], None),
    ("alias bomb, 7 levels", ["plan", "bomb7.yaml", "-q"], None),
    ("1e6-element list under an unknown key", ["plan", "biglist.yaml", "-q"], None),
    ("20 MB of comments", ["plan", "comments.yaml", "-q"], None),
    ("xlsx bomb: 1 GB cell", ["catalog", "validate", "bomb_cell.xlsx"], None),
    ("xlsx bomb: 3M rows", ["catalog", "validate", "bomb_rows.xlsx"], None),
    ("xlsx bomb: 20M shared strings", ["catalog", "validate", "bomb_sst.xlsx"], None),
    ("header of 100k columns", ["catalog", "validate", "wide.csv"], None),
    ("100k valid rows: validate", ["catalog", "validate", "nics100k.csv"], 0),
    ("100k valid rows: list", [*LIST, "--catalog", "nics100k.csv", "--format", "csv"], 0),
    ("1M rows", ["catalog", "validate", "cat1m"], None),
    ("calibrate on 5,000 measurements", ["calibrate", "m5000.csv", "-o", "out/cal.json"], None),
    ("--alternatives 1000000", ["plan", "ok.yaml", "-q", "--alternatives", "1000000"], None),
    ("server max_nics_per_host 1e9", ["plan", "ok.yaml", "-q", "--catalog", "servers_maxnics.csv"], None),
    ("cloud max_instances 1e5", ["cloud", "cloud_inst1e5.yaml"], None),
    ("cloud max_instances 1e9", ["cloud", "cloud_inst1e9.yaml"], None),
    ("inference --params 175B --latency 1s", ["inference", "--params", "175B", "--latency", "1s"], 0),
    ("400-digit integer", ["plan", "int400.yaml", "-q"], None),
    ("100k-digit integer", ["plan", "int100k.yaml", "-q"], None),
    ("400/100k-digit catalog cells", ["catalog", "validate", "nics_bigint.csv"], None),
    ("100k-digit calibration number", [*PREDICT, "--calibration", "cal_bigint.json"], None),
    ("max_nodes: 1e19", ["plan", "maxnodes.yaml", "-q"], None),
    ("gpus: 1e30", ["plan", "gpus1e30.yaml", "-q"], None),
    ("objective.years: .inf", ["plan", "years.yaml", "-q"], None),
    ("objective.usd_per_kwh: .inf", ["plan", "kwh.yaml", "-q"], None),
    ("calibrate with NaN/inf measurements", ["calibrate", "m_nan.csv", "-o", "out/cal.json"], None),
    ("Latin-1 scenario", ["plan", "latin1.yaml", "-q"], None),
    ("UTF-16 scenario", ["plan", "utf16.yaml", "-q"], None),
    ("Latin-1 calibration", [*PREDICT, "--calibration", "cal_latin1.json"], None),
    ("UTF-16 calibration", [*PREDICT, "--calibration", "cal_utf16.json"], None),
    ("/dev/zero as scenario", ["plan", "/dev/zero", "-q"], None),
    ("/dev/zero as calibration", ["plan", "ok.yaml", "-q", "--calibration", "/dev/zero"], None),
    ("3,000-deep YAML", ["plan", "deep3000.yaml", "-q"], None),
    ("5,000-deep YAML", ["plan", "deep5000.yaml", "-q"], None),
    ("100k-deep JSON calibration", ["plan", "ok.yaml", "-q", "--calibration", "cal_deep.json"], None),
    ("--set a.a.a... 10k deep", ["plan", "ok.yaml", "-q", "--set", ".".join(["a"] * 10_000) + "=1"], None),
    ("NUL in scenario name, -o plan.xlsx", ["plan", "ctrl.yaml", "-q", "-o", "out/p.xlsx"], None),
    ("NUL in catalog name, -o plan.xlsx", [*PLAN, "--catalog", "nics_ctrl.csv", "-o", "out/p.xlsx"], None),
    ("NUL in calibration source, -o plan.xlsx", [*PLAN, "--calibration", "cal_ctrl.json", "-o", "out/p.xlsx"], None),
    ("control characters: catalog validate", ["catalog", "validate", "nics_ctrl.csv"], None),
    ("duplicate YAML key", ["plan", "dup.yaml", "-q"], None),
    ("-o under a file-size limit", ["plan", "ok.yaml", "-q", "-o", "out/big.json"], None),
    ("-o p.json --csv missing/dir/bom.csv", [*PLAN, "-o", "out/keep.json", "--csv", "no/dir/bom.csv"], None),
    ("--csv onto an input catalog", ["plan", "ok.yaml", "-q", "--catalog", "mycat", "--csv", "mycat/nics.csv"], None),
    ("calibrate m.csv -o m.csv", ["calibrate", "m_ok.csv", "-o", "m_ok.csv"], None),
    ("-o onto the scenario", ["plan", "ok.json", "-q", "-o", "ok.json"], None),
    ("-o /dev/null", ["calibrate", "m_ok.csv", "-o", "/dev/null"], None),
    ("-o /dev/full", ["calibrate", "m_ok.csv", "-o", "/dev/full"], None),
    ("-o a symlink to /dev/null", ["plan", "ok.yaml", "-q", "-o", "out/null.json"], None),
    ("-o a FIFO", ["calibrate", "m_ok.csv", "-o", "out/fifo.json"], None),
    ("catalog list --format csv with formulas", [*LIST, "--catalog", "nics_formula.csv", "--format", "csv"], 0),
    ("validate: 100 source groups (100 fits)", ["validate", "m_groups.csv", "-q"], None),
    ("calibration uncertainty -1e300", [*PREDICT, "--calibration", "cal_quantiles.json"], None),
    ("layout: every unit reserved", ["plan", "layout.yaml", "-q"], None),
    ("reliability.restart_minutes: .inf", ["plan", "reliability.yaml", "-q"], None),
    ("--confidence nan", ["plan", "ok.yaml", "-q", "--confidence", "nan"], None),
    ("predict --grad-accum 1e30", [*PREDICT, "--grad-accum", "1" + "0" * 30], None),
    ("calibrate -o the shipped database", ["calibrate", "-q", "-o", str(DATABASE)], None),
    ("fleet: alias bomb", ["fleet", "fleet_bomb.yaml", "-q"], None),
    ("fleet: .nan growth", ["fleet", "fleet_nan.yaml", "-q"], None),
    ("fleet: NUL in the name", ["fleet", "fleet_ctrl.yaml", "-q"], None),
    ("fleet: max_nodes 1e19", ["fleet", "fleet_maxnodes.yaml", "-q"], None),
    ("fleet: 101 workloads", ["fleet", "fleet_many.yaml", "-q"], None),
    ("fleet: /dev/zero", ["fleet", "/dev/zero", "-q"], None),
    ("fleet: -o onto the fleet file", ["fleet", "fleet.json", "-q", "-o", "fleet.json"], None),
    ("fleet: -o /dev/null", ["fleet", "fleet.json", "-q", "-o", "/dev/null"], None),
    ("#33 very hidden sheet repeating a SKU at $1", ["catalog", "validate", "quote_hidden.xlsx"], 0),
    ("#33 a SKU on two sheets", ["catalog", "validate", "quote_twice.xlsx"], 1),
    ("#33 header-only catalog", ["catalog", "validate", "header_only.csv"], 1),
    ("#33 U+202E in the scenario name", ["plan", "bidi_name.yaml", "-q"], 1),
    ("#33 bare CR in the scenario name", ["plan", "cr_name.yaml", "-q"], 1),
    ("#33 U+202E in a catalog name", ["catalog", "validate", "bidi_nic.csv"], 1),
    ("#33 NaN in a calibration (key and line)", ["plan", "ok.yaml", "-q", "--calibration", "cal_nan.json"], 1),
    ("#33 a 250-byte .xlsx name", ["plan", "ok.yaml", "-q", "-o", "out/" + "x" * 245 + ".xlsx"], 0),
    ("#32 sweep: a junk --results file", [*SWEEP, "--draws", "50", "--results", "junk.npz"], 1),
    ("#32 sweep: --results a FIFO", [*SWEEP, "--draws", "50", "--results", "out/fifo.npz"], None),
    ("#32 sweep: 1,000,000 draws", [*SWEEP, "--draws", "1000000"], 1),
    ("#32 sweep: no deadline", ["sweep", "ok.yaml", "-q", "--workers", "0"], 1),
    ("#32 sweep: unreachable --scheduler", [*SWEEP, "--scheduler", "tcp://127.0.0.1:9"], 1),
    ("#32 sweep: fleet alias bomb", ["sweep", "fleet_bomb.yaml", "-q", "--workers", "0"], None),
    ("fleet: infeasible, --time-limit 5s", ["fleet", "fleet.json", "-q", "--set", "training[0].tokens=60T",
                                             "--time-limit", "5s"], 1),
]  # fmt: skip


def snapshot(d: Path) -> dict[str, tuple[int, str]]:
    """Type and content hash of every file in d, and of the devices the cases name."""
    out = {}
    for path in [*d.rglob("*"), Path("/dev/null"), Path("/dev/full"), Path("/dev/zero"), DATABASE]:
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if stat.S_ISREG(mode) else ""
        out[str(path)] = (stat.S_IFMT(mode), digest)
    return out


def run(d: Path, name: str, args: list[str], expected: int | None) -> bool:
    """Run one case in d and print one line: ok or BAD, exit code, seconds, peak MiB, stderr bytes, message."""
    before = snapshot(d)
    rss = d.parent / "rss"
    limit = "ulimit -f 1; " if "file-size limit" in name else ""  # 1 KiB: the plan's JSON does not fit
    measure = f"/usr/bin/time -f %M -o {rss} " if Path("/usr/bin/time").exists() else ""
    shell = f"{limit}{measure}timeout 20 prlimit --as={2 << 30} {shlex.join([*PLANNER, *args])}"
    start = time.monotonic()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(["bash", "-c", shell], cwd=d, capture_output=True, env=env)
    seconds = time.monotonic() - start
    peak = f"{int(rss.read_text().split()[-1]) // 1024} MiB" if measure and rss.exists() else "?"
    after = snapshot(d)
    changed = [k for k, v in before.items() if after.get(k) != v]
    err = done.stderr.decode("utf-8", "replace")
    message = next((line for line in err.splitlines() if line.strip()), "")
    if expected == 0 and done.stdout:
        message = done.stdout.decode("utf-8", "replace").splitlines()[-1]
    code_ok = done.returncode == expected if expected is not None else done.returncode in (1, 2)
    ok = code_ok and seconds < 20 and "Traceback" not in err and len(done.stderr) < 2048 and not changed
    fields = [name, f"exit {done.returncode}", f"{seconds:.1f} s", peak, f"{len(done.stderr)} B", message[:140]]
    print(("ok  | " if ok else "BAD | ") + " | ".join(fields) + (f" | changed: {changed}" if changed else ""))
    return ok


def main() -> None:
    words = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "inputs"
        d.mkdir()
        make_inputs(d)
        results = [run(d, n, a, e) for n, a, e in CASES if not words or any(w in n for w in words)]
        print(f"{sum(results)} of {len(results)} as required")


if __name__ == "__main__":
    main()
