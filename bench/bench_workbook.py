"""CPU seconds of a plan's quote workbook (`plan -o plan.xlsx`) beyond the plan itself, in its parts, measured
in one process so the noise of whole commands does not hide them. Not a test: run it by hand and quote the
table (issue 31's target: `-o plan.xlsx` within 0.2 s of CPU of `plan -q` on every shipped example).

    python bench/bench_workbook.py                      # every shipped plan example, 5 repetitions
    python bench/bench_workbook.py --runs 9 examples/bloom-176b-v100.yaml

Each example is planned once; then, per repetition: the workbook's context (the bandwidth sweep and the
cost-vs-target curve, from the candidate table the plan was chosen from), the sheets (planner/report/excel.py
up to the save) and the save (pagination, openpyxl's writer, the formulas' cached values). The import of the
workbook modules (openpyxl among them) is measured once, in a fresh interpreter that has imported what
`plan -q` imports. Medians of process CPU time (time.process_time).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAN_EXAMPLES = [
    "bloom-176b-v100.yaml",
    "llama-70b-h100.yaml",
    "gpt3-budget-power.yaml",
    "gpu-choice-70b-15t.yaml",
    "llama-405b-16k-h100.yaml",
    "deepseek-v3-nvl72.yaml",
]
# what `plan -q` has imported before it writes anything, then the workbook's own modules
IMPORT_PROBE = (
    "import time, planner.answers.buy, planner.cli.plan_cmd; t = time.process_time(); "
    "import planner.report.excel; print(time.process_time() - t)"
)


def import_s() -> float:
    """CPU seconds of importing the workbook modules after what a plan imports, in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", IMPORT_PROBE], capture_output=True, text=True, check=True, cwd=ROOT)
    return float(out.stdout.strip())


def measure(example: Path, runs: int) -> dict[str, float]:
    from planner.answers.buy import run_with_table
    from planner.catalog.load import load_catalog
    from planner.cli.plan_cmd import PLAN_FLAGS, _workbook_context
    from planner.inputs.scenario import load_scenario
    from planner.model.calibration import load_calibration
    from planner.report import excel

    scenario = load_scenario(str(example), {}, {}, PLAN_FLAGS)
    catalog = load_catalog(list(scenario.catalogs))
    calibration = load_calibration(None)
    plan, planned = run_with_table(catalog, scenario, calibration)
    saved, real_save = [], excel.save

    def timed_save(workbook, path):
        start = time.process_time()
        real_save(workbook, path)
        saved.append(time.process_time() - start)

    excel.save = timed_save
    parts = {"context_s": [], "sheets_s": [], "save_s": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for _ in range(runs):
                start = time.process_time()
                context = _workbook_context(catalog, scenario, plan, calibration, None, planned)
                parts["context_s"].append(time.process_time() - start)
                start = time.process_time()
                excel.write_plan(plan, context, Path(tmp) / "plan.xlsx")
                parts["sheets_s"].append(time.process_time() - start - saved[-1])
                parts["save_s"].append(saved[-1])
    finally:
        excel.save = real_save
    return {name: statistics.median(values) for name, values in parts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("examples", nargs="*", help="plan scenarios (default: every shipped plan example)")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    examples = [Path(e) for e in args.examples] or [ROOT / "examples" / name for name in PLAN_EXAMPLES]
    imports = statistics.median(import_s() for _ in range(3))
    print(f"import of the workbook modules (openpyxl included), once per command: {imports:.3f} s")
    print(f"{'example':<28} {'context s':>9} {'sheets s':>9} {'save s':>9} {'+ import':>9}")
    for example in examples:
        r = measure(example, args.runs)
        total = r["context_s"] + r["sheets_s"] + r["save_s"] + imports
        print(
            f"{example.name:<28} {r['context_s']:>9.3f} {r['sheets_s']:>9.3f} {r['save_s']:>9.3f} {total:>9.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
