from __future__ import annotations

import os
from pathlib import Path

import pytest

from kiosk.models import default_models_dir, load_manifest, verify

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def models_dir() -> Path:
    """The provisioned models; tests that need real weights fail loudly when they are missing."""
    path = Path(os.environ.get("KIOSK_MODELS_DIR") or default_models_dir())
    for name, entry in load_manifest().items():
        if entry.install_by_default and not verify(entry, path):
            pytest.fail(f"model {name} is not provisioned in {path}: run kiosk models install")
    return path
