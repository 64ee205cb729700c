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
    entry = load_manifest()["muse-int8"]
    if not verify(entry, path):
        pytest.fail(f"model muse-int8 is not provisioned in {path}: run kiosk models install")
    return path
