from __future__ import annotations

from pathlib import Path

import pytest

from kiosk.config import load_config
from kiosk.errors import ConfigError


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "kiosk.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_a_file() -> None:
    cfg = load_config(None)
    assert cfg.brain.language == "auto" and cfg.paths.site_path().is_dir()


def test_values_are_read_and_nested_tables_typed(tmp_path: Path) -> None:
    cfg = load_config(_write(tmp_path, '[brain]\nlanguage = "ja"\n[brain.resolver]\n'
                                       "gate_confidence = 0.3\npool_deictic = 4\n"))
    assert cfg.brain.language == "ja"
    assert cfg.brain.resolver.gate_confidence == 0.3 and cfg.brain.resolver.pool_deictic == 4


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ('[brain]\nlanguage = "fr"\n', ["brain.language", "ja, en"]),
        ('[brain]\nlangauge = "ja"\n', ["brain.langauge is not a setting", "language"]),
        ("[brain.resolver]\ngate_confidence = \"high\"\n", ["brain.resolver.gate_confidence",
                                                            "float"]),
        ("[brain.resolver]\npool_deictic = 2.5\n", ["brain.resolver.pool_deictic", "int"]),
        ("[brain.rank]\ndense = -1.0\n", ["brain.rank.dense", "out of range"]),
        ("[console]\nidle_logout_s = 5\n", ["console.idle_logout_s", "from 30 to 86400"]),
        ('[echo]\nmode = "loud"\n', ["echo.mode", "hardware, speex, off"]),
        ("[brain\n", ["not valid TOML"]),
        ("[tts]\nvolume = nan\n", ["tts.volume", "not a finite number"]),
        ("[brain.rank]\ndense = nan\n", ["brain.rank.dense", "not a finite number"]),
        ("[brain.resolver]\ngate_margin = inf\n", ["brain.resolver.gate_margin", "finite"]),
    ],
)
def test_invalid_values_name_the_field_and_the_fix(tmp_path: Path, text: str,
                                                   names: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(_write(tmp_path, text))
    for name in names:
        assert name in str(info.value)


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.toml")


@pytest.mark.parametrize("text", ["nan", "NaN", "inf", "-inf", "infinity"])
def test_non_finite_numbers_are_refused_as_typed(text: str) -> None:
    """`kiosk config set` and the console read values with parse_value: NaN passes a range
    check (every comparison is false), so it is refused by name."""
    from kiosk.config import parse_value

    with pytest.raises(ConfigError, match=r"tts\.volume .* not a finite number"):
        parse_value("tts.volume", text)


def test_cli_config_set_refuses_nan_and_saves_nothing(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    path = tmp_path / "kiosk.toml"
    env = {**os.environ, "KIOSK_CONFIG": str(path)}
    out = subprocess.run([sys.executable, "-m", "kiosk", "--config", str(path), "config", "set",
                          "tts.volume", "nan"], capture_output=True, text=True, env=env,
                         timeout=60)
    assert out.returncode != 0
    assert "tts.volume" in out.stderr + out.stdout and "finite" in out.stderr + out.stdout
    assert not path.exists() or "nan" not in path.read_text(encoding="utf-8")


def test_config_check_says_one_clear_line_for_what_is_no_settings_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Invalid UTF-8, a folder or /dev/zero used to end in a traceback (or, for /dev/zero, in
    reading for ever); now one line naming the file, and exit status 2, as the service does."""
    from kiosk.__main__ import main

    latin1 = tmp_path / "latin1.toml"
    latin1.write_bytes(b'[tts]\nvoice_en = "caf\xe9"\n')
    big = tmp_path / "big.toml"
    big.write_bytes(b"# x\n" * 300_000)
    cases = {latin1: "is not UTF-8 text (byte 21, line 2)", tmp_path: "is a folder",
             Path("/dev/zero"): "is not a regular file", big: "is larger than 1048576 bytes",
             tmp_path / "nope.toml": "not found"}
    for path, said in cases.items():
        assert main(["config", "check", str(path)]) == 2, path
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and said in err and str(path) in err, err
    good = _write(tmp_path, "[tts]\nvolume = 0.5\n")
    assert main(["config", "check", str(good)]) == 0
    assert capsys.readouterr().out == "ok\n"
