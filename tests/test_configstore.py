from __future__ import annotations

import logging
from pathlib import Path

import pytest

from kiosk import config as cfgmod
from kiosk.config import Config
from kiosk.configstore import ConfigStore, load_with_fallback, previous_path
from kiosk.errors import ConfigError


def test_set_validates_names_the_field_and_marks_restart(tmp_path: Path) -> None:
    store = ConfigStore(tmp_path / "kiosk.toml")
    assert "takes effect after restart" in store.set("echo.mode", "hardware")
    assert "applied now" in store.set("tts.volume", "0.5")
    with pytest.raises(ConfigError, match=r"echo\.mode = 'loud' is not allowed"):
        store.set("echo.mode", "loud")
    with pytest.raises(ConfigError, match=r"tts\.volume = 9\.0 is out of range"):
        store.set("tts.volume", "9")
    with pytest.raises(ConfigError, match="not a setting"):
        store.set("tts.colume", "1")
    assert [c.key for c in store.diff()] == ["echo.mode", "tts.volume"]


def test_live_settings_are_applied_at_once(tmp_path: Path) -> None:
    seen: list[list[str]] = []
    store = ConfigStore(tmp_path / "kiosk.toml", apply_live=lambda cfg, keys: seen.append(keys))
    store.set("logging.level", "DEBUG")
    store.set("echo.mode", "off")
    assert seen == [["logging.level"]]
    store.revert()
    assert seen[-1] == ["logging.level"] and store.get("logging.level") == "INFO"


def test_save_is_readable_keeps_the_previous_version_and_japanese(tmp_path: Path) -> None:
    path = tmp_path / "kiosk.toml"
    store = ConfigStore(path)
    store.set("screen.fixed_page", "ja/カフェ.md")
    store.save()
    store.set("tts.volume", "0.7")
    store.save()
    assert cfgmod.loads(path.read_text("utf-8")).tts.volume == 0.7
    previous = cfgmod.loads(previous_path(path).read_text("utf-8"))
    assert previous.screen.fixed_page == "ja/カフェ.md" and previous.tts.volume == 1.0
    assert ConfigStore(path).get("screen.fixed_page") == "ja/カフェ.md"
    assert store.needs_restart() == []


def test_corrupt_file_falls_back_to_the_last_good_one_loudly(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "kiosk.toml"
    store = ConfigStore(path)
    store.set("tts.volume", "0.5")
    store.save()
    store.set("tts.volume", "0.6")
    store.save()
    path.write_bytes(b"[tts\nvolume = ")  # torn or hand-broken
    with caplog.at_level(logging.ERROR):
        cfg, origin = load_with_fallback(path)
    assert origin == "previous" and cfg.tts.volume == 0.5
    assert "CONFIG UNUSABLE" in caplog.text and str(path) in caplog.text


def test_invalid_values_fall_back_too_and_defaults_when_nothing_is_good(
        tmp_path: Path) -> None:
    path = tmp_path / "kiosk.toml"
    path.write_text('[echo]\nmode = "loud"\n', encoding="utf-8")
    cfg, origin = load_with_fallback(path)
    assert origin == "defaults" and cfg == Config()


def test_unset_goes_back_to_the_default(tmp_path: Path) -> None:
    store = ConfigStore(tmp_path / "kiosk.toml")
    store.set("console.idle_logout_s", "60")
    store.unset("console.idle_logout_s")
    assert store.get("console.idle_logout_s") == 300 and store.diff() == []


def test_schema_documents_every_setting() -> None:
    rows = cfgmod.schema()
    assert len({r.key for r in rows}) == len(rows) > 40
    assert all(r.doc for r in rows)
    text = cfgmod.format_schema()
    assert "echo.mode (str, default 'speex', after restart)" in text
    assert "one of: hardware, speex, off" in text
