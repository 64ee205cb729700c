"""The console's view of the appliance when the console runs on its own (`kiosk console`).

Until the voice loop runs in the same process, `test tts` and `test mic` say plainly that
there is no audio engine here; everything else is real.
"""

from __future__ import annotations

import collections
import logging

from kiosk.configstore import ConfigStore
from kiosk.models import load_manifest, verify


class RingLog(logging.Handler):
    """The last log lines, for `logs N` (the journal keeps the rest)."""

    def __init__(self, size: int = 500) -> None:
        super().__init__()
        self.lines: collections.deque[str] = collections.deque(maxlen=size)
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


class StandaloneHost:
    def __init__(self, store: ConfigStore, ring: RingLog) -> None:
        self.store = store
        self.ring = ring
        self.restarts = 0

    def status(self) -> str:
        cfg = self.store.saved
        models_dir = cfg.paths.models_path()
        manifest = load_manifest()
        models = ", ".join(f"{n} {'ok' if verify(e, models_dir) else 'MISSING'}"
                           for n, e in manifest.items() if e.install_by_default)
        restart = self.store.needs_restart()
        lines = [
            f"config: {self.store.path} (loaded from: {self.store.origin})",
            f"unsaved changes: {len(self.store.diff())}",
            f"saved but waiting for restart: {', '.join(restart) or 'none'}",
            f"models ({models_dir}): {models}",
            "voice loop: not running in this process (standalone console)",
        ]
        return "\n".join(lines)

    def test_tts(self, text: str) -> str:
        return "error: no speech synthesizer runs in the standalone console yet"

    def test_mic(self) -> str:
        return "error: no microphone is opened by the standalone console yet"

    def logs(self, count: int) -> list[str]:
        return list(self.ring.lines)[-count:]

    def restart(self) -> str:
        """The standalone console restarts by reading the saved file again."""
        fresh = ConfigStore(self.store.path)
        self.store.saved = self.store.pending = self.store.running = fresh.saved
        self.store.origin = fresh.origin
        self.restarts += 1
        logging.getLogger(__name__).info("console: restarted from %s", self.store.path)
        return f"restarted: settings of {self.store.path} are in effect"
