"""CPU seconds of whole `planner` commands beside the import floor, measured in one run. Not a test: run it
by hand (it rewrites the README's table with --readme).

    python bench/bench_commands.py                 # 5 runs of each command, median / min / max
    python bench/bench_commands.py --runs 3 --readme

CPU seconds are user + system time of the child process (resource.getrusage), which a machine shared with
other work inflates far less than wall time. The floor is the import of the libraries planner stands on;
issue 15's target: --version and --help under 0.3 s, each shipped example's `plan -q` and the README's
`inference` example at most floor + 0.7 s; issue 26's: a 16k-GPU plan over the shipped catalog with the layout
searched (examples/llama-405b-16k-h100.yaml) under 5 s.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLANNER = [sys.executable, "-m", "planner"]
FLOOR = [sys.executable, "-c", "import pandas, pulp, pydantic, click, openpyxl, numpy, scipy"]
WORKBOOK = str(Path(tempfile.gettempdir()) / "bench_commands_plan.xlsx")  # rewritten by each -o run
COMMANDS: list[tuple[str, list[str]]] = [
    ("import floor: pandas, pulp, pydantic, click, openpyxl, numpy, scipy", FLOOR),
    ("planner --version", [*PLANNER, "--version"]),
    ("planner --help", [*PLANNER, "--help"]),
    ("planner plan --help", [*PLANNER, "plan", "--help"]),
    *[
        (f"planner plan examples/{name} -q", [*PLANNER, "plan", f"examples/{name}", "-q"])
        for name in (
            "bloom-176b-v100.yaml",
            "llama-70b-h100.yaml",
            "gpt3-budget-power.yaml",
            "cloud-70b.yaml",
            "llama-405b-16k-h100.yaml",  # 16,384 GPUs, the layout searched: issue 26's target, under 5 s of CPU
            "deepseek-v3-nvl72.yaml",
        )
    ],
    *[  # issue 31's target: -o plan.xlsx within 0.2 s of CPU of `plan -q` (the workbook's cost curve and sheets)
        (f"planner plan examples/{name} -q -o plan.xlsx", [*PLANNER, "plan", f"examples/{name}", "-q", "-o", WORKBOOK])
        for name in ("bloom-176b-v100.yaml", "llama-70b-h100.yaml")
    ],
    ("planner inference --params 175B --latency 1s", [*PLANNER, "inference", "--params", "175B", "--latency", "1s"]),
    ("planner cloud examples/cloud-70b.yaml", [*PLANNER, "cloud", "examples/cloud-70b.yaml"]),
    ("planner fleet examples/fleet-startup.yaml -q", [*PLANNER, "fleet", "examples/fleet-startup.yaml", "-q"]),
    ("planner serve examples/serve-llama-70b.yaml", [*PLANNER, "serve", "examples/serve-llama-70b.yaml"]),
    *[
        (f"planner {line}", [*PLANNER, *line.split()])
        for line in [
            "serve --model DeepSeek-V3 --rate 50 --input-tokens 2000 --output-tokens 500 --ttft 2s --tpot 50ms"
        ]
    ],
]
# as a user runs it: Python caches compiled modules (some shells and CI images set PYTHONDONTWRITEBYTECODE,
# which makes every run compile planner's ~50 modules again, ~0.15 s that no installed copy pays)
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
MARK_BEGIN, MARK_END = "<!-- bench_commands begin -->", "<!-- bench_commands end -->"


def cpu_seconds(command: list[str]) -> float:
    """User + system seconds of one run of the command (exit status ignored: some examples exit 1)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(runs: int) -> list[tuple[str, list[float]]]:
    """(label, CPU seconds of each run) per command; the runs interleave (every command once per round, the
    floor first), so a drift of the machine's speed hits every command of a round alike."""
    samples: dict[str, list[float]] = {label: [] for label, _ in COMMANDS}
    for _, command in COMMANDS:  # one unmeasured run each: the module caches are written, disks warm
        cpu_seconds(command)
    for _ in range(runs):
        for label, command in COMMANDS:
            samples[label].append(cpu_seconds(command))
    return list(samples.items())


def table(rows: list[tuple[str, list[float]]]) -> str:
    """Median (min-max) of each command, and its excess over the floor: the median over rounds of (command
    - floor of the same round), which a machine drifting between rounds moves less than a difference of
    medians."""
    floor = rows[0][1]
    lines = ["| command | CPU s median (min-max) | over the floor |", "| --- | --- | --- |"]
    for label, runs in rows:
        excess = statistics.median([c - f for c, f in zip(runs, floor, strict=True)])
        over = "" if label.startswith("import floor") else f"{excess:+.2f}"
        lines.append(f"| `{label}` | {statistics.median(runs):.2f} ({min(runs):.2f}-{max(runs):.2f}) | {over} |")
    return "\n".join(lines)


def rewrite_readme(text: str) -> None:
    readme = ROOT / "README.md"
    content = readme.read_text(encoding="utf-8")
    block = f"{MARK_BEGIN}\n{text}\n{MARK_END}"
    pattern = re.compile(re.escape(MARK_BEGIN) + ".*?" + re.escape(MARK_END), re.S)
    if not pattern.search(content):
        raise SystemExit(f"README.md has no {MARK_BEGIN} ... {MARK_END} block to rewrite")
    readme.write_text(pattern.sub(lambda _: block, content), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--readme", action="store_true", help="rewrite the table in README.md")
    args = parser.parse_args()
    text = table(measure(args.runs))
    print(text)
    if args.readme:
        rewrite_readme(text)


if __name__ == "__main__":
    main()
