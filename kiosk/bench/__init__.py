"""Benchmarks behind `kiosk bench ...`: they print figures; targets are read off, not asserted."""

from __future__ import annotations

import statistics


def percentiles(values: list[float], digits: int = 1) -> dict[str, float]:
    """p50 and p95 (nearest rank) of the measured values; NaN when nothing was measured."""
    ordered = sorted(values) or [float("nan")]
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": round(statistics.median(ordered), digits), "p95": round(p95, digits)}


def rss_mb(pid: int | str = "self") -> float:
    """Resident memory of a process now (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0
