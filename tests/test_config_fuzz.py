"""Random values for every setting, through `config set`, a hand-written file and the console:
nothing crashes, and nothing ever leaves a saved file that fails to load."""

from __future__ import annotations

import math
from pathlib import Path

import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firmware_bridge.console import ConsoleSession
from firmware_bridge.pin import PinFile
from kiosk import config as cfgmod
from kiosk.configstore import ConfigStore, load_with_fallback
from kiosk.errors import ConfigError

KEYS = [s.key for s in cfgmod.schema()]
_TEXT = st.one_of(
    st.sampled_from(["nan", "NaN", "inf", "-inf", "1e308", "-1", "0", "1", "0.5", "true",
                     "false", "", " ", "9" * 40, "-9" * 20, "カフェ", "ja", "en", "speex",
                     '"quoted"', "a\tb", "\x00", "1_000", "0x10"]),
    st.text(max_size=12),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
)
_VALUE = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                   st.integers(min_value=-(2**63), max_value=2**63 - 1), st.booleans(),
                   st.text(max_size=12), st.lists(st.integers(), max_size=2))
_FUZZ = settings(max_examples=150, deadline=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture])


def _loads_ok(path: Path) -> None:
    if path.exists():
        cfgmod.loads(path.read_text(encoding="utf-8"), str(path))  # raises if unusable


@_FUZZ
@given(changes=st.lists(st.tuples(st.sampled_from(KEYS), _TEXT), max_size=6))
def test_config_set_never_saves_a_file_that_fails_to_load(tmp_path: Path,
                                                          changes: list[tuple[str, str]]
                                                          ) -> None:
    path = tmp_path / "kiosk.toml"
    path.unlink(missing_ok=True)
    store = ConfigStore(path)
    for key, text in changes:
        try:
            store.set(key, text)
        except ConfigError:
            continue
        value = store.get(key)
        assert not (isinstance(value, float) and not math.isfinite(value))
        store.save()
        _loads_ok(path)


@_FUZZ
@given(key=st.sampled_from(KEYS), value=_VALUE)
def test_a_hand_written_value_never_crashes_and_a_save_never_writes_over_it(
        tmp_path: Path, key: str, value: object) -> None:
    path = tmp_path / "kiosk.toml"
    table: dict[str, object] = {}
    node = table
    *parents, leaf = key.split(".")
    for part in parents:
        node = node.setdefault(part, {})  # type: ignore[assignment]
    node[leaf] = value
    written = tomli_w.dumps(table)
    path.write_text(written, encoding="utf-8")
    load_with_fallback(path)  # never raises: falls back loudly
    store = ConfigStore(path)
    try:
        store.save()
    except ConfigError:
        assert path.read_text(encoding="utf-8") == written  # refused, kept as written
        return
    _loads_ok(path)


@_FUZZ
@given(changes=st.lists(st.tuples(st.sampled_from(KEYS), _TEXT), max_size=5))
def test_console_set_and_save_never_crash_or_save_a_bad_file(
        tmp_path: Path, changes: list[tuple[str, str]]) -> None:
    path = tmp_path / "kiosk.toml"
    path.unlink(missing_ok=True)
    pins = PinFile(tmp_path / "admin-pin.json")  # no PIN needed: the session is made admin
    session = ConsoleSession(ConfigStore(path), pins, _Host(), now=0.0)
    session.auth.admin = True
    for i, (key, text) in enumerate(changes):
        line = f"set {key} {text}".replace("\r", " ").replace("\n", " ").replace("\x03", " ")
        assert isinstance(session.feed((line + "\r").encode(), float(i)), bytes)
        assert isinstance(session.feed(b"save\r", float(i)), bytes)
        _loads_ok(path)


class _Host:
    def status(self) -> str:
        return "ok"

    def test_tts(self, text: str) -> str:
        return "spoke"

    def test_mic(self) -> str:
        return "level"

    def logs(self, count: int) -> list[str]:
        return []

    def restart(self) -> str:
        return "restarting"

    def report(self, since: str) -> str:
        return "report"
