"""The console's admin PIN: stored only as a salted scrypt hash, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from pathlib import Path

from kiosk.errors import ConfigError
from kiosk.fsutil import atomic_write_bytes

_N, _R, _P = 2**14, 8, 1


def _derive(pin: str, salt: bytes, n: int = _N, r: int = _R, p: int = _P) -> bytes:
    return hashlib.scrypt(pin.encode("utf-8"), salt=salt, n=n, r=r, p=p, dklen=32)


def check_pin_format(pin: str) -> None:
    if not (4 <= len(pin) <= 32) or not pin.isdigit():
        raise ConfigError("the PIN must be 4 to 32 digits", "choose a longer numeric PIN")


class PinFile:
    def __init__(self, path: Path) -> None:
        self.path = path

    def is_set(self) -> bool:
        return self.path.is_file()

    def set(self, pin: str) -> None:
        check_pin_format(pin)
        salt = secrets.token_bytes(16)
        record = {"kdf": "scrypt", "n": _N, "r": _R, "p": _P, "salt": salt.hex(),
                  "hash": _derive(pin, salt).hex()}
        atomic_write_bytes(self.path, json.dumps(record).encode())
        self.path.chmod(0o600)

    def verify(self, pin: str) -> bool:
        try:
            record = json.loads(self.path.read_text(encoding="utf-8"))
            salt = bytes.fromhex(record["salt"])
            expected = bytes.fromhex(record["hash"])
            got = _derive(pin, salt, record["n"], record["r"], record["p"])
        except (OSError, ValueError, KeyError, TypeError):
            return False
        return hmac.compare_digest(got, expected)
