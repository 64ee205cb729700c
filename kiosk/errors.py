"""Coded errors: every failure a user can meet names the thing and the fix."""

from __future__ import annotations


class KioskError(Exception):
    """An error with a stable code, a message naming the thing, and the fix."""

    def __init__(self, code: str, message: str, fix: str = "") -> None:
        self.code = code
        self.message = message
        self.fix = fix
        super().__init__(self.describe())

    def describe(self) -> str:
        text = f"{self.code}: {self.message}"
        if self.fix:
            text += f"; fix: {self.fix}"
        return text


class ConfigError(KioskError):
    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__("config", message, fix)


class ModelError(KioskError):
    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__("model", message, fix)


class SiteError(KioskError):
    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__("site", message, fix)


class SiteIndexError(KioskError):
    """Problems with the built site index file."""

    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__("index", message, fix)
