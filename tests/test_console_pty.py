"""The console end to end, as an installer meets it: `kiosk console` on a real pseudo-terminal,
driven from the other end with the bytes a terminal sends."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
import tty
from pathlib import Path

import pytest

PIN = "97531"
pytestmark = pytest.mark.slow


class Terminal:
    def __init__(self, tmp_path: Path, config: Path) -> None:
        self.master, slave = pty.openpty()
        tty.setraw(slave)
        self.device = os.ttyname(slave)
        self.config = config
        self.proc: subprocess.Popen[bytes] | None = None
        self._slave = slave
        self.start()

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kiosk", "--config", str(self.config), "console",
             "--port", self.device],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.read_until(b"kiosk> ")

    def stop(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(timeout=10)

    def read_until(self, marker: bytes, timeout_s: float = 20.0) -> str:
        data = b""
        end = time.monotonic() + timeout_s
        while marker not in data:
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {marker!r} within {timeout_s} s; got {data!r}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                data += os.read(self.master, 4096)
        return data.decode("utf-8", "replace")

    def type(self, text: str, until: bytes = b"> ") -> str:
        for ch in text.encode():  # key by key, as a person types
            os.write(self.master, bytes([ch]))
        os.write(self.master, b"\r")
        return self.read_until(until)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.stop()
        os.close(self.master)
        os.close(self._slave)


def test_installer_session_over_a_pseudo_terminal(tmp_path: Path) -> None:
    config = tmp_path / "kiosk.toml"
    setpin = subprocess.run([sys.executable, "-m", "kiosk", "--config", str(config), "config",
                             "set-pin"], input=PIN + "\n", capture_output=True, text=True,
                            check=True)
    assert "salted scrypt hash" in setpin.stdout
    stored = json.loads((tmp_path / "admin-pin.json").read_text())
    # only the salted hash is kept: its hex digits may hold the PIN's digits by chance
    # (1 run in ~10,000), so the PIN is looked for everywhere else
    assert set(stored) == {"kdf", "n", "r", "p", "salt", "hash"}
    assert all(int(stored[k], 16) >= 0 for k in ("salt", "hash"))
    assert PIN not in json.dumps({k: v for k, v in stored.items() if k not in ("salt", "hash")})
    term = Terminal(tmp_path, config)
    try:
        assert "set KEY VALUE" in term.type("help")
        assert "log in first" in term.type("set tts.volume 0.5")
        term.type("login", until=b"PIN: ")
        wrong = term.type("1234")
        assert "wrong PIN" in wrong and "1234" not in wrong
        term.type("login", until=b"PIN: ")
        assert "logged in" in term.type(PIN, until=b"kiosk# ")
        # a typo fixed with backspace, then a bad value, then a Japanese one
        assert "applied now" in term.type("set tts.volumx\x7fe 0.8", until=b"kiosk# ")
        bad = term.type("set echo.mode loud", until=b"kiosk# ")
        assert "echo.mode = 'loud' is not allowed" in bad and "hardware, speex, off" in bad
        assert "ja/カフェ.md" in term.type("set screen.fixed_page ja/カフェ.md", until=b"kiosk# ")
        assert "saved 2 change(s)" in term.type("save", until=b"kiosk# ")
        assert "restarted" in term.type("restart", until=b"kiosk# ")
    finally:
        term.stop()
    # the service comes back (as systemd would start it) and reads the saved file
    term.start()
    try:
        assert "ja/カフェ.md" in term.type("get screen.fixed_page")
        assert "tts.volume = 0.8" in term.type("show tts")
        assert "log in first" in term.type("set tts.volume 0.1")  # a restart locks it again
    finally:
        term.close()


def test_cli_config_get_set_show(tmp_path: Path) -> None:
    config = tmp_path / "kiosk.toml"

    def kiosk(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "kiosk", "--config", str(config), "config",
                               *args], capture_output=True, text=True, check=False)

    assert kiosk("set", "console.idle_logout_s", "120").returncode == 0
    assert kiosk("get", "console.idle_logout_s").stdout.strip() == "120"
    assert "console.idle_logout_s = 120" in kiosk("show", "console").stdout
    bad = kiosk("set", "console.idle_logout_s", "abc")
    assert bad.returncode == 2 and "console.idle_logout_s" in bad.stderr
    assert "echo.mode (str" in kiosk("schema").stdout


def test_console_speaks_and_measures_on_the_sound_device(tmp_path: Path,
                                                        jack_server: None) -> None:
    config = tmp_path / "kiosk.toml"
    subprocess.run([sys.executable, "-m", "kiosk", "--config", str(config), "config", "set-pin"],
                   input=PIN + "\n", capture_output=True, text=True, check=True)
    term = Terminal(tmp_path, config)
    try:
        term.type("login", until=b"PIN: ")
        term.type(PIN, until=b"kiosk# ")
        status = term.type("status", until=b"kiosk# ")
        assert "output device: default ok" in status and "input device: default ok" in status
        spoke = term.type("test tts Hello. Welcome to the museum.", until=b"kiosk# ")
        assert "spoke" in spoke and "s of en speech" in spoke
        assert "dBFS" in term.type("test mic", until=b"kiosk# ")
        term.type("set audio.output_device nosuchcard", until=b"kiosk# ")
        bad = term.type("test tts hello", until=b"kiosk# ")
        assert 'audio.output_device "nosuchcard" not found' in bad and '"system"' in bad
        assert "output device: PROBLEM" in term.type("status", until=b"kiosk# ")
    finally:
        term.close()


def test_closing_the_terminal_logs_the_admin_out(tmp_path: Path) -> None:
    """The far end of the pseudo-terminal closes while an admin is logged in: the console
    says so in the journal at once, not after idle_logout_s."""
    config = tmp_path / "kiosk.toml"
    subprocess.run([sys.executable, "-m", "kiosk", "--config", str(config), "config",
                    "set-pin"], input=PIN + "\n", capture_output=True, text=True, check=True)
    term = Terminal(tmp_path, config)
    try:
        term.type("login", until=b"PIN: ")
        assert "logged in" in term.type(PIN, until=b"kiosk# ")
        os.close(term.master)
        assert term.proc is not None and term.proc.stderr is not None
        os.set_blocking(term.proc.stderr.fileno(), False)
        journal = b""
        end = time.monotonic() + 20.0
        while b"line lost: logged out" not in journal and time.monotonic() < end:
            select.select([term.proc.stderr], [], [], 1.0)
            journal += term.proc.stderr.read() or b""
        assert b"line lost: logged out" in journal, journal.decode(errors="replace")
    finally:
        term.stop()
        os.close(term._slave)
