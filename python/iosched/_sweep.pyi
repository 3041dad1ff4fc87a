import concurrent.futures
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Union

import pandas

SweepInput = Union[str, os.PathLike[str], Mapping[str, Any]]
TASK_SECONDS: float

@dataclass(frozen=True)
class Estimate:
    points: int
    requests: float
    core_seconds: float
    requests_per_second: float
    memory_bytes: int | None
    pilots: int
    text: str

def estimate(spec: SweepInput) -> Estimate: ...
def sweep_rows(
    spec: SweepInput,
    client: Any = None,
    executor: concurrent.futures.Executor | None = None,
    progress: bool | None = None,
    quiet: bool = False,
) -> list[str]: ...
def sweep_table(
    spec: SweepInput,
    client: Any = None,
    executor: concurrent.futures.Executor | None = None,
    format: str = "csv",
    progress: bool | None = None,
    quiet: bool = False,
) -> str: ...
def sweep(
    spec: SweepInput,
    client: Any = None,
    executor: concurrent.futures.Executor | None = None,
    progress: bool | None = None,
    quiet: bool = False,
) -> pandas.DataFrame: ...
def _source(spec: SweepInput) -> tuple[str, str | None]: ...
