from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from kiosk.models import default_models_dir, load_manifest, verify

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests on the JACK device are `serial`: scripts/test.sh runs them alone, after the
    parallel run (a JACK client starved of the CPU for a 10 ms period is dropped by the
    server). Should they run in parallel all the same, they stay on one worker (`--dist
    loadgroup`): the dummy server is one per machine, and its session fixture stops it."""
    for item in items:
        if "jack_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.serial)
            item.add_marker(pytest.mark.xdist_group("jack"))


@pytest.fixture(scope="session")
def models_dir() -> Path:
    """The provisioned models; tests that need real weights fail loudly when they are missing."""
    path = Path(os.environ.get("KIOSK_MODELS_DIR") or default_models_dir())
    for name, entry in load_manifest().items():
        if entry.install_by_default and not verify(entry, path):
            pytest.fail(f"model {name} is not provisioned in {path}: run kiosk models install")
    return path


@pytest.fixture(scope="session")
def jack_server() -> Iterator[None]:
    """A real, clocked sound device without a sound card: JACK's dummy backend at 16 kHz."""
    from kiosk.audio import jack
    from kiosk.errors import KioskError

    try:
        proc = jack.start_dummy()  # None: one is running already
    except KioskError as exc:
        pytest.fail(exc.describe())
    yield
    if proc is None:
        return
    import sys

    if "sounddevice" in sys.modules:
        # PortAudio must let go of JACK before the server goes, or it aborts at exit.
        sys.modules["sounddevice"]._terminate()
    jack.stop(proc)
