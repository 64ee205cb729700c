"""Benchmarks behind `kiosk bench ...`: they print figures; targets are read off, not asserted."""

from __future__ import annotations

import statistics


def percentiles(values: list[float], digits: int = 1) -> dict[str, float]:
    """p50 and p95 (nearest rank) of the measured values; NaN when nothing was measured."""
    ordered = sorted(values) or [float("nan")]
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": round(statistics.median(ordered), digits), "p95": round(p95, digits)}


def _status_mb(pid: int | str, fields: tuple[str, ...]) -> dict[str, float]:
    """Those memory fields of /proc/PID/status, in MB (none when the process is gone or /proc
    is not Linux's)."""
    out: dict[str, float] = {}
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in fields:
                    out[key] = int(value.split()[0]) / 1024.0
    except OSError:
        pass
    return out


def rss_mb(pid: int | str = "self") -> float:
    """Resident memory of a process now (0 when it is gone)."""
    return _status_mb(pid, ("VmRSS",)).get("VmRSS", 0.0)


def rss_split_mb(pid: int | str = "self") -> dict[str, float]:
    """Resident memory now, split: `anon` (the process's own heap and arenas) and `file`
    (read-only files it maps: model weights, dictionaries). The file part depends on what the
    page cache holds and how (a file just written sits in large folios, each mapped whole on
    its first touch), and the kernel may drop it under pressure: the same code shows ~100 MB
    more of it in a fresh checkout. Empty where /proc is not Linux's."""
    return {key[3:].lower(): round(mb, 1)
            for key, mb in _status_mb(pid, ("RssAnon", "RssFile")).items()}
