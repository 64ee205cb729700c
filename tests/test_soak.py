"""A short soak through the live loop's code on recorded audio: turns happen, nothing fails,
descriptors do not pile up. (The hour-long figures come from `kiosk bench soak`.)"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.slow
def test_short_soak(models_dir: Path) -> None:
    import dataclasses

    from kiosk.bench import soak
    from kiosk.config import Config

    cfg = Config()
    cfg = dataclasses.replace(cfg, paths=dataclasses.replace(cfg.paths,
                                                              models_dir=str(models_dir)))
    report = soak.run(cfg, minutes=2.5)
    assert report["turns"] >= 8, report
    assert report["errors"] == 0, report
    assert report["fds"]["end"] <= report["fds"]["start"] + 2, report
    assert report["audio_minutes"] >= 2.5
