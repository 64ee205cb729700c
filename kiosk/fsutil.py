"""Durable file replacement: write aside, fsync, rename, fsync the directory."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# A temporary file of ours this old was left by a writer that died (SIGKILL, power cut) in
# the middle of a save; a live save takes well under a second.
STALE_AFTER_S = 60.0


def remove_stale(target: Path, now: float | None = None) -> list[Path]:
    """Delete the temporary files a killed save of `target` left beside it."""
    now = time.time() if now is None else now
    removed: list[Path] = []
    for leftover in target.parent.glob(f".{target.name}.*"):
        try:
            if now - leftover.stat().st_mtime > STALE_AFTER_S:
                leftover.unlink()
                removed.append(leftover)
        except OSError:
            continue  # gone already, or not ours to remove: the save goes on
    return removed


def atomic_write_bytes(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(target)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)


def atomic_write_from(staged: Path, target: Path) -> None:
    """Move a fully written file (on the same filesystem) into place durably."""
    with staged.open("rb+") as fh:
        os.fsync(fh.fileno())
    os.replace(staged, target)
    _fsync_dir(target.parent)
