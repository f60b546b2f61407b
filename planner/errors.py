"""Named errors. Every user-facing problem is a PlannerError whose str() is one line naming the bad
thing and the fix; the CLI turns them into messages and exit codes, never tracebacks."""

from __future__ import annotations

from dataclasses import dataclass


class PlannerError(Exception):
    """Base of all errors the user can fix (bad input, impossible request)."""

    exit_code = 1


class UsageError(PlannerError):
    """Bad command-line input (exit code 2, like click's own usage errors)."""

    exit_code = 2


class ScenarioError(PlannerError):
    """A scenario file or option is invalid."""


class InfeasibleError(PlannerError):
    """The request cannot be met; the message says by how much and what would meet it."""


class SolverError(PlannerError):
    """The solver failed or is unavailable."""


@dataclass(frozen=True)
class CatalogProblem:
    """One problem in one catalog cell (or header, or file). row is the 1-based line/row a person sees
    in an editor or spreadsheet; None when the problem concerns the whole file."""

    file: str
    row: int | None
    column: str | None
    value: object
    message: str

    def __str__(self) -> str:
        where = self.file if self.row is None else f"{self.file}:{self.row}"
        parts = [where]
        if self.column is not None:
            value = "" if self.value is None else f" = {str(self.value)!r}"
            parts.append(f"column '{self.column}'{value}")
        parts.append(self.message)
        return ": ".join(parts)


class CatalogError(PlannerError):
    """One or more catalog problems; str() lists them one per line (each line stands alone)."""

    def __init__(self, problems: list[CatalogProblem]):
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))
