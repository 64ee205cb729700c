"""The CPU budget: pinned to fewer cores, every engine sizes its threads to them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from kiosk.cpus import available, pin, threads
from kiosk.errors import KioskError


def test_an_engine_never_takes_more_threads_than_the_process_has_cores() -> None:
    assert threads(1) == 1
    assert threads(64) == available() == len(os.sched_getaffinity(0))


def test_pinning_to_more_cores_than_there_are_names_the_limit() -> None:
    with pytest.raises(KioskError) as caught:
        pin(available() + 1)
    assert f"use {available()} cores" in caught.value.describe()


def test_a_pinned_process_sizes_its_engines_to_its_cores() -> None:
    # in a child: pinning is for the whole process
    code = ("import json, os; from kiosk.cpus import pin, threads; pin(1); "
            "print(json.dumps([sorted(os.sched_getaffinity(0)), threads(2)]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    cores, whisper_threads = json.loads(out)
    assert len(cores) == 1 and whisper_threads == 1
