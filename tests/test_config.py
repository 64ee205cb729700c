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
