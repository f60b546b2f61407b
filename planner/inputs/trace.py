"""A request trace for `planner serve --trace FILE.csv`: one row per request with its input and output tokens
(columns input_tokens and output_tokens; prompt_tokens and completion_tokens, as OpenAI-style logs name them,
are read too). The serving model takes the trace's means and coefficients of variation (planner/model/
queueing.py: gamma-distributed lengths); the arrival rate stays the scenario's."""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path

from planner.base import limits as L
from planner.base.errors import ScenarioError
from planner.base.fileio import InputFileError, read_text

NAMES = {"input_tokens": ("input_tokens", "prompt_tokens"), "output_tokens": ("output_tokens", "completion_tokens")}


@dataclass(frozen=True)
class Trace:
    requests: int
    input_tokens: int  # means, rounded
    output_tokens: int
    input_cv: float
    output_cv: float


def read_trace(path: str | Path) -> Trace:
    """The trace's request count, mean lengths and their coefficients of variation, or a one-line
    ScenarioError naming the file, row and column."""
    try:
        text = read_text(path, L.MAX_TRACE_BYTES, "trace")
    except InputFileError as exc:
        raise ScenarioError(str(exc)) from None
    rows = csv.reader(io.StringIO(text, newline=""))
    header = next(rows, None)
    if header is None:
        raise ScenarioError(f"{path}: the trace is empty: a header with input_tokens,output_tokens, a row per request")
    lowered = [h.strip().lower() for h in header]
    columns = {}
    for field, names in NAMES.items():
        found = [i for i, h in enumerate(lowered) if h in names]
        if not found:
            raise ScenarioError(f"{path}:1: no {field} column ({' or '.join(names)}); the header is {L.short(header)}")
        columns[field] = found[0]
    sums = {f: [0.0, 0.0] for f in NAMES}  # sum and sum of squares
    count = 0
    for number, row in enumerate(rows, start=2):
        if not any(cell.strip() for cell in row):
            continue
        count += 1
        if count > L.MAX_TRACE_ROWS:
            raise ScenarioError(f"{path}: more than {L.MAX_TRACE_ROWS:,} requests; give a sample of them")
        for field, i in columns.items():
            cell = row[i].strip() if i < len(row) else ""
            value = _tokens(cell)
            if value is None:
                raise ScenarioError(
                    f"{path}:{number}: {header[i].strip()} = {L.short(cell)}: a whole number of tokens from 1 to "
                    f"{L.MAX_SEQ_LEN:,}"
                )
            sums[field][0] += value
            sums[field][1] += value * value
    if count == 0:
        raise ScenarioError(f"{path}: the trace has a header but no requests")
    means, cvs = {}, {}
    for field, (total, squares) in sums.items():
        mean = total / count
        variance = max(squares / count - mean * mean, 0.0)
        means[field], cvs[field] = mean, math.sqrt(variance) / mean
        if cvs[field] > L.MAX_LENGTH_CV:
            raise ScenarioError(
                f"{path}: the {field} vary more than the serving model covers (coefficient of variation "
                f"{cvs[field]:.1f} > {L.MAX_LENGTH_CV:g}); split the trace by request class and plan each"
            )
    return Trace(
        count,
        max(1, round(means["input_tokens"])),
        max(1, round(means["output_tokens"])),
        round(cvs["input_tokens"], 4),
        round(cvs["output_tokens"], 4),
    )


def _tokens(cell: str) -> int | None:
    """A cell's token count (8, 8.0), or None when it is not a whole number in range."""
    try:
        value = float(cell)
    except ValueError:
        return None
    if not math.isfinite(value) or value != int(value) or not 1 <= value <= L.MAX_SEQ_LEN:
        return None
    return int(value)
