from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
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


def _saved_in_turn(path: Path, *changes: tuple[str, str]) -> ConfigStore:
    """A store that saved each change in turn: the file holds the last, .prev the one before."""
    store = ConfigStore(path)
    for key, value in changes:
        store.set(key, value)
        store.save()
    return store


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
    _saved_in_turn(path, ("tts.volume", "0.5"), ("tts.volume", "0.6"))
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


@pytest.mark.parametrize("keep_previous", [False, True])
def test_a_file_that_cannot_be_used_is_never_written_over(tmp_path: Path,
                                                           keep_previous: bool) -> None:
    """Hand edits beside an invalid value: a save refuses, naming the file and the fix, and the
    bytes on disk stay as written (with or without a previous good file)."""
    path = tmp_path / "kiosk.toml"
    if keep_previous:
        _saved_in_turn(path, ("tts.volume", "0.5"), ("tts.volume", "0.6"))
    written = '[brain]\nlanguage = "jp"\n[tts]\nvolume = 0.3\n[logging]\nlevel = "DEBUG"\n'
    path.write_text(written, encoding="utf-8")
    store = ConfigStore(path)
    assert store.origin == ("previous" if keep_previous else "defaults")
    store.set("avatar.port", "8766")
    with pytest.raises(ConfigError) as info:
        store.save()
    assert str(path) in str(info.value) and "brain.language" in str(info.value)
    assert f"mv {path} {path}.bad" in info.value.fix
    assert path.read_text(encoding="utf-8") == written


def test_a_save_that_cannot_write_says_so_and_changes_nothing(tmp_path: Path) -> None:
    """/sys is read-only even for root: the error names the folder and the fix."""
    store = ConfigStore(Path("/sys/kiosk-test.toml"))
    store.set("tts.volume", "0.5")
    with pytest.raises(ConfigError, match=r"not saved: cannot write in /sys") as info:
        store.save()
    assert "writable" in info.value.fix
    assert store.saved.tts.volume == 1.0  # still the saved state: nothing was claimed


def _kiosk(*args: str, config: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KIOSK_CONFIG": str(config)}
    return subprocess.run([sys.executable, "-m", "kiosk", "--config", str(config), *args],
                          input=stdin, capture_output=True, text=True, env=env, timeout=300)


def test_cli_set_on_an_unusable_file_refuses_before_claiming_anything(tmp_path: Path) -> None:
    path = tmp_path / "kiosk.toml"
    written = '[brain]\nlanguage = "jp"\n[tts]\nvolume = 0.3\n'
    path.write_text(written, encoding="utf-8")
    out = _kiosk("config", "set", "tts.volume", "0.5", config=path)
    assert out.returncode != 0
    assert "not saved" in out.stderr and "applied" not in out.stdout + out.stderr
    assert path.read_text(encoding="utf-8") == written


def test_commands_run_on_the_last_good_file_and_doctor_fails_the_config_check(
        tmp_path: Path) -> None:
    """The service's commands do what the README promises: an unusable file is logged and the
    previous good one used (exit 0, not 2: systemd would only restart into the same failure);
    doctor fails its config check with the fix."""
    path = tmp_path / "kiosk.toml"
    _saved_in_turn(path, ("brain.language", "en"), ("tts.volume", "0.5"))
    path.write_bytes(b"[tts\nvolume = ")
    asked = _kiosk("ask", "--lang", "en", config=path, stdin="where is the cafe\n")
    assert asked.returncode == 0, asked.stderr
    assert "CONFIG UNUSABLE" in asked.stderr and "avatar>" in asked.stdout
    doctor = _kiosk("doctor", "--quick", "--json", config=path)
    assert doctor.returncode == 1
    checks = {c["name"]: c for c in json.loads(doctor.stdout)}
    assert checks["config"]["status"] == "FAIL"
    assert "previous good file" in checks["config"]["detail"]
    assert f"mv {path} {path}.bad" in checks["config"]["fix"]
