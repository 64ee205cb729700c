"""What the avatar hears, one 20 ms chunk at a time: echo canceller -> VAD -> self-echo
guard -> segmenter, and whether a visitor is talking over the avatar (barge-in).

Synchronous and clock-free (times are the stream's): the turn loop runs it in its own
single-worker executor, and the echo bench runs it directly on simulated rooms.
"""

from __future__ import annotations

import collections
import logging
from dataclasses import dataclass, field
from typing import cast

from kiosk.audio.echo import EchoCanceller
from kiosk.audio.echo_path import EchoMemory, Restorable
from kiosk.audio.format import CHUNK_MS, AudioChunk
from kiosk.audio.guard import EchoGuard
from kiosk.audio.stream import DuplexChunk
from kiosk.audio.vad import Event, Segmenter, SpeechStarted, VoiceActivity

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Heard:
    clean: AudioChunk  # the microphone after echo cancellation
    events: list[Event]
    bargein: bool  # the visitor has now talked over the avatar for bargein_ms


@dataclass
class Hearing:
    canceller: EchoCanceller
    vad: VoiceActivity
    guard: EchoGuard = field(default_factory=EchoGuard)
    segmenter: Segmenter = field(default_factory=Segmenter)
    bargein_ms: int = 60  # a sound the guard believes over the avatar this long stops it...
    bargein_probability: float = 0.2  # ...counting its chunks above the echo or this likely
    # speech, one of them the latter (the VAD lags behind a soft onset; the guard does not)
    bargeins: int = 0
    _over_avatar: bool = False  # the current utterance started while the avatar spoke
    _barged: bool = False
    _chunks: int = 0  # of the current utterance, those heard while echo was possible...
    _above: int = 0  # ...and of those, the ones above the expected echo
    _over_ms: int = 0  # heard over the avatar since the guard believed it...
    _over_voiced: bool = False  # ...and whether any of it sounded like speech
    _voiced: collections.deque[bool] = field(  # the latest chunks: did they sound like speech
        default_factory=lambda: collections.deque(maxlen=8))
    _restarts: int = 0  # the canceller's restarts seen
    memory: EchoMemory | None = None  # keeps the canceller's echo path across starts

    def reset(self) -> None:
        self.vad.reset()
        self.canceller.reset()

    @property
    def utterance_over_avatar(self) -> bool:
        """The utterance being heard started while the avatar's voice (or its echo) was on."""
        return self._over_avatar

    def is_echo(self) -> bool:
        """The utterance just ended was heard over the avatar with too little evidence that
        it was anyone else: an echo that slipped through the chunk gate (counted)."""
        return (self._over_avatar and self._chunks > 0
                and self.guard.is_weak(self._above / self._chunks))

    def hear(self, item: DuplexChunk, speaking: bool) -> Heard:
        clean = self.canceller.process(item.mic.samples, item.reference)
        restarts = getattr(self.canceller, "restarts", 0)
        if restarts != self._restarts:
            # the canceller dropped its restored path: its residual echo is another one now
            self._restarts = restarts
            self.guard.restart()
        if self.memory is not None:
            self.memory.after_chunk(cast(Restorable, self.canceller))
        chunk = AudioChunk(clean, item.mic.start_ms)
        heard = self.vad.probability(clean)
        probability = self.guard.judge(clean, item.reference, heard, item.mic.samples)
        self._voiced.append(heard >= self.bargein_probability)
        # without the guard (the echo bench's baseline) any speech is believed
        believed = (self.guard.holding if self.guard.params.enabled
                    else self.segmenter.in_speech)
        if not believed:
            self._over_ms = 0
            self._over_voiced = False
            if not self.segmenter.in_speech:
                self._barged = False
        elif self._over_ms == 0 and self.guard.params.enabled:
            # the chunks that convinced the guard count once, towards barge-in too: waiting
            # for bargein_ms more after the guard's confirmation would count them twice
            above = self.guard.recent_above
            self._over_ms = above * CHUNK_MS
            self._over_voiced = any(list(self._voiced)[-max(above, 1):])
        elif heard >= self.bargein_probability or self.guard.last_above:
            self._over_ms += CHUNK_MS
            self._over_voiced = self._over_voiced or heard >= self.bargein_probability
        events = self.segmenter.feed(chunk, probability)
        for event in events:
            if isinstance(event, SpeechStarted):
                self._over_avatar = speaking or self.guard.echo_active()
                self._chunks = self._above = 0
        if (self.segmenter.in_speech or events) and self.guard.echo_active():
            self._chunks += 1
            self._above += self.guard.last_above
        bargein = False
        # before the utterance has started, the guard's confirmation is the evidence
        if (speaking and not self._barged and self._over_voiced
                and self._over_ms >= self.bargein_ms
                and (not self.segmenter.in_speech or self._chunks == 0
                     or self.guard.convinced(self._above / self._chunks))):
            self._barged = bargein = True
            self.bargeins += 1
            log.info("guard: barge-in at %.2f s (%d so far)", chunk.start_ms / 1000,
                     self.bargeins)
        return Heard(chunk, events, bargein)
