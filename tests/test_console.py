"""The console session as a pure state machine: bytes in, bytes out, time passed in."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firmware_bridge.console import ConsoleSession
from firmware_bridge.pin import PinFile
from kiosk.configstore import ConfigStore
from kiosk.errors import ConfigError

PIN = "2468"


class FakeHost:
    def __init__(self) -> None:
        self.spoken: list[str] = []
        self.restarts = 0

    def status(self) -> str:
        return "service: running"

    def test_tts(self, text: str) -> str:
        self.spoken.append(text)
        return f"spoke {len(text)} characters"

    def test_mic(self) -> str:
        return "level -32 dBFS"

    def logs(self, count: int) -> list[str]:
        return [f"line {i}" for i in range(count)]

    def restart(self) -> str:
        self.restarts += 1
        return "restarting"

    def report(self, since: str) -> str:
        return "report: 3 turns"


@pytest.fixture(scope="module")
def pin_file(tmp_path_factory: pytest.TempPathFactory) -> PinFile:
    pins = PinFile(tmp_path_factory.mktemp("pin") / "admin-pin.json")
    pins.set(PIN)  # scrypt is slow on purpose: set once for the module
    return pins


def _session(tmp_path: Path, pins: PinFile) -> tuple[ConsoleSession, FakeHost]:
    # The PIN file is shared by the module; its wrong-PIN count outlives sessions on purpose,
    # so each test starts from none.
    pins.path.with_name(pins.path.stem + ".attempts.json").unlink(missing_ok=True)
    host = FakeHost()
    return ConsoleSession(ConfigStore(tmp_path / "kiosk.toml"), pins, host, now=0.0), host


def _say(session: ConsoleSession, line: str, now: float) -> str:
    return session.feed((line + "\r").encode(), now).decode()


def test_reading_is_open_and_changing_needs_the_pin(tmp_path: Path, pin_file: PinFile) -> None:
    s, host = _session(tmp_path, pin_file)
    assert "console.baud = 115200" in _say(s, "show console", 1)
    assert "service: running" in _say(s, "status", 2)
    assert "line 2" in _say(s, "logs 3", 3)
    for command in ("set tts.volume 0.5", "save", "unset tts.volume", "revert",
                    "test tts hello", "restart"):
        assert "log in first" in _say(s, command, 4)
    assert host.restarts == 0 and host.spoken == []


def test_pin_is_masked_and_unlocks(tmp_path: Path, pin_file: PinFile) -> None:
    s, host = _session(tmp_path, pin_file)
    _say(s, "login", 1)
    out = _say(s, PIN, 2)
    assert PIN not in out and "****" in out and "logged in" in out
    assert out.endswith("kiosk# ")
    assert "applied now" in _say(s, "set tts.volume 0.5", 3)
    assert "spoke 5" in _say(s, "test tts hello", 4) and host.spoken == ["hello"]
    assert "-32 dBFS" in _say(s, "test mic", 5)
    assert "restarting" in _say(s, "restart", 6)


def test_pasted_login_and_pin_in_one_read_never_echo_the_pin(
        tmp_path: Path, pin_file: PinFile) -> None:
    s, _ = _session(tmp_path, pin_file)
    out = s.feed(f"login\r{PIN}\r".encode(), 1).decode()
    assert PIN not in out and "logged in" in out


def test_wrong_pins_lock_out_with_doubling_back_off(tmp_path: Path, pin_file: PinFile) -> None:
    s, _ = _session(tmp_path, pin_file)
    for i in range(2):
        _say(s, "login", i)
        assert "tries left" in _say(s, "0000", i)
    _say(s, "login", 3)
    assert "locked for 30 s" in _say(s, "0000", 3)
    assert "try again in" in _say(s, "login", 10)
    _say(s, "login", 34)
    assert "locked for 60 s" in _say(s, "1111", 34)  # the next failure doubles it
    assert "try again in" in _say(s, "login", 80)
    _say(s, "login", 95)
    assert "logged in" in _say(s, PIN, 95)


def test_idle_console_locks_itself(tmp_path: Path, pin_file: PinFile) -> None:
    s, _ = _session(tmp_path, pin_file)
    _say(s, "login", 0)
    _say(s, PIN, 1)
    assert s.tick(200) == b""
    assert b"locked" in s.tick(301)
    assert "log in first" in _say(s, "set tts.volume 0.5", 302)


def test_japanese_value_bad_value_diff_and_save(tmp_path: Path, pin_file: PinFile) -> None:
    s, _ = _session(tmp_path, pin_file)
    _say(s, "login", 0)
    _say(s, PIN, 1)
    assert "ja/カフェ.md" in _say(s, 'set screen.fixed_page "ja/カフェ.md"', 2)
    bad = _say(s, "set console.idle_logout_s 5", 3)
    assert "error" in bad and "console.idle_logout_s" in bad and "from 30 to 86400" in bad
    assert "after restart" in _say(s, "set echo.mode off", 4)
    diff = _say(s, "diff", 5)
    assert "screen.fixed_page" in diff and "echo.mode: 'speex' -> 'off'  (after restart)" in diff
    assert "restart to apply: echo.mode" in _say(s, "save", 6)
    assert "ja/カフェ.md" in (tmp_path / "kiosk.toml").read_text("utf-8")


def test_ctrl_c_abandons_a_pin_prompt(tmp_path: Path, pin_file: PinFile) -> None:
    s, _ = _session(tmp_path, pin_file)
    _say(s, "login", 0)
    out = s.feed(b"12\x03", 1).decode()
    assert out.endswith("kiosk> ")
    assert "unknown command" in _say(s, "2468", 2)  # typed in the clear now, not a PIN


def test_without_a_pin_set_login_says_how_to_set_one(tmp_path: Path) -> None:
    s = ConsoleSession(ConfigStore(tmp_path / "k.toml"), PinFile(tmp_path / "none.json"),
                       FakeHost(), 0.0)
    assert "kiosk config set-pin" in _say(s, "login", 1)


def test_pin_format_is_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="4 to 32 digits"):
        PinFile(tmp_path / "p.json").set("12a")


_FUZZ_SETTINGS = settings(max_examples=300, deadline=1000,
                          suppress_health_check=[HealthCheck.function_scoped_fixture])


@_FUZZ_SETTINGS
@given(chunks=st.lists(st.binary(max_size=64), max_size=20))
def test_random_bytes_never_crash_or_hang(tmp_path: Path, pin_file: PinFile,
                                         chunks: list[bytes]) -> None:
    s, _ = _session(tmp_path, pin_file)
    for i, chunk in enumerate(chunks):
        assert isinstance(s.feed(chunk, float(i)), bytes)


_WORDS = st.sampled_from(["set", "get", "show", "unset", "diff", "save", "revert", "logs",
                          "test", "tts", "mic", "status", "help", "echo.mode", "tts.volume",
                          "console", "1", "-5", "x" * 40, '"', "'", "カフェ", "nope", "login"])


@_FUZZ_SETTINGS
@given(lines=st.lists(st.lists(_WORDS | st.text(string.printable, max_size=8), max_size=4),
                      max_size=10))
def test_random_command_lines_always_get_an_answer(tmp_path: Path, pin_file: PinFile,
                                                   lines: list[list[str]]) -> None:
    s, _ = _session(tmp_path, pin_file)
    s.auth.admin = True  # reach the commands that change things, too
    for i, words in enumerate(lines):
        line = " ".join(words).replace("\r", " ").replace("\n", " ").replace("\x03", " ")
        out = s.feed((line + "\r").encode(), float(i)).decode("utf-8", "replace")
        reply = out.split("\r\n", 1)[1] if "\r\n" in out else ""
        answer = reply.rsplit("kiosk", 1)[0]
        if line.strip() and not s._awaiting_pin:
            assert answer.strip(), f"no answer to {line!r}"
        if s._awaiting_pin:
            s.feed(b"\x03", float(i))


def test_service_restart_goes_through_the_request_file(tmp_path: Path) -> None:
    from firmware_bridge.consolehost import RingLog, StandaloneHost
    from kiosk.configstore import ConfigStore

    request = tmp_path / "restart-request"
    host = StandaloneHost(ConfigStore(tmp_path / "kiosk.toml"), RingLog(), request)
    assert "restart requested" in host.restart()
    first = request.read_text()
    assert float(first) > 0
    host.restart()  # a second request changes the file again: the path unit fires again
    assert host.restarts == 2


def test_report_needs_the_pin_and_reads_the_services_turn_counts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pin_file: PinFile) -> None:
    from firmware_bridge.consolehost import RingLog, StandaloneHost
    from kiosk.configstore import ConfigStore
    from kiosk.logs import TurnLog

    locked = ConsoleSession(ConfigStore(tmp_path / "kiosk.toml"), pin_file, FakeHost(), now=0.0)
    refused = _say(locked, "report", 0)  # it can show visitors' words: the PIN first
    assert "report: 3 turns" not in refused and "login" in refused
    logs = tmp_path / "logs"
    monkeypatch.setenv("LOGS_DIRECTORY", str(logs))
    monkeypatch.setenv("KIOSK_STATE_DIR", str(tmp_path / "state"))
    turns = TurnLog(logs, store_transcripts=False, retention_days=7)
    for page in ("en/cafe.md", "en/cafe.md", None):
        turns.record({"utterance": "zebra crossing", "kind": "independent", "act": None,
                      "page": page})
    host = StandaloneHost(ConfigStore(tmp_path / "kiosk.toml"), RingLog())
    text = host.report("7d")
    assert "      2  en/cafe.md" in text and "counts only" in text and "zebra" not in text
    assert "write it like 7d" in host.report("soon")
    assert "site sync: site.sync_url is empty" in host.status()


def test_the_lock_out_outlives_the_session_and_the_process(tmp_path: Path) -> None:
    """Closing and reopening the port (a new session) or restarting the console (a new
    PinFile on the same folder) starts no fresh count: the failures and the lock-out end are
    kept beside the PIN hash, and the back-off goes on doubling."""
    pins = PinFile(tmp_path / "admin-pin.json")
    pins.set(PIN)
    store_path = tmp_path / "kiosk.toml"
    for i in range(3):  # three sessions, one wrong PIN each
        s = ConsoleSession(ConfigStore(store_path), pins, FakeHost(), now=float(i))
        _say(s, "login", i)
        out = _say(s, "0000", i)
    assert "locked for 30 s" in out
    restarted = ConsoleSession(ConfigStore(store_path), PinFile(tmp_path / "admin-pin.json"),
                               FakeHost(), now=10.0)
    assert "try again in 22 s" in _say(restarted, "login", 10)
    _say(restarted, "login", 40)
    assert "locked for 60 s" in _say(restarted, "0000", 40)  # doubled across sessions
    again = ConsoleSession(ConfigStore(store_path), pins, FakeHost(), now=50.0)
    assert "try again in" in _say(again, "login", 50)
    _say(again, "login", 101)
    assert "logged in" in _say(again, PIN, 101)
    fresh = ConsoleSession(ConfigStore(store_path), pins, FakeHost(), now=102.0)
    _say(fresh, "login", 102)
    assert "2 tries left" in _say(fresh, "0000", 102)  # a good PIN cleared the count


def test_the_longest_lock_out_makes_guessing_a_pin_take_years(tmp_path: Path) -> None:
    from firmware_bridge.pin import MAX_LOCKOUT_S, PinAttempts

    attempts = PinAttempts(tmp_path / "a.json")
    now, waited = 0.0, 0.0
    for _ in range(200):
        wait = attempts.failed(now, limit=3, lockout_s=30)
        now += wait
        waited += wait
    assert wait == MAX_LOCKOUT_S
    # half of the 10,000 4-digit PINs at one guess per longest lock-out
    assert (5000 - 200) * MAX_LOCKOUT_S / (365 * 86400) > 10


def test_a_pin_typed_at_the_wrong_moment_is_never_said_back(tmp_path: Path,
                                                            pin_file: PinFile) -> None:
    s, _ = _session(tmp_path, pin_file)
    out = _say(s, PIN, 1)
    assert "unknown command" in out and f"'{PIN}'" not in out


def test_line_watch_counts_a_line_only_after_it_was_seen_up() -> None:
    from firmware_bridge.console import LineWatch

    watch = LineWatch()
    # an adapter that wires nothing: lines low or unreadable for ever lock nobody out
    assert watch.dropped({"dsr": False, "cd": None, "cts": False}) is None
    assert watch.dropped({"dsr": True, "cd": None, "cts": False}) is None
    assert watch.dropped({"dsr": True, "cd": None, "cts": False}) is None
    assert watch.dropped({"dsr": False, "cd": None, "cts": False}) == "dsr"
    assert watch.dropped({"dsr": False, "cd": None, "cts": False}) is None  # one edge, one drop
    assert watch.dropped({"dsr": True, "cd": True, "cts": False}) is None
    assert watch.dropped({"dsr": True, "cd": None, "cts": False}) is None  # unreadable: no edge
    assert watch.dropped({"dsr": True, "cd": False, "cts": False}) == "cd"


def test_hangup_locks_and_forgets_the_half_typed_line(tmp_path: Path, pin_file: PinFile) -> None:
    s, _ = _session(tmp_path, pin_file)
    _say(s, "login", 1)
    assert "logged in" in _say(s, PIN, 1)
    s.feed(b"set tts.volume 0.1", 2)  # typed, not sent, when the cable is pulled
    out = s.hangup("DSR dropped").decode()
    assert "DSR dropped: locked" in out and out.endswith("kiosk> ")
    assert "log in first" in _say(s, "set tts.volume 0.9", 3)
    assert "unknown command 'x'" in _say(s, "x", 3)  # nothing of the old line is left
    _say(s, "login", 4)
    s.hangup("line lost")  # in the middle of typing the PIN
    assert s.prompt == "kiosk> " and not s.editor.masked


class ScriptedPort:
    """A serial port whose reads and modem lines follow a script, one step per read."""

    def __init__(self, steps: list[tuple[dict[str, bool | None], bytes | Exception]]) -> None:
        self.steps = steps
        self.lines: dict[str, bool | None] = {"dsr": None, "cd": None, "cts": None}
        self.written = bytearray()
        self.closed = False

    def __getattr__(self, name: str) -> bool:
        if name in ("dsr", "cd", "cts"):
            state = self.lines[name]
            if state is None:
                raise OSError(25, "Inappropriate ioctl for device")
            return state
        raise AttributeError(name)

    def read(self, size: int = 1) -> bytes:
        if not self.steps:
            return b""
        _, data = self.steps.pop(0)
        if isinstance(data, Exception):
            raise data
        if self.steps:
            self.lines = self.steps[0][0]
        return data

    def write(self, data: bytes, /) -> int:
        self.written += data
        return len(data)

    def close(self) -> None:
        self.closed = True


def test_serve_logs_out_when_the_terminal_drops_dsr(tmp_path: Path, pin_file: PinFile) -> None:
    """Laptop and USB adapter unplugged from the kiosk's port: DSR (or CD) falls, and the
    next person at the port meets a locked console, well within idle_logout_s."""
    from firmware_bridge.console import serve

    up: dict[str, bool | None] = {"dsr": True, "cd": False, "cts": None}
    down: dict[str, bool | None] = {"dsr": False, "cd": False, "cts": None}
    port = ScriptedPort([(up, b"login\r"), (up, PIN.encode() + b"\r"),
                         (up, b"set tts.volume 0.2\r"), (down, b""), (down, b""),
                         (up, b"set tts.volume 0.3\r")])
    port.lines = up
    s, _ = _session(tmp_path, pin_file)
    serve(lambda: port, lambda now: s, stop=lambda: port.closed or not port.steps,
          clock=lambda: 5.0)
    text = port.written.decode()
    before, after = text.split("(DSR dropped: locked)")
    assert "logged in" in before and "tts.volume = 0.2" in before
    assert "log in first" in after and s.store.pending.tts.volume == 0.2


def test_serve_starts_locked_after_the_port_fails(tmp_path: Path, pin_file: PinFile) -> None:
    """A read error (adapter pulled out, pty closed): the port is reopened with a new session,
    and the admin session of the person before is gone."""
    import serial

    from firmware_bridge.console import serve

    none: dict[str, bool | None] = {"dsr": None, "cd": None, "cts": None}
    first = ScriptedPort([(none, b"login\r"), (none, PIN.encode() + b"\r"),
                          (none, serial.SerialException("device disconnected"))])
    second = ScriptedPort([(none, b"set tts.volume 0.3\r")])
    ports = [first, second]
    store = ConfigStore(tmp_path / "kiosk.toml")
    pin_file.path.with_name(pin_file.path.stem + ".attempts.json").unlink(missing_ok=True)
    serve(lambda: ports.pop(0), lambda now: ConsoleSession(store, pin_file, FakeHost(), now),
          stop=lambda: second.closed or (not ports and not second.steps), clock=lambda: 5.0)
    assert first.closed and "logged in" in first.written.decode()
    assert "log in first" in second.written.decode()


def test_set_pin_as_root_keeps_the_console_s_file_and_lifts_the_lock_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The README's recovery: a locked-out installer asks root to run `kiosk config set-pin`.
    It used to leave a root-owned 0600 file the console's user could not read, and the lock-out
    in place."""
    import io
    import os

    from firmware_bridge.pin import PinAttempts
    from kiosk.__main__ import main

    config = tmp_path / "kiosk.toml"
    pins = PinFile(tmp_path / "admin-pin.json")
    pins.set(PIN)
    attempts = PinAttempts(pins.attempts_path)
    for _ in range(8):
        attempts.failed(1000.0, limit=5, lockout_s=60.0)
    assert attempts.read()[1] > 1000.0  # locked out
    console_user = (4321, 4321) if os.geteuid() == 0 else (os.geteuid(), os.getegid())
    os.chown(pins.path, *console_user)
    pins.path.chmod(0o640)

    monkeypatch.setattr("sys.stdin", io.StringIO("13579\n"))
    assert main(["--config", str(config), "config", "set-pin"]) == 0
    assert "lock-out cleared" in capsys.readouterr().out
    st = pins.path.stat()
    assert (st.st_uid, st.st_gid) == console_user and st.st_mode & 0o7777 == 0o640
    assert not pins.attempts_path.exists() and attempts.read() == (0, 0.0)
    assert pins.verify("13579") and not pins.verify(PIN)
    session = ConsoleSession(ConfigStore(config), pins, FakeHost(), now=2000.0)
    session.feed(b"login\r", 2000.0)
    assert b"logged in" in session.feed(b"13579\r", 2000.0)


def test_a_pin_on_the_command_line_is_refused(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    """`kiosk config pin-hash 246810` printed the hash of whatever came on stdin, and the PIN
    went into ps and the shell's history."""
    import io

    from kiosk.__main__ import main

    for action in ("pin-hash", "set-pin"):
        monkeypatch.setattr("sys.stdin", io.StringIO("97531\n"))
        assert main(["--config", str(tmp_path / "kiosk.toml"), "config", action, "246810"]) == 2
        out = capsys.readouterr()
        assert out.out == "" and "takes no PIN on the command line" in out.err
    assert not (tmp_path / "admin-pin.json").exists()
