"""iosched.sweep on Dask against `iosched sweep`: a 252-point sweep on a LocalCluster of two
worker processes gives the CLI's table; a worker SIGKILLed mid-sweep loses no point; the
CLI's --dask goes through this package; an Executor works as well as a Client."""

from __future__ import annotations

import concurrent.futures
import io
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pandas
import pytest

import iosched
from conftest import run_cli

distributed = pytest.importorskip("distributed")

# Two weighted cgroups reading at random on the simulated `fixed` device: cheap points.
JOB = """[global]
ioengine=libaio
direct=1
rw=randread
bs=${BS}
iodepth=2
size=${SIZE}

[heavy]
cgroup=heavy
cgroup_weight=800

[light]
cgroup=light
cgroup_weight=200
"""

# 3 schedulers x 4 block sizes x 3 sizes x 7 seeds = 252 points.
SPEC = """title = "python sweep"
jobs = 'two.fio'
devices = 'fixed'
schedulers = ['noop', 'deadline', 'cfq']
seeds = [1, 2, 3, 4, 5, 6, 7]
[env]
BS = ['4k', '8k', '16k', '64k']
SIZE = ['256k', '512k', '1m']
"""


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sweep")
    (folder / "two.fio").write_text(JOB)
    path = folder / "spec.toml"
    path.write_text(SPEC)
    return path


@pytest.fixture(scope="module")
def cli_csv(cli: Path, spec: Path) -> str:
    return run_cli(cli, "sweep", str(spec), "--eta", "never").stdout


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            yield client


def _read(text: str) -> pandas.DataFrame:
    return pandas.read_csv(io.StringIO(text), **iosched._sweep._exact(pandas))


def test_a_252_point_sweep_on_two_workers_is_the_clis_table(
    client, spec: Path, cli_csv: str
) -> None:
    assert len(client.scheduler_info()["workers"]) == 2
    frame = iosched.sweep(spec, client=client, quiet=True)
    assert frame["seed"].nunique() * 36 == 252
    assert len(frame) == 252 * 5, "two jobs, two cgroups and the total per point"
    pandas.testing.assert_frame_equal(frame, _read(cli_csv), check_exact=True)
    assert iosched.sweep_table(spec, client=client, quiet=True) == cli_csv


def test_a_dict_spec_and_an_executor_give_the_same_table(spec: Path, cli_csv: str) -> None:
    as_dict = {
        "title": "python sweep",
        "jobs": str(spec.parent / "two.fio"),
        "devices": "fixed",
        "schedulers": ["noop", "deadline", "cfq"],
        "seeds": [1, 2, 3, 4, 5, 6, 7],
        "env": {"BS": ["4k", "8k", "16k", "64k"], "SIZE": ["256k", "512k", "1m"]},
    }
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        table = iosched.sweep_table(as_dict, executor=pool, quiet=True)
    # The jobfile column holds the path as given; the figures are the CLI's.
    ours, theirs = _read(table), _read(cli_csv)
    pandas.testing.assert_frame_equal(ours.drop(columns="jobfile"),
                                      theirs.drop(columns="jobfile"), check_exact=True)


def test_a_worker_killed_mid_sweep_loses_no_point(client, spec: Path, cli_csv: str) -> None:
    pids = client.run(os.getpid)
    killed: list[int] = []

    def kill_a_busy_worker() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            busy = [w for w, tasks in client.processing().items() if tasks and w in pids]
            if busy:
                os.kill(pids[busy[0]], signal.SIGKILL)
                killed.append(pids[busy[0]])
                return
            time.sleep(0.005)

    killer = threading.Thread(target=kill_a_busy_worker)
    killer.start()
    table = iosched.sweep_table(spec, client=client, quiet=True)
    killer.join()
    assert killed, "no worker was busy to kill"
    with pytest.raises(ProcessLookupError):
        os.kill(killed[0], 0)
    assert table == cli_csv


def test_the_cli_sweeps_on_dask_through_python(cli: Path, spec: Path, cli_csv: str,
                                               client) -> None:
    address = client.scheduler.address
    env = {**os.environ, "IOSCHED_PYTHON": sys.executable}
    done = run_cli(cli, "sweep", str(spec), "--dask", address, "--eta", "never", env=env)
    assert done.stdout == cli_csv
    assert "estimate: 252 points" in done.stderr
    missing = {**os.environ, "IOSCHED_PYTHON": "/nonexistent/python3"}
    refused = run_cli(cli, "sweep", str(spec), "--dask", address, env=missing, check=False)
    assert refused.returncode == 2
    assert "--dask needs Python 3.11+ with the iosched package" in refused.stderr
    no_package = {**os.environ, "IOSCHED_PYTHON": sys.executable, "PYTHONNOUSERSITE": "1",
                  "PYTHONPATH": ""}
    no_package["PYTHONHOME"] = "/nonexistent"
    broken = run_cli(cli, "sweep", str(spec), "--dask", address, env=no_package, check=False)
    assert broken.returncode == 2, broken.stderr


def test_the_estimate_comes_first_and_scales_with_points(spec: Path) -> None:
    estimate = iosched.estimate(spec)
    assert estimate.points == 252
    assert estimate.requests > 0 and estimate.core_seconds > 0
    assert estimate.text.startswith("estimate: 252 points")
    # One pilot per scheduler: noop's points cost less CPU than cfq's, so one pilot would
    # price them all at the first scheduler's rate.
    assert estimate.pilots == 3
    assert "measured on 3 pilot points" in estimate.text
