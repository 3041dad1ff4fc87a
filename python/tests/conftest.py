"""Shared helpers: the repository, the CLI binary the package is compared with."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _binary() -> Path | None:
    """`$IOSCHED_BIN`, else the release or debug build of this checkout."""
    named = os.environ.get("IOSCHED_BIN")
    if named:
        return Path(named)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    for profile in ("release", "debug"):
        path = target / profile / "iosched"
        if path.is_file():
            return path
    found = shutil.which("iosched")
    return Path(found) if found else None


@pytest.fixture(scope="session")
def cli() -> Path:
    path = _binary()
    if path is None:
        # Printed so CI counts it, as the Rust tests print theirs.
        print("SKIPPED: no iosched binary (cargo build, or set IOSCHED_BIN)")
        pytest.skip("SKIPPED: no iosched binary (cargo build, or set IOSCHED_BIN)")
    return path


def run_cli(cli: Path, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
            check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(cli), *args], cwd=cwd, env=env, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"iosched {' '.join(args)}: exit {done.returncode}\n{done.stderr}")
    return done
