"""Where a sweep's tasks run: on Dask (dask.distributed), a local cluster of worker processes on this machine's
cores or an existing cluster given its scheduler address; or, with no workers, in this process. Dask does the
pooling, scheduling and retries; this module only opens and closes the client and maps one function over tasks.

A task's result depends on its input alone (the sweep seeds each draw by its index), so results are the same
on any number of workers; they arrive in completion order and `on_result` gets each with its task."""

from __future__ import annotations

import logging
import os
import signal
import threading
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


QUIET_LOGGERS = ("distributed", "asyncio", "tornado")  # a cluster closed mid-task logs tracebacks through these


@contextmanager
def _quiet_dask() -> Iterator[None]:
    """The cluster's own log lines off for the duration: a cluster closed by Ctrl-C or SIGTERM while a task or a
    scatter runs logs tracebacks (closed streams, lost workers) that say nothing to a user."""
    loggers = [logging.getLogger(name) for name in QUIET_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


@contextmanager
def _workers_ignore_interrupts() -> Iterator[None]:
    """Ctrl-C and a closed terminal signal the whole process group: the worker processes started in this block
    inherit SIGINT and SIGHUP ignored (an ignored signal stays ignored across exec, and Python then installs no
    KeyboardInterrupt handler), so only this process stops, closes the cluster and keeps the finished draws."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


@contextmanager
def engine(workers: int | None = None, scheduler: str | None = None) -> Iterator[Engine]:
    """A Dask client for the duration: `scheduler` (an address such as tcp://10.0.0.5:8786) to use an existing
    cluster, else a local cluster of `workers` processes (default: the machine's cores); workers=0 runs the
    tasks in this process without Dask."""
    if scheduler is None and workers == 0:
        yield Engine()
        return
    with _quiet_dask():
        if scheduler is not None:
            yield from _remote(scheduler)
        else:
            yield from _local(workers or os.cpu_count() or 1)


def _remote(scheduler: str) -> Iterator[Engine]:
    from dask.distributed import Client

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


def _local(count: int) -> Iterator[Engine]:
    from dask.distributed import Client, LocalCluster

    try:
        with _workers_ignore_interrupts():
            cluster = LocalCluster(
                n_workers=count,
                threads_per_worker=1,  # numpy does the arithmetic; one thread per process keeps draws independent
                processes=True,
                dashboard_address=None,
                silence_logs=logging.CRITICAL,  # a task's error reaches us through its future; the rest is noise
            )
    except (OSError, RuntimeError, TimeoutError) as exc:
        raise EngineError(
            f"could not start a local Dask cluster of {count} workers ({type(exc).__name__}: {exc}); try fewer "
            "--workers, or --workers 0 to run in this process"
        ) from None
    with cluster, Client(cluster) as client:
        yield Engine(client, f"Dask local cluster ({count} worker process{'es' if count != 1 else ''})")
