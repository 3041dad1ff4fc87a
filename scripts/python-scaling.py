#!/usr/bin/env python3
"""The README's scaling figure for the Python package (issue 30): the same sweep of 204
points (python/tests/test_sweep.py's job, larger: 64k-256k random reads a point) on a LocalCluster of 1 and then 2 worker
processes, wall time of each and their ratio, the load average, and the pilot's estimate
beside the CPU time the workers measured.

    python scripts/python-scaling.py      # with `pip install '.[test]'` done
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import distributed

import iosched

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python" / "tests"))
from test_sweep import JOB  # noqa: E402

# 3 schedulers x 17 seeds x 2 block sizes x 2 sizes = 204 points.
SPEC = """jobs = 'two.fio'
devices = 'fixed'
schedulers = ['noop', 'deadline', 'cfq']
seeds = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]
[env]
BS = ['4k', '8k']
SIZE = ['128m', '256m']
"""


def cpu_seconds() -> float:
    return time.process_time()


def one(spec: Path, workers: int) -> tuple[float, float, iosched.Estimate]:
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            before = sum(client.run(cpu_seconds).values())
            started = time.monotonic()
            estimate = iosched.estimate(spec)
            iosched.sweep(spec, client=client, quiet=True)
            wall = time.monotonic() - started
            used = sum(client.run(cpu_seconds).values()) - before
    return wall, used, estimate


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    (folder / "two.fio").write_text(JOB)
    spec = folder / "spec.toml"
    spec.write_text(SPEC)
    walls = {}
    for workers in (1, 2):
        load = os.getloadavg()[0]
        wall, used, estimate = one(spec, workers)
        walls[workers] = wall
        print(f"{workers} worker(s): {wall:.1f} s wall, workers' CPU {used:.1f} s, "
              f"estimate {estimate.core_seconds:.1f} core-s ({estimate.requests:.3g} requests), "
              f"load average {load:.1f} before")
    print(f"ratio 1 worker / 2 workers: {walls[1] / walls[2]:.2f}; "
          f"load average now {os.getloadavg()[0]:.1f}; {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
