"""iosched from Python: runs and sweeps of the block I/O scheduler laboratory.

``run`` and ``run_spec`` run one simulation (or a real device) exactly as ``iosched run``
does and return its fio-shaped JSON; ``sweep`` expands a sweep spec as ``iosched sweep``
does and runs its points on Dask (or any ``concurrent.futures.Executor``); ``schedulers``,
``devices`` and ``knobs`` list what can be chosen. Errors are :class:`IoschedError`\\ s.
"""

from __future__ import annotations

import json as _json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from . import _iosched, _wire
from ._sweep import Estimate, estimate, sweep, sweep_table
from .errors import (
    DeviceError,
    InternalError,
    IoschedError,
    JobFileError,
    RunFailed,
    SettingError,
    SpecError,
)

if TYPE_CHECKING:
    import pandas

__all__ = [
    "DeviceError",
    "Estimate",
    "InternalError",
    "IoschedError",
    "JobFileError",
    "Result",
    "RunFailed",
    "SettingError",
    "SpecError",
    "devices",
    "estimate",
    "knobs",
    "run",
    "run_spec",
    "schedulers",
    "sweep",
    "sweep_table",
]
__version__: str = _iosched.__version__

JobInput = Union[str, "os.PathLike[str]"]
Settings = Union[Mapping[str, Any], Sequence[str], None]


class Result:
    """One finished run.

    ``json`` is the dict ``iosched run --output-format json`` prints (fio's shape, with the
    ``iosched`` object); ``spec`` the run description ``--save-spec`` writes; ``warnings``
    what the CLI prints about the jobs before running them.
    """

    def __init__(self, text: str, spec: str, warnings: list[str], rows: list[str]) -> None:
        self.json: dict[str, Any] = _json.loads(text)
        self.spec: dict[str, Any] = _json.loads(spec)
        self.warnings: list[str] = warnings
        self._rows = rows

    def inputs(self) -> dict[str, Any]:
        """The run's inputs: device, scheduler, each tunable and knob set, seed."""
        spec = self.spec
        target = spec["target"]
        device = next(iter(target.values())) if isinstance(target, dict) else target
        inputs: dict[str, Any] = {"device": str(device), "scheduler": spec["scheduler"]}
        for setting in [*spec["tunables"], *spec["knobs"]]:
            inputs[setting["name"]] = setting["value"]
        inputs["seed"] = spec["seed"]
        return inputs

    def to_pandas(self) -> pandas.DataFrame:
        """A row per job, per cgroup (where the jobs name cgroups) and the total, with every
        input as a column: the columns of ``iosched sweep``'s table."""
        import pandas

        inputs = self.inputs()
        records = []
        for line in self._rows:
            row = _wire.decode(line)
            del row["point"]
            records.append({**inputs, **row})
        return pandas.DataFrame.from_records(records)

    def __repr__(self) -> str:
        inputs = " ".join(f"{k}={v}" for k, v in self.inputs().items())
        return f"<iosched.Result {inputs}>"


def _job(job: JobInput) -> tuple[bool, str]:
    """A path (a PathLike, or text without a line break) or a job file's text."""
    if isinstance(job, os.PathLike):
        return (True, os.fspath(job))
    if isinstance(job, str):
        return (False, job) if "\n" in job else (True, job)
    raise TypeError(f"job: a job file's text or a path, not {type(job).__name__}")


def _settings(settings: Settings) -> list[str]:
    if settings is None:
        return []
    if isinstance(settings, Mapping):
        return [f"{k}={_text(v)}" for k, v in settings.items()]
    if isinstance(settings, str):
        return [settings]
    return list(settings)


def _text(value: Any) -> str:
    # sysfs switches read 0 and 1, as the sweep spec writes a bool.
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def run(
    job: JobInput | Sequence[JobInput],
    device: str = "fixed",
    scheduler: str = "noop",
    set: Settings = None,
    seed: int = 1,
    mem: str | None = None,
    uptime: int = 1000,
) -> Result:
    """Runs job files as ``iosched run JOB... --device --scheduler --set --seed --mem``.

    ``job``: a job file's text, a path, or a list of them (each after the first starts with
    an implicit stonewall). ``set``: ``{"slice_idle": 0}`` or ``["slice_idle=0"]``.
    The GIL is released while the run runs.
    """
    jobs = [job] if isinstance(job, (str, os.PathLike)) else list(job)
    spec = _iosched.spec_from(
        [_job(j) for j in jobs], device, scheduler, _settings(set), seed, mem, uptime
    )
    text, warnings, rows = _iosched.run_spec(spec, "<run>")
    return Result(text, spec, warnings, rows)


def run_spec(spec: str | os.PathLike[str] | Mapping[str, Any]) -> Result:
    """Runs a saved run description: a path to ``--save-spec`` JSON, its text, or its dict."""
    if isinstance(spec, Mapping):
        text, origin = _json.dumps(spec), "<spec>"
    elif isinstance(spec, str) and spec.lstrip().startswith("{"):
        text, origin = spec, "<spec>"
    else:
        path = Path(spec)
        origin = str(path)
        try:
            text = path.read_text()
        except OSError as error:
            raise SpecError(f"{path}: {error.strerror}", str(path), None) from None
    out, warnings, rows = _iosched.run_spec(text, origin)
    return Result(out, text, warnings, rows)


def schedulers() -> list[dict[str, Any]]:
    """Every scheduler with its tunables (name, default, unit, min, max, meaning)."""
    result: list[dict[str, Any]] = _json.loads(_iosched.schedulers())
    return result


def devices() -> list[dict[str, Any]]:
    """The simulated device presets."""
    result: list[dict[str, Any]] = _json.loads(_iosched.devices())
    return result


def knobs() -> list[dict[str, Any]]:
    """The simulated machine's knobs (and the engine's) with their defaults."""
    result: list[dict[str, Any]] = _json.loads(_iosched.knobs())
    return result
