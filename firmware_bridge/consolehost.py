"""The console's view of the appliance when the console runs on its own (`kiosk console`):
the configuration, the models, the log, and the sound devices (`test tts` speaks on the
configured loudspeaker, `test mic` measures the configured microphone)."""

from __future__ import annotations

import collections
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np

from kiosk.configstore import ConfigStore
from kiosk.fsutil import atomic_write_bytes
from kiosk.models import load_manifest, verify
from kiosk.text import detect_lang
from kiosk.tts import Synthesizer


class RingLog(logging.Handler):
    """The last log lines, for `logs N` (the journal keeps the rest)."""

    def __init__(self, size: int = 500) -> None:
        super().__init__()
        self.lines: collections.deque[str] = collections.deque(maxlen=size)
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


class StandaloneHost:
    def __init__(self, store: ConfigStore, ring: RingLog,
                 restart_request: Path | None = None) -> None:
        self.store = store
        self.ring = ring
        # under systemd: a file whose change restarts kiosk.service (kiosk-restart.path)
        self.restart_request = restart_request
        self.restarts = 0
        self._voices: dict[str, Synthesizer] = {}

    def status(self) -> str:
        cfg = self.store.saved
        models_dir = cfg.paths.models_path()
        manifest = load_manifest()
        models = ", ".join(f"{n} {'ok' if verify(e, models_dir) else 'MISSING'}"
                           for n, e in manifest.items() if e.install_by_default)
        restart = self.store.needs_restart()
        lines = [
            f"config: {self.store.path} (loaded from: {self.store.origin})",
            # the devices as set now, saved or not: what `test tts` / `test mic` would use
            self._device_health("output", self.store.pending.audio.output_device),
            self._device_health("input", self.store.pending.audio.input_device),
            f"unsaved changes: {len(self.store.diff())}",
            f"saved but waiting for restart: {', '.join(restart) or 'none'}",
            f"models ({models_dir}): {models}",
            f"site sync: {self._sync_health(cfg)}",
            "voice loop: not running in this process (standalone console); "
            "last turns and stage latencies come from the service",
        ]
        return "\n".join(lines)

    @staticmethod
    def _sync_health(cfg: Any) -> str:
        from kiosk.doctor import check_sync
        from kiosk.models import default_state_dir

        check = check_sync(cfg, default_state_dir())
        return check.detail + (f" (fix: {check.fix})" if check.fix else "")

    @staticmethod
    def _device_health(kind: str, name: str) -> str:
        from kiosk.audio.devices import find_device
        from kiosk.errors import KioskError

        try:
            find_device(name, kind)
        except KioskError as exc:
            return f"{kind} device: PROBLEM: {exc.describe()}"
        return f"{kind} device: {name or 'default'} ok"

    def _synthesizer(self, lang: str) -> Synthesizer:
        if lang not in self._voices:
            from kiosk.wiring import synthesizer

            self._voices[lang] = synthesizer(self.store.pending, lang)
        return self._voices[lang]

    def test_tts(self, text: str) -> str:
        from kiosk.audio.devices import play
        from kiosk.audio.format import RATE_HZ

        lang = detect_lang(text)
        device = self.store.pending.audio.output_device
        start = time.monotonic()
        first_ms = None
        pieces = []
        for speech in self._synthesizer(lang).synthesize(text):
            if first_ms is None:
                first_ms = (time.monotonic() - start) * 1000.0
            pieces.append(speech.samples)
        audio = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int16)
        played_s = play(audio, device)
        return (f"spoke {len(audio) / RATE_HZ:.1f} s of {lang} speech on "
                f"{device or 'default'} (first sentence ready in {first_ms or 0:.0f} ms, "
                f"played in {played_s:.1f} s)")

    def test_mic(self) -> str:
        from kiosk.audio.devices import level_report, record

        device = self.store.pending.audio.input_device
        return level_report(record(1.0, device), device)

    def logs(self, count: int) -> list[str]:
        return list(self.ring.lines)[-count:]

    def report(self, since: str) -> str:
        """`kiosk report` over the service's logs folder."""
        from kiosk.errors import KioskError
        from kiosk.logs import logs_dir
        from kiosk.models import default_state_dir
        from kiosk.report import format_report, report_for
        from kiosk.wiring import query_encoder

        cfg = self.store.saved
        try:
            found = report_for(logs_dir(default_state_dir()), since,
                               lambda: query_encoder(cfg))
        except KioskError as exc:
            return exc.describe() + "\n"
        return format_report(found)

    def restart(self) -> str:
        """The standalone console restarts by reading the saved file again."""
        fresh = ConfigStore(self.store.path)
        self.store.saved = self.store.pending = self.store.running = fresh.saved
        self.store.origin = fresh.origin
        self.restarts += 1
        if self.restart_request is not None:
            atomic_write_bytes(self.restart_request, f"{time.time():.3f}\n".encode())
            logging.getLogger(__name__).info("console: asked systemd to restart the service")
            return "restart requested: the voice service starts again with the saved settings"
        logging.getLogger(__name__).info("console: restarted from %s", self.store.path)
        return f"restarted: settings of {self.store.path} are in effect"
