"""One solver convention for every model: build with pulp, solve in-process where pulp allows (HiGHS through
highspy; CBC as PuLP bundles it otherwise), read the status, and return a typed result. A model that ends
without a solution is an error with advice, never an assumption."""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass

import pulp

from planner.base.errors import SolverError

SOLVERS = ("auto", "highs", "cbc")
EXACT_GAP = 0.0  # the default: the optimum, not within 1e-4 of it (HiGHS' default relative gap)


@dataclass(frozen=True)
class SolveResult:
    """What the solver said: status "optimal", "feasible" (stopped by the time limit or the gap with a
    solution) or "infeasible"; the solver used, the relative gap asked for, wall seconds, the objective, and
    the threads it searched with (None: the solver's default, one)."""

    status: str
    solver: str
    gap: float
    seconds: float
    objective: float | None
    threads: int | None = None

    @property
    def solved(self) -> bool:
        return self.status in ("optimal", "feasible")


class _QuietHiGHS(pulp.HiGHS):
    """pulp's in-process HiGHS, without the banner highspy prints on stdout when a solver is created (msg=False
    only silences the solve); stdout carries the program's answer, --json included."""

    def createAndConfigureSolver(self, lp):
        with _c_stdout_silenced():
            super().createAndConfigureSolver(lp)


@contextlib.contextmanager
def _c_stdout_silenced():
    try:
        fd = sys.__stdout__.fileno()
    except (AttributeError, OSError, ValueError):  # no real stdout (embedded use): nothing to silence
        yield
        return
    sys.__stdout__.flush()
    saved, devnull = os.dup(fd), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
        yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)
        os.close(devnull)


def highs_available() -> bool:
    return pulp.HiGHS(msg=False).available()


def resolve(name: str) -> str:
    """The solver behind a name: "auto" is HiGHS when highspy is installed, else CBC."""
    if name == "auto":
        return "highs" if highs_available() else "cbc"
    if name not in SOLVERS:
        raise SolverError(f"unknown solver {name!r}; choose one of {', '.join(SOLVERS)}")
    if name == "highs" and not highs_available():
        raise SolverError("--solver highs needs highspy: pip install highspy (or use --solver cbc)")
    return name


def make_solver(
    name: str,
    time_limit_s: float | None = None,
    gap: float | None = None,
    log_path: str | None = None,
    threads=None,
    *,
    lp: bool = False,
    warm_start: bool = False,
):
    """log_path: where CBC writes its log (the proven bound is read from it; HiGHS reports it in-process).
    lp: solve the LP relaxation (integrality dropped). warm_start: CBC's MIP start from the variables' current
    values (pulp's HiGHS takes none)."""
    name = resolve(name)
    gap = EXACT_GAP if gap is None else gap
    if name == "highs":
        if warm_start:
            raise ValueError("a warm start is CBC's (pulp's HiGHS interface takes none)")
        return _QuietHiGHS(mip=not lp, msg=False, timeLimit=time_limit_s, gapRel=gap, threads=threads)
    with warnings.catch_warnings():  # CBC as bundled with PuLP 3.x (pyproject pins pulp < 4, which unbundles it)
        warnings.simplefilter("ignore", DeprecationWarning)
        options = {"logPath": log_path} if log_path else {}
        # CBC's parallel search is opportunistic (two runs may stop at different plans within the gap); its
        # repeatable "-threads 100+n" mode crashes CBC 2.10.3 on some fleet models (bench_fleet 8x12x8), so
        # callers say so instead (fleet.repeat_note)
        return pulp.PULP_CBC_CMD(
            mip=not lp, msg=False, timeLimit=time_limit_s, gapRel=gap, threads=threads, warmStart=warm_start, **options
        )


def solve(
    problem: pulp.LpProblem,
    solver: str = "auto",
    time_limit_s: float | None = None,
    gap=None,
    log_path: str | None = None,
    threads: int | None = None,
    *,
    lp: bool = False,
    warm_start: bool = False,
) -> SolveResult:
    """Solve and read the status. Raises SolverError when the solver stops without any solution for a
    reason other than infeasibility (time limit, numerical trouble). lp and warm_start: as make_solver."""
    name = resolve(solver)
    # a timed CBC solve always keeps a log: its "infeasible" may be a pre-processing the limit cut short
    own_log = temp_log() if name == "cbc" and time_limit_s is not None and log_path is None else None
    log_path = log_path or own_log
    start = time.perf_counter()
    try:
        status = problem.solve(make_solver(name, time_limit_s, gap, log_path, threads, lp=lp, warm_start=warm_start))
        cut_short = name == "cbc" and time_limit_s is not None and _preprocessing_cut_short(log_path, time_limit_s)
    except pulp.PulpSolverError as exc:  # the solver did not start or died: say so in one line
        first = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise SolverError(f"solver {name} failed to run ({first}); try the other solver (--solver)") from None
    finally:
        if own_log:
            os.unlink(own_log)
    seconds = time.perf_counter() - start
    gap = EXACT_GAP if gap is None else gap
    infeasible = pulp.LpStatus[status] == "Infeasible" or problem.sol_status == pulp.LpSolutionInfeasible
    if infeasible and not cut_short:
        return SolveResult("infeasible", name, gap, seconds, None, threads)
    if infeasible or problem.sol_status not in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
        said = (
            "stopped in pre-processing at the time limit"
            if infeasible
            else f"ended with status {pulp.LpStatus[status]!r}"
        )
        raise SolverError(
            f"solver {name} {said} and no feasible solution; "
            "raise --time-limit or try the other solver (--solver cbc|highs)"
        )
    optimal = problem.sol_status == pulp.LpSolutionOptimal
    objective = pulp.value(problem.objective)
    return SolveResult("optimal" if optimal else "feasible", name, gap, seconds, objective, threads)


def temp_log() -> str:
    """A fresh empty file for a CBC log (the caller removes it)."""
    fd, path = tempfile.mkstemp(prefix="planner-cbc-", suffix=".log")
    os.close(fd)
    return path


def _preprocessing_cut_short(log_path: str, time_limit_s: float) -> bool:
    """CBC 2.10 reports "Pre-processing says infeasible or unbounded" when the time limit stops its cut
    generators (a 6x8x6 bench_fleet model with a feasible LP at 0.01 s; 100x40x30 at 1 s), so that verdict
    counts only when CBC's own clock ended inside the limit. An LP proved infeasible is reported otherwise."""
    text = _log_text(log_path)
    if text is None or "Pre-processing says infeasible" not in text:
        return False
    wall = re.findall(r"Wallclock seconds\):\s*([0-9.eE+-]+)", text)
    return not wall or float(wall[-1]) >= time_limit_s


def _log_text(log_path: str) -> str | None:
    """A CBC log's text (None when it cannot be read)."""
    try:
        with open(log_path, encoding="utf-8", errors="replace") as log:
            return log.read()
    except OSError:
        return None


def new_var(
    problem: pulp.LpProblem, name: str, low: float | None = 0, up: float | None = None, cat: str = "Integer"
) -> pulp.LpVariable:
    """Variables owned by the problem (PuLP >= 3.3's add_variable; plain LpVariable before it)."""
    if hasattr(problem, "add_variable"):
        return problem.add_variable(name, low, up, cat)
    return pulp.LpVariable(name, low, up, cat)


def var_name(*parts: object) -> str:
    """Solver-safe variable names; results are read through the Python objects, never by parsing names."""
    return re.sub(r"[^A-Za-z0-9_]", "_", "_".join(str(p) for p in parts))


@contextlib.contextmanager
def bounded(bounds: dict[pulp.LpVariable, tuple[float, float]]):
    """Within the block each variable has the (low, up) bounds given; its own bounds come back after."""
    saved = [(var, var.lowBound, var.upBound) for var in bounds]
    for var, (low, up) in bounds.items():
        var.lowBound, var.upBound = low, up
    try:
        yield
    finally:
        for var, low, up in saved:
            var.lowBound, var.upBound = low, up


def fixed(values: dict[pulp.LpVariable, float]):
    """Within the block each variable is fixed to its value (both bounds); its own bounds come back after."""
    return bounded({var: (value, value) for var, value in values.items()})


def integer_value(expr) -> int:
    value = pulp.value(expr)
    return 0 if value is None else int(round(value))


def chosen(binaries: dict) -> list:
    """Keys of the binaries the solver set to 1 (read as round(v) == 1)."""
    return [key for key, var in binaries.items() if round(pulp.value(var) or 0) == 1]


def proven_gap(problem: pulp.LpProblem, result: SolveResult, log_path: str | None = None) -> float | None:
    """The relative gap the solver proved between its solution and its bound (None when unknown): HiGHS
    reports it in-process; CBC prints it in the log written to log_path (relative to the real objective:
    CBC reads the model without the objective's constant term)."""
    if not result.solved:
        return None
    if result.solver == "highs" and getattr(problem, "solverModel", None) is not None:
        info = problem.solverModel.getInfo()
        return max(0.0, float(info.mip_gap)) if info.mip_gap < 1e30 else 0.0
    if log_path is None:
        return 0.0 if result.status == "optimal" and result.gap == 0 else None
    text = _log_text(log_path)
    if text is None:
        return None
    real = abs(result.objective or 0.0) or 1e-9
    stopped = re.findall(r"Exiting as integer gap of\s*([-+0-9.eE]+)", text)
    if stopped:
        return max(0.0, float(stopped[-1]) / real)
    bound = re.findall(r"Lower bound:\s*([-+0-9.eE]+)", text)
    objective = re.findall(r"Objective value:\s*([-+0-9.eE]+)", text)
    if bound and objective:
        return max(0.0, (float(objective[-1]) - float(bound[-1])) / real)
    return 0.0 if "Optimal solution found" in text else None
