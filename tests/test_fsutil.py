"""Durable saves leave nothing behind, even after a save was killed half-way; files just
installed can be released from the page cache."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kiosk.fsutil import STALE_AFTER_S, atomic_write_bytes, drop_cached


def test_a_killed_save_leaves_a_temp_file_that_the_next_save_removes(tmp_path: Path) -> None:
    target = tmp_path / "site.npz"
    # A real writer killed with SIGKILL while its temporary file is open.
    code = (
        "import sys, time, tempfile; from pathlib import Path\n"
        f"fd, name = tempfile.mkstemp(prefix='.site.npz.', dir={str(tmp_path)!r})\n"
        "print(name, flush=True); time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    leftover = Path(proc.stdout.readline().strip())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    assert leftover.exists()
    fresh = tmp_path / ".site.npz.abcd1234"  # a save running right now: left alone
    fresh.write_bytes(b"x")
    old = time.time() - STALE_AFTER_S - 5
    os.utime(leftover, (old, old))
    atomic_write_bytes(target, b"index")
    assert target.read_bytes() == b"index"
    assert not leftover.exists() and fresh.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site.npz.abcd1234", "site.npz"]


def _resident_share(path: Path) -> float:
    """The share of a file's pages in the page cache, by mincore(2) on a mapping of it that
    touches none of them."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    size = path.stat().st_size
    pages = -(-size // os.sysconf("SC_PAGE_SIZE"))
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, 1, 1, fd, 0)  # PROT_READ, MAP_SHARED
        assert addr not in (None, ctypes.c_void_p(-1).value), os.strerror(ctypes.get_errno())
        try:
            vec = ctypes.create_string_buffer(pages)
            assert libc.mincore(addr, size, vec) == 0, os.strerror(ctypes.get_errno())
            return sum(b & 1 for b in vec.raw) / pages
        finally:
            libc.munmap(addr, size)
    finally:
        os.close(fd)


def _filesystem(path: Path) -> str:
    """The type of the filesystem `path` is on (the longest mount point above it)."""
    best, kind = "", ""
    for line in Path("/proc/self/mounts").read_text().splitlines():
        _, point, fstype, *_ = line.split()
        inside = (str(path.resolve()).rstrip("/") + "/").startswith(point.rstrip("/") + "/")
        if inside and len(point) > len(best):
            best, kind = point, fstype
    return kind


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mincore(2) is Linux's")
def test_drop_cached_releases_the_page_cache_of_installed_files_and_keeps_them(
        tmp_path: Path) -> None:
    if _filesystem(tmp_path) in ("tmpfs", "ramfs"):
        pytest.skip("a file in memory has no disk to be read from again")
    data = os.urandom(4 << 20)
    lib = tmp_path / "venv" / "lib" / "engine.so"
    lib.parent.mkdir(parents=True)
    lib.write_bytes(data)
    (tmp_path / "venv" / "link.so").symlink_to(lib)
    assert lib.read_bytes() == data  # just written and read: in the cache
    assert _resident_share(lib) > 0.9
    assert drop_cached([tmp_path / "venv"]) == 1  # the link is not followed
    assert _resident_share(lib) < 0.1
    assert lib.read_bytes() == data  # nothing lost: read again from disk
