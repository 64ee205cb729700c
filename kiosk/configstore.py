"""The configuration on disk: pending changes, durable saves, and a fallback that never bricks.

A save writes a temporary file, fsyncs it, renames it over the old one and fsyncs the folder;
the previous good file is kept beside it (`.prev`). At start-up a corrupt or invalid file is
logged loudly and the last good one is used instead, or the defaults when there is none.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kiosk import config as cfgmod
from kiosk.config import Config
from kiosk.errors import ConfigError
from kiosk.fsutil import atomic_write_bytes

log = logging.getLogger(__name__)


def previous_path(path: Path) -> Path:
    return path.with_name(path.name + ".prev")


def try_load(path: Path) -> Config | str:
    """The configuration in a file, or why it cannot be used."""
    try:
        return cfgmod.loads(cfgmod.read_config_text(path), str(path))
    except ConfigError as exc:
        return exc.describe()


def load_with_fallback(path: Path) -> tuple[Config, str]:
    """The configuration to run with, and where it came from ("file", "previous", "defaults")."""
    for candidate, origin in ((path, "file"), (previous_path(path), "previous")):
        if not candidate.exists():
            continue
        loaded = try_load(candidate)
        if isinstance(loaded, Config):
            return loaded, origin
        log.error("CONFIG UNUSABLE: %s: %s; falling back to the last good configuration",
                  candidate, loaded)
    if path.exists():
        log.error("CONFIG UNUSABLE and no previous good file: running on the defaults")
    return Config(), "defaults"


@dataclass(frozen=True)
class Change:
    key: str
    saved: Any
    pending: Any
    live: bool


class ConfigStore:
    """Pending edits over the saved file; `apply_live` is told about live settings at once."""

    def __init__(self, path: Path,
                 apply_live: Callable[[Config, list[str]], None] | None = None) -> None:
        self.path = path
        self.saved, self.origin = load_with_fallback(path)
        self.pending = self.saved
        self.running = self.saved  # what the process started with (restart-only settings)
        self._apply_live = apply_live

    def get(self, key: str) -> Any:
        return cfgmod.get(self.pending, key)

    def set(self, key: str, text: str) -> str:
        value = cfgmod.parse_value(key, text)
        self.pending = cfgmod.with_value(self.pending, key, value)
        return self._applied(key)

    def unset(self, key: str) -> str:
        default = cfgmod.setting_for(key).default
        self.pending = cfgmod.with_value(self.pending, key, default)
        return self._applied(key)

    def _applied(self, key: str) -> str:
        if cfgmod.setting_for(key).live:
            if self._apply_live is not None:
                self._apply_live(self.pending, [key])
            return f"{key} = {cfgmod.get(self.pending, key)!r} (applied now; save to keep it)"
        return (f"{key} = {cfgmod.get(self.pending, key)!r} (takes effect after restart; "
                "save, then restart)")

    def diff(self) -> list[Change]:
        return [Change(k, cfgmod.get(self.saved, k), cfgmod.get(self.pending, k),
                       cfgmod.setting_for(k).live)
                for k in cfgmod.changed_keys(self.saved, self.pending)]

    def needs_restart(self) -> list[str]:
        return [k for k in cfgmod.changed_keys(self.running, self.saved)
                if not cfgmod.setting_for(k).live]

    def save(self) -> list[str]:
        """Write pending durably; returns the keys that changed. A file on disk that cannot be
        used is never written over: it holds settings somebody wrote by hand, and the values
        in memory came from elsewhere (the previous file, or the defaults)."""
        changed = cfgmod.changed_keys(self.saved, self.pending)
        data = cfgmod.dumps(self.pending).encode("utf-8")
        current: bytes | None = None
        if self.path.exists():
            try:
                text = cfgmod.read_config_text(self.path)
                cfgmod.loads(text, str(self.path))
                current = text.encode("utf-8")
            except ConfigError as exc:
                raise ConfigError(
                    f"not saved: {self.path} is not a usable configuration ({exc.describe()}); "
                    "saving would replace the settings written in it",
                    f"correct it by hand, or move it aside (mv {self.path} {self.path}.bad) "
                    "and save again") from exc
        try:
            if current is not None:
                atomic_write_bytes(previous_path(self.path), current)
            atomic_write_bytes(self.path, data)
        except OSError as exc:
            # A read-only folder, a full disk: nothing was replaced (the write is atomic).
            raise ConfigError(
                f"not saved: cannot write in {self.path.parent} ({exc.strerror or exc})",
                f"free space or make the folder writable (df -h {self.path.parent}; "
                f"ls -ld {self.path.parent}), then save again") from exc
        self.saved = self.pending
        self.origin = "file"
        return changed

    def revert(self) -> list[str]:
        changed = cfgmod.changed_keys(self.saved, self.pending)
        self.pending = self.saved
        if self._apply_live is not None:
            live = [k for k in changed if cfgmod.setting_for(k).live]
            if live:
                self._apply_live(self.pending, live)
        return changed
