"""`kiosk bench soak`: a long simulated conversation through the recorded-audio pipeline (the
live loop's own code), checking that nothing leaks: turns, errors, RSS and open file
descriptors after warm-up and at the end (each the peak over a window of up to 5 minutes).

Visitors are the English demo dialogues spoken by the project's voice; a question is followed
by quiet (the reply plays), a dialogue by a pause long enough to count as a new visitor. The
room has a faint noise floor. Audio time runs faster than real time where the loop is idle.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from kiosk.app import TurnRecord, VoiceLoop
from kiosk.audio.format import RATE_HZ, Samples
from kiosk.audio.recorded import RecordedStream
from kiosk.bench import rss_mb
from kiosk.config import DEMO_DIR, Config
from kiosk.eval import load_dialogues
from kiosk.tts import Synthesizer, spoken
from kiosk.wiring import load_brain, recognizer_for, synthesizer, voice_activity

WARM_UP_MS = 120_000  # stream time before the "start" figures are taken
WINDOW_MS = 300_000  # RSS is the peak over a window: single readings swing by +-40 MB
REPLY_ROOM_S = 12  # quiet after each question: the reply plays
VISITOR_GAP_S = 50  # longer than the loop's new-visitor pause


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def conversation(tts: Synthesizer, minutes: float) -> Iterator[Samples]:
    """The visitors' side, piece by piece, until `minutes` of audio."""
    rng = np.random.default_rng(7)
    floor = (rng.standard_normal(RATE_HZ) * 30).astype(np.int16)  # about -60 dBFS
    dialogues = load_dialogues(DEMO_DIR / "dialogues" / "en.jsonl")
    said: dict[str, Samples] = {}
    limit = int(minutes * 60 * RATE_HZ)
    total = 0
    while True:
        for dialogue in dialogues:
            for turn in dialogue.turns:
                if turn.user not in said:
                    said[turn.user] = spoken(tts, turn.user) // 2 + floor[0]
                for piece in [said[turn.user], *[floor] * REPLY_ROOM_S]:
                    yield piece
                    total += len(piece)
                if total >= limit:
                    return
            for _ in range(VISITOR_GAP_S):
                yield floor
                total += len(floor)


class _ErrorCount(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def run(cfg: Config, minutes: float = 60.0) -> dict[str, Any]:
    tts = synthesizer(cfg, "en")
    brain = load_brain(cfg)
    vad = voice_activity(cfg)
    stream = RecordedStream(conversation(tts, minutes), keep_speaker=False)
    total_ms = minutes * 60_000
    warm_ms, window_ms = min(WARM_UP_MS, 0.2 * total_ms), min(WINDOW_MS, 0.2 * total_ms)
    readings: list[tuple[int, float, int]] = []  # (stream ms, RSS MB, open descriptors)
    turns: list[TurnRecord] = []

    def on_turn(turn: TurnRecord) -> None:
        turns.append(turn)
        readings.append((turn.speech_start_ms, rss_mb(), open_fds()))

    errors = _ErrorCount()
    logging.getLogger().addHandler(errors)
    loop = VoiceLoop(stream, brain, vad, recognizer_for(cfg, "en"), {"en": tts, "ja": tts},
                     on_turn=on_turn)
    start = time.perf_counter()
    try:
        asyncio.run(loop.run(asyncio.Event()))
    finally:
        loop.close()
        logging.getLogger().removeHandler(errors)
    wall_s = time.perf_counter() - start
    readings.append((stream.clock_ms, rss_mb(), open_fds()))
    first = [r for r in readings if warm_ms <= r[0] < warm_ms + window_ms] or readings[:1]
    last = [r for r in readings if r[0] >= stream.clock_ms - window_ms]
    start_rss, end_rss = max(r[1] for r in first), max(r[1] for r in last)
    return {
        "turns": len(turns),
        "errors": loop.errors + errors.count,
        "rss_mb": {"start": round(start_rss, 1), "end": round(end_rss, 1)},
        "fds": {"start": max(r[2] for r in first), "end": max(r[2] for r in last)},
        "rss_growth_pct": round(100.0 * (end_rss - start_rss) / max(start_rss, 1.0), 2),
        "audio_minutes": round(stream.clock_ms / 60_000, 1),
        "avatar_speech_minutes": round(stream.played_ms / 60_000, 1),
        "wall_s": round(wall_s, 1),
    }
