"""Where a sweep's tasks run: on Dask (dask.distributed), a local cluster of worker processes on this machine's
cores or an existing cluster given its scheduler address; or, with no workers, in this process. Dask does the
pooling, scheduling and retries; this module only opens and closes the client and maps one function over tasks.

A task's result depends on its input alone (the sweep seeds each draw by its index), so results are the same
on any number of workers; they arrive in completion order and `on_result` gets each with its task."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from planner.base.errors import PlannerError

RETRIES = 2  # a task a worker lost (it died or was killed) is run again on another, twice at most
CONNECT_TIMEOUT_S = 10


class EngineError(PlannerError):
    """The Dask cluster could not be started or reached."""


@dataclass
class Engine:
    """Maps fn(shared, task) over tasks; `shared` is sent to each worker once."""

    client: Any = None  # a dask.distributed.Client, or None: in this process
    description: str = "in this process"

    def map(self, fn: Callable, shared: Any, tasks: list, on_result: Callable[[Any, Any], None]) -> None:
        if self.client is None:
            for task in tasks:
                on_result(task, fn(shared, task))
            return
        from dask.distributed import as_completed

        if not tasks:
            return
        big = self.client.scatter(shared, broadcast=True, hash=False)
        futures = self.client.map(fn, [big] * len(tasks), tasks, pure=False, retries=RETRIES)
        task_of = {f.key: t for f, t in zip(futures, tasks, strict=True)}
        try:
            for future, result in as_completed(futures, with_results=True):
                on_result(task_of[future.key], result)
        finally:
            self.client.cancel(futures)


@contextmanager
def engine(workers: int | None = None, scheduler: str | None = None) -> Iterator[Engine]:
    """A Dask client for the duration: `scheduler` (an address such as tcp://10.0.0.5:8786) to use an existing
    cluster, else a local cluster of `workers` processes (default: the machine's cores); workers=0 runs the
    tasks in this process without Dask."""
    if scheduler is None and workers == 0:
        yield Engine()
        return
    from dask.distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError) as exc:
            raise EngineError(
                f"--scheduler {scheduler}: no Dask scheduler answered within {CONNECT_TIMEOUT_S} s ({exc}); "
                "start one (dask scheduler) or leave --scheduler out to use this machine's cores"
            ) from None
        with client:
            count = len(client.scheduler_info().get("workers", {}))
            yield Engine(client, f"Dask scheduler {scheduler} ({count} workers)")
        return
    count = workers or os.cpu_count() or 1
    cluster = LocalCluster(
        n_workers=count,
        threads_per_worker=1,  # numpy does the arithmetic; one thread per process keeps draws independent
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    )
    with cluster, Client(cluster) as client:
        yield Engine(client, f"Dask local cluster ({count} worker process{'es' if count != 1 else ''})")
