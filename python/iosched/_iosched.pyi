"""The native module (crates/py): text in, text out; the package wraps it."""

__version__: str
__all__ = [
    "devices",
    "knobs",
    "schedulers",
    "run_spec",
    "spec_from",
    "sweep_measure",
    "sweep_pilot",
    "sweep_point_count",
    "sweep_specs",
    "sweep_table",
    "sweep_write_out",
    "__version__",
]

def spec_from(
    jobs: list[tuple[bool, str]],
    device: str,
    scheduler: str,
    settings: list[str],
    seed: int,
    mem: str | None,
    uptime: int,
) -> str: ...
def run_spec(spec: str, origin: str) -> tuple[str, list[str], list[str]]: ...
def schedulers() -> str: ...
def devices() -> str: ...
def knobs() -> str: ...
def sweep_point_count(path: str, json: str | None = None) -> int: ...
def sweep_specs(path: str, json: str | None = None) -> list[str]: ...
def sweep_pilot(
    path: str, json: str | None = None
) -> tuple[str, tuple[int, float, float, float, int | None, int], list[int], list[str]]: ...
def sweep_measure(points: list[tuple[int, str]]) -> list[str]: ...
def sweep_table(path: str, json: str | None, rows: list[str], format: str) -> str: ...
def sweep_write_out(path: str, json: str | None, rows: list[str], out: str) -> None: ...
