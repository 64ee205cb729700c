"""The voice turn over recorded audio: microphone WAV -> VAD segmenter -> recognizer -> brain
-> synthesizer -> loudspeaker WAV, with every stage timed and a turn record per turn.

This is the recorded-audio form of the loop (demo, tests, benchmarks); the live duplex loop on
sound devices builds on the same stages.
"""

from __future__ import annotations

import collections
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from kiosk.asr import Recognizer
from kiosk.audio.format import CHUNK_MS, RATE_HZ, AudioChunk, Samples, chunks
from kiosk.audio.vad import Segmenter, SileroVad, SpeechStarted, Utterance, warn_if_clipping
from kiosk.brain import Brain
from kiosk.dialogue.history import History
from kiosk.tts import Synthesizer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TurnRecord:
    utterance: str
    lang: str
    act: str | None
    kind: str
    query: str
    page: str | None
    reply: str
    speech_start_ms: int  # in the microphone recording
    last_voiced_ms: int
    eos_decided_ms: int
    asr_ms: float  # after the end-of-speech decision
    brain_ms: float
    first_audio_ms: float  # after the brain: the first sentence synthesized
    reply_start_ms: int  # where the reply starts in the loudspeaker recording

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_recorded(mic: Samples, brain: Brain, vad: SileroVad, asr: Recognizer,
                 voices: dict[str, Synthesizer], screen: Callable[[], str | None] = lambda: None,
                 segmenter: Segmenter | None = None) -> tuple[Samples, list[TurnRecord]]:
    """Run the whole recording through the loop; returns the loudspeaker audio and the turns."""
    segmenter = segmenter or Segmenter()
    speaker: list[Samples] = []
    speaker_len = 0
    history: History = ()
    turns: list[TurnRecord] = []
    vad.reset()
    # The recognizer hears the utterance while it is spoken (pre-roll included), so only its
    # finalization is left after the end-of-speech decision.
    recent: collections.deque[AudioChunk] = collections.deque(
        maxlen=segmenter.params.pre_roll_ms // CHUNK_MS + 1)
    listening = False
    for chunk in chunks(mic):
        recent.append(chunk)
        events = segmenter.feed(chunk, vad.probability(chunk.samples))
        if listening:
            asr.accept(chunk.samples)
        for event in events:
            if isinstance(event, SpeechStarted):
                asr.start()
                for earlier in recent:
                    asr.accept(earlier.samples)
                listening = True
                continue
            if not isinstance(event, Utterance):
                continue
            listening = False
            warn_if_clipping(event, log)
            t0 = time.perf_counter()
            text = asr.finish().strip()
            t1 = time.perf_counter()
            if event.cut:
                asr.start()  # a monologue goes on into the next utterance
                listening = True
            if not text:
                log.info("turn: nothing recognized in %d ms of speech",
                         event.last_voiced_ms - event.start_ms)
                continue
            result = brain.respond(history, text, screen(), asr.lang)
            history = (*history, result.exchange())
            t2 = time.perf_counter()
            voice = voices[result.lang]
            pieces: list[Samples] = []
            first_ms = 0.0
            for speech in voice.synthesize(result.reply.text):
                if not pieces:
                    first_ms = (time.perf_counter() - t2) * 1000.0
                pieces.append(speech.samples)
            reply = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int16)
            # The reply starts when it would have on a device: the end-of-speech decision plus
            # recognition, the brain and the first sentence; or when the last reply ended.
            start_ms = event.decided_ms + round((t2 - t0) * 1000.0 + first_ms)
            start_sample = max(speaker_len, start_ms * RATE_HZ // 1000)
            speaker.append(np.zeros(start_sample - speaker_len, dtype=np.int16))
            speaker.append(reply)
            speaker_len = start_sample + len(reply)
            res = result.resolution
            record = TurnRecord(
                text, result.lang, res.act, res.kind, res.query.text if res.query else "",
                result.reply.page_id, result.reply.text, event.start_ms, event.last_voiced_ms,
                event.decided_ms, (t1 - t0) * 1000.0, (t2 - t1) * 1000.0, first_ms,
                start_sample * 1000 // RATE_HZ)
            log.info("turn: %s", record.as_dict())
            turns.append(record)
    out = np.concatenate(speaker) if speaker else np.zeros(0, dtype=np.int16)
    return out, turns
