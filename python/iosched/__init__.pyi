import os
from collections.abc import Mapping, Sequence
from typing import Any, Union

import pandas

from ._sweep import Estimate as Estimate
from ._sweep import estimate as estimate
from ._sweep import sweep as sweep
from ._sweep import sweep_table as sweep_table
from .errors import DeviceError as DeviceError
from .errors import InternalError as InternalError
from .errors import IoschedError as IoschedError
from .errors import JobFileError as JobFileError
from .errors import RunFailed as RunFailed
from .errors import SettingError as SettingError
from .errors import SpecError as SpecError

__version__: str
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

JobInput = Union[str, os.PathLike[str]]
Settings = Union[Mapping[str, Any], Sequence[str], None]

class Result:
    json: dict[str, Any]
    spec: dict[str, Any]
    warnings: list[str]
    def __init__(self, text: str, spec: str, warnings: list[str], rows: list[str]) -> None: ...
    def inputs(self) -> dict[str, Any]: ...
    def to_pandas(self) -> pandas.DataFrame: ...

def run(
    job: JobInput | Sequence[JobInput],
    device: str = "fixed",
    scheduler: str = "noop",
    set: Settings = None,
    seed: int = 1,
    mem: str | None = None,
    uptime: int = 1000,
) -> Result: ...
def run_spec(spec: str | os.PathLike[str] | Mapping[str, Any]) -> Result: ...
def schedulers() -> list[dict[str, Any]]: ...
def devices() -> list[dict[str, Any]]: ...
def knobs() -> list[dict[str, Any]]: ...
