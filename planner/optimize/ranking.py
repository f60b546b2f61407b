"""The next-best distinct configurations, read from a table priced at each configuration's optimum.

Where each configuration's cost does not depend on the others (one job on one homogeneous cluster, one
rented offering, one serving configuration) the k-th best distinct plan is exactly the k-th row of the table
sorted by objective after keeping each group's best row: no re-solve with no-good cuts is needed. This is
the one alternatives mechanism of the buy, rent and serve models."""

from __future__ import annotations

import pandas as pd

from planner.tables.buy import matching


def best_per_group(priced: pd.DataFrame, group: list[str]) -> pd.DataFrame:
    """Each group's cheapest row, cheapest group first (`priced` is sorted by objective)."""
    return priced.drop_duplicates(group, keep="first")


def next_best(priced: pd.DataFrame, group: list[str], count: int, exclude: dict | None = None) -> pd.DataFrame:
    """The best rows of the `count` cheapest groups other than `exclude` (a group's column values)."""
    bests = best_per_group(priced, group)
    if exclude is not None:
        bests = bests[~matching(bests, exclude)]
    return bests.head(max(count, 0))


def best_per_value(priced: pd.DataFrame, column: str, skip=()) -> list[tuple[object, object]]:
    """(value, index label of its cheapest row) for each value of `column`, in sorted order of the values."""
    firsts = priced[column].drop_duplicates(keep="first")
    return sorted((v, at) for at, v in firsts.items() if v not in skip and not pd.isna(v))
