"""iosched.run / run_spec against the CLI: the same JSON but the wall clock, the same errors
with file and line, the GIL released while a run runs, the listings as data."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

import iosched
from conftest import run_cli

# Two weighted cgroups under CFQ on a disk: cgroup rows, shares, a tunable and a knob.
JOB = """[global]
ioengine=libaio
direct=1
rw=randread
bs=4k
iodepth=4
size=16m
runtime=1s
time_based

[heavy]
cgroup=heavy
cgroup_weight=800

[light]
cgroup=light
cgroup_weight=200
"""


def _without_wall_clock(result: dict) -> dict:
    result = json.loads(json.dumps(result))
    del result["iosched"]["wall_clock"]
    return result


def test_run_equals_cli_json_but_the_wall_clock(cli: Path, tmp_path: Path) -> None:
    job = tmp_path / "two.fio"
    job.write_text(JOB)
    spec = tmp_path / "spec.json"
    args = ["--device", "hdd-7200", "--scheduler", "cfq", "--set", "slice_idle=4",
            "--set", "read_ahead_kb=64", "--seed", "7"]
    done = run_cli(cli, "run", str(job), *args, "--output-format", "json",
                   "--save-spec", str(spec))
    expected = json.loads(done.stdout)
    result = iosched.run(str(job), device="hdd-7200", scheduler="cfq",
                         set={"slice_idle": 4, "read_ahead_kb": 64}, seed=7)
    assert "wall_clock" in result.json["iosched"]
    assert _without_wall_clock(result.json) == _without_wall_clock(expected)
    # Bit for bit: the same text once the wall clock is gone (floats included).
    assert json.dumps(_without_wall_clock(result.json)) == json.dumps(_without_wall_clock(expected))
    assert result.spec == json.loads(spec.read_text())
    again = iosched.run_spec(spec)
    assert _without_wall_clock(again.json) == _without_wall_clock(expected)
    # The job's text instead of its path runs the same jobs.
    from_text = iosched.run(JOB, device="hdd-7200", scheduler="cfq",
                            set=["slice_idle=4", "read_ahead_kb=64"], seed=7)
    assert from_text.json["jobs"] == expected["jobs"]


def test_to_pandas_has_a_row_per_job_and_cgroup_with_every_input(tmp_path: Path) -> None:
    result = iosched.run(JOB, device="hdd-7200", scheduler="cfq", set={"slice_idle": 4})
    frame = result.to_pandas()
    assert list(frame["kind"]) == ["job", "job", "cgroup", "cgroup", "total"]
    assert list(frame["name"]) == ["heavy", "light", "/heavy", "/light", "total"]
    assert set(frame["device"]) == {"hdd-7200"}
    assert set(frame["slice_idle"]) == {"4"}
    assert set(frame["seed"]) == {1}
    groups = frame[frame["kind"] == "cgroup"]
    assert groups["ideal_share"].tolist() == [0.8, 0.2]
    assert abs(groups["share"].sum() - 1.0) < 1e-9
    jobs = result.json["jobs"]
    assert frame["iops"].iloc[0] == pytest.approx(jobs[0]["read"]["iops"], rel=1e-3)


def test_bad_job_file_raises_with_file_and_line(cli: Path, tmp_path: Path) -> None:
    job = tmp_path / "bad.fio"
    job.write_text("[a]\nrw=read\nbogus_option=1\n")
    with pytest.raises(iosched.JobFileError) as caught:
        iosched.run(str(job))
    assert caught.value.file == str(job)
    assert caught.value.line == 3
    done = run_cli(cli, "run", str(job), check=False)
    assert done.returncode == 2
    assert done.stderr.strip() == f"iosched: {caught.value}"
    assert isinstance(caught.value, iosched.IoschedError)


def test_bad_device_setting_and_spec_raise_their_classes(tmp_path: Path) -> None:
    with pytest.raises(iosched.DeviceError, match="no such device preset"):
        iosched.run("[a]\nsize=1m\n", device="floppy")
    with pytest.raises(iosched.SettingError, match="slice_idel"):
        iosched.run("[a]\nsize=1m\n", scheduler="cfq", set={"slice_idel": 0})
    with pytest.raises(iosched.SettingError, match="expected KEY=VALUE"):
        iosched.run("[a]\nsize=1m\n", set=["slice_idle"])
    with pytest.raises(iosched.SpecError) as caught:
        iosched.run_spec({"version": 999})
    assert caught.value.file == "<spec>"
    spec = tmp_path / "s.toml"
    spec.write_text("jobs = 'j.fio'\n\nbogus = 1\n")
    with pytest.raises(iosched.SpecError) as bad:
        iosched.sweep(spec, executor=None)
    assert bad.value.file == str(spec)
    assert bad.value.line == 3


def test_errors_pickle_whole() -> None:
    import pickle

    error = iosched.JobFileError("a.fio:3: unknown option 'x'", "a.fio", 3)
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is iosched.JobFileError
    assert (str(back), back.file, back.line) == (str(error), "a.fio", 3)


def test_the_gil_is_released_while_a_run_runs() -> None:
    # A run of a few hundred ms: the main thread keeps counting while it runs.
    job = JOB.replace("runtime=1s", "runtime=20s")
    done = threading.Event()

    def work() -> None:
        iosched.run(job, device="hdd-7200", scheduler="cfq")
        done.set()

    thread = threading.Thread(target=work)
    counted = 0
    thread.start()
    while not done.is_set():
        counted += 1
    thread.join()
    # Holding the GIL, the run would let the loop turn only at the switch interval's
    # few checks; released, it turns hundreds of thousands of times.
    assert counted > 100_000, counted


def test_listings_are_the_clis(cli: Path) -> None:
    names = [s["name"] for s in iosched.schedulers() if not s["kernel_only"]]
    listing = run_cli(cli, "schedulers").stdout.splitlines()
    heads = [l for l in listing if l and not l.startswith(" ") and not l.startswith("The kernel")]
    assert names == [h.split(":")[0].split(" ")[0] for h in heads]
    cfq = next(s for s in iosched.schedulers() if s["name"] == "cfq")
    assert any(t["name"] == "slice_idle" and t["default"] == 8 for t in cfq["tunables"])
    text = run_cli(cli, "devices").stdout
    devices = iosched.devices()
    assert [d["name"] for d in devices] == [line.split()[0] for line in text.splitlines()[1:]]
    knobs = run_cli(cli, "knobs").stdout
    assert [k["name"] for k in iosched.knobs()] == [l.split()[0] for l in knobs.splitlines()[1:]]
