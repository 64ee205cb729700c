"""The C allocator's arenas, capped at one for every `kiosk` command (MALLOC_ARENA_MAX wins).

glibc gives each thread that allocates its own arena, up to eight per core, and memory freed
in one is not reused by another. The recognizer, the brain, the synthesizer and the turn
model each work in a thread of their own, so their working memory piled up side by side: the
Japanese voice bench peaked at 915 MB with two arenas and 900 MB with one, latency unchanged
(README). The command sets the cap itself, so a bench measures what the service runs. It must
come before any thread allocates: the limit is read once, when a second arena is first needed.
"""

from __future__ import annotations

import ctypes
import os

M_ARENA_MAX = -8  # glibc's mallopt parameter
ARENAS = 1


def limit_arenas(count: int = ARENAS) -> bool:
    """Cap the arenas unless MALLOC_ARENA_MAX says otherwise (glibc reads it itself); False
    where the C library is not glibc or refuses."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        # the process's own symbols: the C library it runs on, found without a search
        return bool(ctypes.CDLL(None).mallopt(M_ARENA_MAX, count))
    except (OSError, AttributeError):  # not glibc: no mallopt, nothing to cap
        return False
