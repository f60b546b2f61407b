"""Named errors. Every user-facing problem is a PlannerError whose str() is one line naming the bad
thing and the fix; the CLI turns them into messages and exit codes, never tracebacks."""

from __future__ import annotations

from dataclasses import dataclass

from planner.base.limits import MAX_ERROR_LINES, short


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


def in_field(source: str, where: str, lookup):
    """lookup(), or a ScenarioError naming the file and the field: "s.yaml: constraints.gpus[0]: unknown GPU
    'H1000': did you mean H100?" (a message that already starts with the field is not prefixed twice)."""
    try:
        return lookup()
    except PlannerError as exc:
        message = str(exc)
        prefix = "" if message.startswith(f"{where}.") else f"{where}: "
        raise ScenarioError(f"{source}: {prefix}{message}") from None


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
            value = "" if self.value is None else f" = {_quoted(self.value)}"
            parts.append(f"column '{self.column}'{value}")
        parts.append(self.message)
        return ": ".join(parts)


def _quoted(value: object) -> str:
    """The cell as the person typed it, quoted and cut to MAX_VALUE_CHARS (a cell may be 100k digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        return short(value)
    return short(value if isinstance(value, str) else str(value))


class CatalogError(PlannerError):
    """One or more catalog problems; str() lists them one per line (each line stands alone), the first
    MAX_ERROR_LINES of them and then how many more."""

    def __init__(self, problems: list[CatalogProblem]):
        self.problems = list(problems)
        lines = [str(p) for p in self.problems[:MAX_ERROR_LINES]]
        if len(self.problems) > MAX_ERROR_LINES:
            lines.append(f"... and {len(self.problems) - MAX_ERROR_LINES:,} more problems")
        super().__init__("\n".join(lines))
