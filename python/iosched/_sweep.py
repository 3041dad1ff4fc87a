"""Sweeps on Dask distributed, or any ``concurrent.futures.Executor``.

The spec is expanded by the native module exactly as ``iosched sweep`` expands it, into one
run description per point. The pilots (the first point of each scheduler and device) run
here first: their cost gives the estimate printed before the rest start (and their rows are
kept). The others go out
as tasks, several points to a task when a point costs less than about 100 ms, so the
scheduler's per-task overhead (about 1 ms on Dask) stays small. A point's rows depend only
on its description and seed, so a task a lost worker had is simply run again (Dask does so
by itself); rows come back as tasks finish and are made into the CLI's table.
"""

from __future__ import annotations

import concurrent.futures
import io
import json
import math
import os
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

from . import _iosched

if TYPE_CHECKING:
    import pandas

SweepInput = Union[str, "os.PathLike[str]", Mapping[str, Any]]

#: Seconds of work a task should hold at least (Dask's own guidance: tasks over ~100 ms).
TASK_SECONDS = 0.1


@dataclass(frozen=True)
class Estimate:
    """A sweep's expected cost, from its pilot points (see ``iosched sweep``'s docs)."""

    points: int
    requests: float
    core_seconds: float
    requests_per_second: float
    memory_bytes: int | None
    pilots: int
    text: str


def _source(spec: SweepInput) -> tuple[str, str | None]:
    """The native module's view of a spec: its path, and a dict's JSON (read as TOML)."""
    if isinstance(spec, Mapping):
        # Job files in a dict are relative to the working directory, as a file's are to it.
        return (os.path.join(os.getcwd(), "<dict>"), json.dumps(spec))
    return (os.fspath(spec), None)


def _pilot(source: tuple[str, str | None]) -> tuple[Estimate, set[int], list[str]]:
    text, figures, done, rows = _iosched.sweep_pilot(*source)
    points, requests, seconds, rate, memory, pilots = figures
    return Estimate(points, requests, seconds, rate, memory, pilots, text), set(done), rows


def estimate(spec: SweepInput) -> Estimate:
    """Runs the sweep's pilot points and estimates the whole from them."""
    return _pilot(_source(spec))[0]


def _measure_batch(batch: list[tuple[int, str]]) -> list[str]:
    """One task: its points' rows (wire lines). Runs on a worker."""
    return _iosched.sweep_measure(batch)


def _batches(
    specs: list[str], done: set[int], per_point_s: float, workers: int
) -> list[list[tuple[int, str]]]:
    """The points not in `done`, in batches worth ~TASK_SECONDS each, but at least 4 tasks
    per worker where there are enough points, so the load evens out."""
    rest = [(index, spec) for index, spec in enumerate(specs) if index not in done]
    if not rest:
        return []
    wanted = math.ceil(TASK_SECONDS / max(per_point_s, 1e-6))
    spread = math.ceil(len(rest) / (4 * max(workers, 1)))
    size = max(1, min(wanted, spread))
    return [rest[i : i + size] for i in range(0, len(rest), size)]


class _Progress:
    """done/total points on stderr, with elapsed time and an ETA at the pace so far."""

    def __init__(self, total: int, shown: bool) -> None:
        self.total, self.done, self.shown = total, 0, shown
        self.started = time.monotonic()

    def add(self, points: int) -> None:
        self.done += points
        if not self.shown:
            return
        elapsed = time.monotonic() - self.started
        eta = elapsed * (self.total - self.done) / max(self.done, 1)
        filled = int(30 * self.done / max(self.total, 1))
        bar = "#" * filled + "-" * (30 - filled)
        sys.stderr.write(
            f"\r[{bar}] {self.done}/{self.total} points, {elapsed:.0f} s elapsed, ETA {eta:.0f} s"
        )
        sys.stderr.flush()

    def finish(self) -> None:
        if self.shown:
            sys.stderr.write("\n")


def _workers_of(client: Any) -> int:
    try:
        return max(1, len(client.scheduler_info()["workers"]))
    except Exception:  # a client of an older Dask, or not yet connected: any count works
        return 1


def _run_dask(client: Any, batches: list[list[tuple[int, str]]]) -> Iterator[list[str]]:
    from distributed import as_completed

    futures = client.map(_measure_batch, batches, pure=True)
    try:
        for future in as_completed(futures):
            yield future.result()
    finally:
        client.cancel(futures)


def _run_executor(
    executor: concurrent.futures.Executor, batches: list[list[tuple[int, str]]]
) -> Iterator[list[str]]:
    futures = [executor.submit(_measure_batch, batch) for batch in batches]
    try:
        for future in concurrent.futures.as_completed(futures):
            yield future.result()
    finally:
        for future in futures:
            future.cancel()


def _gather(
    source: tuple[str, str | None],
    client: Any,
    executor: concurrent.futures.Executor | None,
    progress: bool | None,
    quiet: bool,
) -> list[str]:
    specs = _iosched.sweep_specs(*source)
    estimated, done, rows = _pilot(source)
    if not quiet:
        print(f"iosched: {estimated.text}", file=sys.stderr)
    shown = sys.stderr.isatty() if progress is None else progress
    bar = _Progress(len(specs), shown and not quiet)
    bar.add(len(done))
    per_point = estimated.core_seconds / max(estimated.points, 1)
    if executor is not None:
        workers = getattr(executor, "_max_workers", None) or os.cpu_count() or 1
        batches = _batches(specs, done, per_point, workers)
        results = _run_executor(executor, batches)
        return _collect(rows, results, batches, bar)
    if client is not None:
        batches = _batches(specs, done, per_point, _workers_of(client))
        return _collect(rows, _run_dask(client, batches), batches, bar)
    return _run_local(specs, done, rows, per_point, bar)


def _run_local(
    specs: list[str], done: set[int], rows: list[str], per_point: float, bar: _Progress
) -> list[str]:
    """No client and no executor: a LocalCluster of this machine's cores, or without Dask,
    a process pool."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        with concurrent.futures.ProcessPoolExecutor() as pool:
            batches = _batches(specs, done, per_point, os.cpu_count() or 1)
            return _collect(rows, _run_executor(pool, batches), batches, bar)
    with LocalCluster(processes=True, threads_per_worker=1) as cluster, Client(cluster) as client:
        batches = _batches(specs, done, per_point, _workers_of(client))
        return _collect(rows, _run_dask(client, batches), batches, bar)


def _collect(
    rows: list[str],
    results: Iterator[list[str]],
    batches: list[list[tuple[int, str]]],
    bar: _Progress,
) -> list[str]:
    sizes = {batch[0][0]: len(batch) for batch in batches}
    gathered = list(rows)
    for batch_rows in results:
        gathered.extend(batch_rows)
        first = json.loads(batch_rows[0])["point"] if batch_rows else None
        bar.add(sizes.get(first, 1) if first is not None else 1)
    bar.finish()
    return gathered


def sweep_rows(
    spec: SweepInput,
    client: Any = None,
    executor: concurrent.futures.Executor | None = None,
    progress: bool | None = None,
    quiet: bool = False,
) -> list[str]:
    """Every point's rows as wire lines (what ``iosched sweep --dask`` reads back)."""
    return _gather(_source(spec), client, executor, progress, quiet)


def sweep_table(
    spec: SweepInput,
    client: Any = None,
    executor: concurrent.futures.Executor | None = None,
    format: str = "csv",
    progress: bool | None = None,
    quiet: bool = False,
) -> str:
    """The sweep's table as ``iosched sweep`` prints it: ``csv`` or ``json`` (JSON lines)."""
    source = _source(spec)
    rows = _gather(source, client, executor, progress, quiet)
    return _iosched.sweep_table(source[0], source[1], rows, format)


def _exact(pandas: Any) -> dict[str, Any]:
    """pandas 3 parses floats exactly by default and deprecates the option pandas 2 needs."""
    major = int(pandas.__version__.split(".")[0])
    return {"float_precision": "round_trip"} if major < 3 else {}


def sweep(
    spec: SweepInput,
    client: Any = None,
    executor: concurrent.futures.Executor | None = None,
    progress: bool | None = None,
    quiet: bool = False,
) -> pandas.DataFrame:
    """Runs every point of a sweep spec (a TOML path, or a dict with the same keys) and
    returns ``iosched sweep``'s table as a DataFrame, as ``pandas.read_csv`` reads its CSV.

    ``client``: a ``distributed.Client`` (a LocalCluster's, ``Client("tcp://host:8786")``,
    dask-jobqueue's); ``executor``: any ``concurrent.futures.Executor`` instead. With
    neither, a LocalCluster of this machine's cores. The estimate is printed on stderr
    before the points go out (``quiet=True``: not); ``progress``: a progress line on stderr
    (default: when stderr is a terminal).
    """
    import pandas

    text = sweep_table(spec, client, executor, "csv", progress, quiet)
    return pandas.read_csv(io.StringIO(text), **_exact(pandas))
