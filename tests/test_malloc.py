"""The malloc arena cap every kiosk command sets (kiosk/malloc.py), in fresh processes."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

_PROBE = "from kiosk.malloc import limit_arenas; print(limit_arenas())"


def _probe(env: dict[str, str]) -> str:
    return subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                          text=True, check=True).stdout.strip()


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_the_cap_is_set_unless_the_environment_sets_its_own() -> None:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    assert _probe(env) == "True"
    assert _probe({**env, "MALLOC_ARENA_MAX": "4"}) == "False"  # glibc read the installer's
