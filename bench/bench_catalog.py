"""CPU seconds and peak memory of `planner plan` as the catalog grows (issue 31), measured in one run. Not a test:
run it by hand.

    python bench/bench_catalog.py                  # 1x, 10x, 100x per kind; 1x, 3x, 10x all kinds together
    python bench/bench_catalog.py --all-factors 1 3 10 --kinds all --mode price

Each generated catalog keeps every shipped row and adds F-1 variants of every NIC, switch and server row (a
kind alone, or all three together), written as a user's --catalog folder:

  * price: the same part re-sold at another price and power (a distributor's list with several offers);
  * technical: a different part: NICs at another PCIe generation or port count, switches at another radix,
    servers with another DRAM size and price (what a catalog after the 2026 parts are added looks like).

Variants are drawn from a fixed seed, so every run plans the same catalogs. CPU seconds are user + system time
of the child (resource.getrusage), peak memory its maximum resident set; the import floor is measured beside.
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_commands import FLOOR  # the import floor, one definition (bench/ is the script's own path)

ROOT = Path(__file__).resolve().parent.parent
CATALOGS = ROOT / "catalogs"
KINDS = {"nics": "sku", "switches": "sku", "servers": "name"}


def _rows(kind: str) -> tuple[list[str], list[str], list[dict]]:
    lines = (CATALOGS / f"{kind}.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    comments = [line for line in lines if line.startswith("#")]
    reader = csv.DictReader(line for line in lines if not line.startswith("#"))
    return comments, list(reader.fieldnames or []), list(reader)


def _technical(kind: str, row: dict, rng: random.Random) -> None:
    """Change one field the model reads, to a value the row's own kind allows."""
    if kind == "nics" and not row.get("mode_of"):
        row["pcie_gen"] = str(rng.choice([4, 5, 6]))
    elif kind == "switches":
        ports = int(row["ports"])
        row["ports"] = str(rng.choice([max(8, ports // 2), ports, ports]))
    elif kind == "servers":
        dram = float(row["dram_gib"] or 1024)
        row["dram_gib"] = str(int(rng.choice([0.5, 1, 2]) * dram))


def variants(kind: str, factor: int, mode: str, rng: random.Random) -> tuple[list[str], list[str], list[dict]]:
    comments, fields, rows = _rows(kind)
    key = KINDS[kind]
    out = list(rows)
    for copy in range(1, factor):
        for row in rows:
            if kind == "nics" and row.get("mode_of"):
                continue  # a port mode belongs to its parent card
            new = dict(row)
            new[key] = f"{row[key]} v{copy}"
            new["price_usd"] = f"{float(row['price_usd']) * rng.uniform(0.9, 1.3):.0f}"
            if row.get("power_w"):
                new["power_w"] = f"{float(row['power_w']) * rng.uniform(0.9, 1.2):.1f}"
            if mode == "technical":
                _technical(kind, new, rng)
            out.append(new)
    return comments, fields, out


def write_catalog(folder: Path, kinds: list[str], factor: int, mode: str, seed: int = 31) -> dict[str, int]:
    rng = random.Random(seed)
    counts = {}
    for kind in kinds:
        comments, fields, rows = variants(kind, factor, mode, rng)
        with open(folder / f"{kind}.csv", "w", encoding="utf-8", newline="") as handle:
            handle.writelines(comments)
            writer = csv.DictWriter(handle, fieldnames=fields)
            writer.writeheader()
            writer.writerows(rows)
        counts[kind] = len(rows)
    return counts


def measure(command: list[str]) -> tuple[float, float, int]:
    """CPU seconds, peak resident MiB and the exit code of one child process."""
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)  # this child's own usage: RUSAGE_CHILDREN's peak is over all
    child.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, child.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--factors", type=int, nargs="+", default=[1, 10, 100], help="per kind alone")
    # all three kinds at 100x is ~10^6 times the designs: tens of GB today (issue 31), so not by default
    parser.add_argument("--all-factors", type=int, nargs="+", default=[1, 3, 10], help="all kinds together")
    parser.add_argument("--kinds", nargs="+", default=["nics", "switches", "servers", "all"])
    parser.add_argument("--mode", choices=["price", "technical"], default="technical")
    parser.add_argument("--example", default="examples/llama-70b-h100.yaml")
    args = parser.parse_args()
    floor, _, _ = measure(FLOOR)
    print(f"import floor {floor:.2f} s CPU; plan {args.example}, {args.mode} variants")
    print(f"{'kind':>9} {'factor':>6} {'rows':>16} {'CPU s':>7} {'over floor':>10} {'peak MiB':>9}  exit")
    for kind in args.kinds:
        for factor in args.all_factors if kind == "all" else args.factors:
            with tempfile.TemporaryDirectory() as folder:
                chosen = list(KINDS) if kind == "all" else [kind]
                counts = write_catalog(Path(folder), chosen, factor, args.mode)
                command = [sys.executable, "-m", "planner", "plan", args.example, "-q", "--catalog", folder]
                cpu, peak, code = measure(command)
            rows = "+".join(str(counts[k]) for k in chosen)
            print(f"{kind:>9} {factor:>6} {rows:>16} {cpu:7.2f} {cpu - floor:10.2f} {peak:9.0f}  {code}")


if __name__ == "__main__":
    main()
