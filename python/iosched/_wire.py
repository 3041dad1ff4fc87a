"""Rows as the native module hands them over: JSON lines whose measures are f64 bits."""

from __future__ import annotations

import json
import struct
from typing import Any

MEASURES = (
    "bw_mb_s",
    "iops",
    "clat_mean_us",
    "clat_p50_us",
    "clat_p99_us",
    "share",
    "ideal_share",
)


def _float(bits: int | None) -> float | None:
    if bits is None:
        return None
    value: float = struct.unpack("<d", int(bits).to_bytes(8, "little"))[0]
    return value


def decode(line: str) -> dict[str, Any]:
    """One row: point, kind, name, the measures as floats (None where missing)."""
    raw = json.loads(line)
    row: dict[str, Any] = {"point": raw["point"], "kind": raw["kind"], "name": raw["name"]}
    for name in MEASURES:
        row[name] = _float(raw[name])
    return row
