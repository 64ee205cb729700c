"""The console's admin PIN: stored only as a salted scrypt hash, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path

from kiosk.errors import ConfigError
from kiosk.fsutil import atomic_write_bytes

_N, _R, _P = 2**14, 8, 1
# The longest single lock-out: the back-off doubles up to here, so brute force past the limit
# proceeds at one guess a day (a 4-digit PIN: 10,000 guesses, ~13.7 years on average), while
# the installer who mistypes is back within a day (or resets the PIN as root: set-pin).
MAX_LOCKOUT_S = 86_400.0


def _derive(pin: str, salt: bytes, n: int = _N, r: int = _R, p: int = _P) -> bytes:
    return hashlib.scrypt(pin.encode("utf-8"), salt=salt, n=n, r=r, p=p, dklen=32)


def check_pin_format(pin: str) -> None:
    if not (4 <= len(pin) <= 32) or not pin.isdigit():
        raise ConfigError("the PIN must be 4 to 32 digits", "choose a longer numeric PIN")


def pin_record(pin: str) -> str:
    """The stored form of a PIN (salted scrypt), as written to admin-pin.json; a fleet keeps
    this, never the PIN, in its inventory."""
    check_pin_format(pin)
    salt = secrets.token_bytes(16)
    return json.dumps({"kdf": "scrypt", "n": _N, "r": _R, "p": _P, "salt": salt.hex(),
                       "hash": _derive(pin, salt).hex()})


class PinFile:
    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def attempts_path(self) -> Path:
        """Where the console counts wrong PINs (PinAttempts)."""
        return self.path.with_name(self.path.stem + ".attempts.json")

    def is_set(self) -> bool:
        return self.path.is_file()

    def set(self, pin: str) -> None:
        """A new PIN, and a clean slate: the lock-out of the old one is lifted. The file keeps
        its owner and mode (a new one takes its folder's owner, mode 0600): `set-pin` run as
        root must leave a file the console's user can still read."""
        record = pin_record(pin).encode()
        try:
            st = self.path.stat()
            mode = st.st_mode & 0o7777
        except FileNotFoundError:
            st = self.path.parent.stat()
            mode = 0o600
        owner = (st.st_uid, st.st_gid) if os.geteuid() == 0 else None
        atomic_write_bytes(self.path, record, mode=mode, owner=owner)
        self.attempts_path.unlink(missing_ok=True)

    def verify(self, pin: str) -> bool:
        try:
            record = json.loads(self.path.read_text(encoding="utf-8"))
            salt = bytes.fromhex(record["salt"])
            expected = bytes.fromhex(record["hash"])
            got = _derive(pin, salt, record["n"], record["r"], record["p"])
        except (OSError, ValueError, KeyError, TypeError):
            return False
        return hmac.compare_digest(got, expected)


class PinAttempts:
    """Wrong PINs and the lock-out, kept beside the PIN hash and written durably, so closing
    the port, unplugging the adapter or restarting the console starts no fresh count. Times
    are the caller's clock (the console passes wall-clock seconds)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> tuple[int, float]:
        """(failures since the last good PIN, lock-out end)."""
        try:
            record = json.loads(self.path.read_text(encoding="utf-8"))
            return int(record["failures"]), float(record["locked_until"])
        except FileNotFoundError:
            return 0, 0.0
        except (OSError, ValueError, KeyError, TypeError):
            # Unreadable state must not reopen the door: treat it as locked for a lock-out.
            return 0, float("inf")

    def _write(self, failures: int, locked_until: float) -> None:
        atomic_write_bytes(self.path, json.dumps(
            {"failures": failures, "locked_until": locked_until}).encode())

    def failed(self, now: float, limit: int, lockout_s: float) -> float:
        """Count a wrong PIN; the lock-out it starts, in seconds (0: tries left)."""
        failures, locked_until = self.read()
        failures = failures + 1
        wait = 0.0
        if failures >= limit:
            wait = min(lockout_s * 2.0 ** (failures - limit), MAX_LOCKOUT_S)
        self._write(failures, now + wait if wait else locked_until)
        return wait

    def succeeded(self) -> None:
        if self.path.exists():
            self._write(0, 0.0)
