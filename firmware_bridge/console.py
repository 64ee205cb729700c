"""The installer's serial console: a pure session (bytes in, bytes out, time passed in) and
the loop that owns the port.

Anyone at the port may read (help, show, get, diff, status, logs); changing anything needs the
admin PIN (`login`). Wrong PINs lock the console out with doubling back-off; an unlocked
console locks itself again after `console.idle_logout_s` without input, and at once when the
person at the other end goes (the line drops or the port fails: `hangup`). The session neither
sleeps nor reads a clock: the caller passes `now` (seconds).
"""

from __future__ import annotations

import logging
import shlex
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from firmware_bridge.lineedit import Cancel, Line, LineEditor
from firmware_bridge.pin import PinAttempts, PinFile
from kiosk import config as cfgmod
from kiosk.configstore import ConfigStore
from kiosk.errors import KioskError

log = logging.getLogger(__name__)

PROMPT_LOCKED = "kiosk> "
PROMPT_ADMIN = "kiosk# "
PROMPT_PIN = "PIN: "

HELP = """\
commands (read-only ones need no PIN):
  help                 this list
  show [KEY|SECTION]   settings as they are now (* = changed, not saved)
  get KEY              one setting
  diff                 pending changes against the saved file
  status               service state, last turns, device health
  logs [N]             the last N log lines (default 20)
  login                unlock changes with the admin PIN
  logout               lock again
  set KEY VALUE        change a setting (PIN)
  unset KEY            back to the default (PIN)
  save                 write the changes to disk (PIN)
  revert               drop unsaved changes (PIN)
  test tts TEXT        speak TEXT (PIN)
  test mic             microphone level (PIN)
  restart              restart the service to apply saved settings (PIN)
  report [7d]          turns, answered share, pages asked about, what the site could not
                       answer (PIN: it can hold visitors' words)
"""


class ConsoleHost(Protocol):
    """What the console can ask of the running appliance."""

    def status(self) -> str: ...

    def test_tts(self, text: str) -> str: ...

    def test_mic(self) -> str: ...

    def logs(self, count: int) -> list[str]: ...

    def restart(self) -> str: ...

    def report(self, since: str) -> str: ...


@dataclass
class _Auth:
    admin: bool = False
    last_input: float = 0.0


class ConsoleSession:
    def __init__(self, store: ConfigStore, pins: PinFile, host: ConsoleHost, now: float,
                 banner: str = "kiosk-avatar console. Type help.") -> None:
        self.store = store
        self.pins = pins
        self.host = host
        self.editor = LineEditor()
        self.auth = _Auth(last_input=now)
        self.attempts = PinAttempts(pins.attempts_path)
        self._awaiting_pin = False
        self._greeting = f"\r\n{banner}\r\n{self.prompt}".encode()

    @property
    def prompt(self) -> str:
        if self._awaiting_pin:
            return PROMPT_PIN
        return PROMPT_ADMIN if self.auth.admin else PROMPT_LOCKED

    def greeting(self) -> bytes:
        return self._greeting

    # ------------------------------------------------------------ input

    def feed(self, data: bytes, now: float) -> bytes:
        out = bytearray(self.tick(now))
        if data:
            self.auth.last_input = now
        for i in range(len(data)):
            echo, events = self.editor.feed(data[i:i + 1])
            out += echo
            for event in events:
                if isinstance(event, Cancel):
                    self._awaiting_pin = False
                    self.editor.masked = False
                elif isinstance(event, Line):
                    out += self._line(event.text, now).replace("\n", "\r\n").encode()
                out += self.prompt.encode()
        return bytes(out)

    def tick(self, now: float) -> bytes:
        """Idle log-out; call it now and then when nothing arrives."""
        idle = self.store.pending.console.idle_logout_s
        if (self.auth.admin or self._awaiting_pin) and now - self.auth.last_input >= idle:
            self.auth.admin = False
            self._awaiting_pin = False
            self.editor.masked = False
            log.info("console: idle log-out")
            return f"\r\n(idle for {idle} s: locked)\r\n{self.prompt}".encode()
        return b""

    def hangup(self, why: str) -> bytes:
        """The person at the other end has gone: whoever comes next starts locked."""
        if self.auth.admin or self._awaiting_pin:
            log.info("console: %s: logged out", why)
        self.auth.admin = False
        self._awaiting_pin = False
        self.editor = LineEditor()  # nor is a half-typed line handed to the next person
        return f"\r\n({why}: locked)\r\n{self.prompt}".encode()

    def _line(self, text: str, now: float) -> str:
        if self._awaiting_pin:
            self._awaiting_pin = False
            self.editor.masked = False
            return self._check_pin(text.strip(), now)
        try:
            words = shlex.split(text)
        except ValueError as exc:
            return f"error: cannot read that line ({exc}); quote values with \"...\"\n"
        if not words:
            return ""
        command, args = words[0].lower(), words[1:]
        handler = self._commands().get(command)
        if handler is None:
            if any(ch.isdigit() for ch in command):
                # it may be a PIN typed at the wrong moment: never said back in clear
                return "error: unknown command; type help\n"
            return f"error: unknown command {command!r}; type help\n"
        needs_pin, func = handler
        if needs_pin and not self.auth.admin:
            return f"error: {command} changes the kiosk; log in first (login)\n"
        try:
            return func(args, now)
        except KioskError as exc:
            return f"error: {exc.describe()}\n"

    # ------------------------------------------------------------ auth

    def _login(self, args: list[str], now: float) -> str:
        if self.auth.admin:
            return "already logged in\n"
        if not self.pins.is_set():
            return ("error: no admin PIN is set on this kiosk; set one with: "
                    "kiosk config set-pin\n")
        _, locked_until = self.attempts.read()
        if now < locked_until:
            return f"error: locked after wrong PINs; try again in {locked_until - now:.0f} s\n"
        self._awaiting_pin = True
        self.editor.masked = True
        return ""

    def _check_pin(self, pin: str, now: float) -> str:
        failures, locked_until = self.attempts.read()
        if now < locked_until:
            return f"error: locked; try again in {locked_until - now:.0f} s\n"
        if pin and self.pins.verify(pin):
            self.auth.admin = True
            self.attempts.succeeded()
            log.info("console: admin login")
            return "logged in: changes allowed\n"
        limit = self.store.pending.console.max_pin_failures
        wait = self.attempts.failed(now, limit, self.store.pending.console.lockout_s)
        log.warning("console: wrong PIN (%d)", failures + 1)
        if wait:
            return f"error: wrong PIN; locked for {wait:.0f} s\n"
        return f"error: wrong PIN ({limit - failures - 1} tries left)\n"

    def _logout(self, args: list[str], now: float) -> str:
        self.auth.admin = False
        return "logged out\n"

    # ------------------------------------------------------------ commands

    def _commands(self) -> dict[str, tuple[bool, Callable[[list[str], float], str]]]:
        return {
            "help": (False, lambda a, n: HELP),
            "?": (False, lambda a, n: HELP),
            "show": (False, self._show),
            "get": (False, self._get),
            "diff": (False, self._diff),
            "status": (False, lambda a, n: self.host.status() + "\n"),
            "logs": (False, self._logs),
            "login": (False, self._login),
            "logout": (False, self._logout),
            "exit": (False, self._logout),
            "set": (True, self._set),
            "unset": (True, self._unset),
            "save": (True, self._save),
            "revert": (True, self._revert),
            "test": (True, self._test),
            "restart": (True, lambda a, n: self.host.restart() + "\n"),
            "report": (True, self._report),
        }

    def _show(self, args: list[str], now: float) -> str:
        prefix = args[0] if args else ""
        rows = [s for s in cfgmod.schema()
                if not prefix or s.key == prefix or s.key.startswith(prefix + ".")]
        if not rows:
            cfgmod.setting_for(prefix)  # raises with the nearest names
        changed = {c.key for c in self.store.diff()}
        return "".join(f"{'*' if s.key in changed else ' '} {s.key} = "
                       f"{self.store.get(s.key)!r}\n" for s in rows)

    def _get(self, args: list[str], now: float) -> str:
        if len(args) != 1:
            return "usage: get KEY\n"
        s = cfgmod.setting_for(args[0])
        when = "live" if s.live else "after restart"
        return f"{s.key} = {self.store.get(s.key)!r}  ({s.type_name}, {when}: {s.doc})\n"

    def _set(self, args: list[str], now: float) -> str:
        if len(args) < 2:
            return "usage: set KEY VALUE\n"
        return self.store.set(args[0], " ".join(args[1:])) + "\n"

    def _unset(self, args: list[str], now: float) -> str:
        if len(args) != 1:
            return "usage: unset KEY\n"
        return self.store.unset(args[0]) + "\n"

    def _diff(self, args: list[str], now: float) -> str:
        changes = self.store.diff()
        if not changes:
            return "no unsaved changes\n"
        return "".join(f"{c.key}: {c.saved!r} -> {c.pending!r}"
                       f"{'' if c.live else '  (after restart)'}\n" for c in changes)

    def _save(self, args: list[str], now: float) -> str:
        changed = self.store.save()
        log.info("console: saved %s", ", ".join(changed) or "(no changes)")
        restart = self.store.needs_restart()
        tail = f"; restart to apply: {', '.join(restart)}" if restart else ""
        return f"saved {len(changed)} change(s) to {self.store.path}{tail}\n"

    def _revert(self, args: list[str], now: float) -> str:
        changed = self.store.revert()
        return f"reverted {len(changed)} change(s)\n"

    def _logs(self, args: list[str], now: float) -> str:
        try:
            count = int(args[0]) if args else 20
        except ValueError:
            return "usage: logs [N]\n"
        lines = self.host.logs(max(1, min(count, 500)))
        return "".join(f"{line}\n" for line in lines) or "(no log lines)\n"

    def _report(self, args: list[str], now: float) -> str:
        if len(args) > 1:
            return "usage: report [PERIOD like 7d, 24h, 2w]\n"
        return self.host.report(args[0] if args else "7d")

    def _test(self, args: list[str], now: float) -> str:
        if args[:1] == ["tts"] and len(args) > 1:
            return self.host.test_tts(" ".join(args[1:])) + "\n"
        if args == ["mic"]:
            return self.host.test_mic() + "\n"
        return "usage: test tts TEXT | test mic\n"


MODEM_LINES = ("dsr", "cd", "cts")


class LineWatch:
    """Falling edges of the modem status lines: the terminal at the other end was closed or
    unplugged. A line counts only once it has been seen up, because adapters that do not wire
    it read it low (or cannot read it: None) for ever, and that must not lock anybody out."""

    def __init__(self) -> None:
        self._up: set[str] = set()

    def dropped(self, lines: Mapping[str, bool | None]) -> str | None:
        gone = None
        for name, state in lines.items():
            if state:
                self._up.add(name)
            elif state is False and name in self._up:
                self._up.discard(name)
                gone = gone or name
        return gone


class Port(Protocol):
    """The part of a pyserial port the console uses (tests pass their own)."""

    def read(self, size: int = 1) -> bytes: ...

    def write(self, data: bytes, /) -> int | None: ...

    def close(self) -> None: ...


def modem_lines(port: Port) -> dict[str, bool | None]:
    """DSR, CD and CTS where the port can report them (a pseudo-terminal cannot: None)."""
    lines: dict[str, bool | None] = {}
    for name in MODEM_LINES:
        try:
            lines[name] = bool(getattr(port, name))
        except (OSError, AttributeError, ValueError):  # SerialException is an OSError
            lines[name] = None
    return lines


def open_serial(url: str, baud: int) -> Callable[[], Port]:
    def opener() -> Port:
        import serial

        port: Port = serial.serial_for_url(url, baudrate=baud, timeout=0.2)
        return port
    return opener


def serve(open_port: Callable[[], Port], make_session: Callable[[float], ConsoleSession],
          stop: Callable[[], bool], clock: Callable[[], float], name: str = "port") -> None:
    """Own the port: read, feed the session, write; log out when the line drops; reopen the
    port if it goes away (a fresh session: nobody is logged in on the new one)."""
    import serial

    backoff_s = 0.5
    while not stop():
        try:
            port = open_port()
        except (serial.SerialException, OSError) as exc:
            log.warning("console: cannot open %s (%s); retrying in %.1f s", name, exc, backoff_s)
            time.sleep(backoff_s)  # the port owner waits for the device to come back
            backoff_s = min(backoff_s * 2, 5.0)
            continue
        backoff_s = 0.5
        session = make_session(clock())
        watch = LineWatch()
        try:
            port.write(session.greeting())
            while not stop():
                gone = watch.dropped(modem_lines(port))
                if gone:
                    port.write(session.hangup(f"{gone.upper()} dropped"))
                data = port.read(256)
                out = session.feed(data, clock()) if data else session.tick(clock())
                if out:
                    port.write(out)
        except (serial.SerialException, OSError) as exc:
            session.hangup("line lost")
            log.warning("console: %s lost (%s); reopening", name, exc)
        finally:
            port.close()
