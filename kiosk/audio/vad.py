"""Voice activity: Silero's speech probability (onnxruntime) and a pure segmenter.

The segmenter sees chunks and probabilities, never a clock: time is the audio's own (ms stamps
of the chunks), so it is tested with tables of numbers and behaves the same on a live
microphone and on a recording. It keeps a pre-roll so the first syllable is not cut, ends an
utterance after `end_silence_ms` of non-speech, cuts a monologue at `max_utterance_ms`, and has
no blind warm-up: the first chunk can start speech.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from kiosk.audio.format import CHUNK_MS, RATE_HZ, AudioChunk, Samples, clipped_fraction
from kiosk.models import cpu_session

WINDOW = 512  # samples Silero scores at 16 kHz
CONTEXT = 64  # samples of the previous window it is given in front


class VoiceActivity(Protocol):
    """Speech probability per 20 ms chunk."""

    def reset(self) -> None: ...

    def probability(self, samples: Samples) -> float: ...


class SileroVad:
    """Speech probability per chunk; windows of 512 samples carried across chunks."""

    def __init__(self, model: Path, *, threads: int = 1) -> None:
        self._session = cpu_session(model, "VAD model", "silero-vad", threads=threads)
        self.reset()

    def reset(self) -> None:
        self._state = np.zeros((2, 1, 128), dtype=np.float32)
        self._context = np.zeros(CONTEXT, dtype=np.float32)
        self._pending = np.zeros(0, dtype=np.float32)
        self._last = 0.0

    def probability(self, samples: Samples) -> float:
        """The speech probability of the latest full window after adding these samples."""
        self._pending = np.concatenate([self._pending, samples.astype(np.float32) / 32768.0])
        while len(self._pending) >= WINDOW:
            window, self._pending = self._pending[:WINDOW], self._pending[WINDOW:]
            x = np.concatenate([self._context, window])[None, :]
            out, self._state = self._session.run(
                None, {"input": x, "state": self._state, "sr": np.array(RATE_HZ, dtype=np.int64)})
            self._context = window[-CONTEXT:]
            self._last = float(out[0][0])
        return self._last


@dataclass(frozen=True)
class SegmenterParams:
    speech_on: float = 0.5  # probability that starts speech
    speech_off: float = 0.35  # below this counts as silence (hysteresis)
    pre_roll_ms: int = 300  # audio kept from before speech started
    end_silence_ms: int = 400  # non-speech that ends an utterance
    pause_ms: int = 160  # non-speech that is a pause (the end of the turn is judged); 0: never
    # Non-speech after which the recognizer may begin on what was said so far (0: at the
    # pause): earlier than the judgment, so the transcript is nearly there when it is made.
    hush_ms: int = 100
    # With an end-of-turn model, each pause is judged (`decide`): a finished turn ends at once,
    # an unfinished one waits this long for more; without one, end_silence_ms ends it.
    incomplete_silence_ms: int = 1000
    complete_above: float = 0.5  # the turn model's probability that counts as finished
    max_utterance_ms: int = 15_000  # a monologue is cut here and goes on as a new utterance
    # Speech again this soon after an utterance ended goes on with it ("can you explain" ...
    # "that in more detail"): the turn is taken again on the whole (0: never).
    resume_within_ms: int = 1000
    min_speech_ms: int = 100  # shorter bursts (a cough, a click) are dropped


@dataclass(frozen=True)
class SpeechStarted:
    start_ms: int


@dataclass(frozen=True)
class Hushed:
    """The visitor stopped `hush_ms` ago: the recognizer may begin on what was said."""

    at_ms: int


@dataclass(frozen=True)
class Paused:
    """The visitor stopped `pause_ms` ago: maybe done, maybe thinking."""

    at_ms: int


@dataclass(frozen=True)
class Resumed:
    """Speech again after a hush or a pause: whatever was prepared there is out of date."""

    at_ms: int


@dataclass(frozen=True)
class Utterance:
    chunks: tuple[AudioChunk, ...]
    start_ms: int
    last_voiced_ms: int  # end of the last chunk judged speech
    decided_ms: int  # stream time when the end was decided
    cut: bool = False  # ended by max_utterance_ms, not by silence
    # Stream time the visitor went on after a pause that had ended the turn (`joined`; 0: not)
    went_on_ms: int = 0

    @property
    def samples(self) -> Samples:
        return np.concatenate([c.samples for c in self.chunks])


def warn_if_clipping(utterance: Utterance, log: logging.Logger) -> None:
    """An over-driven microphone ruins recognition: say so, with the fix."""
    share = clipped_fraction(utterance.samples)
    if share >= 0.001:
        log.warning("audio: the microphone clips (%.1f%% of the utterance at %.1f s at full "
                    "scale); lower the input gain or move the microphone away from the speaker",
                    share * 100, utterance.start_ms / 1000)


def goes_on(previous: Utterance, start_ms: int, params: SegmenterParams) -> bool:
    """Whether speech starting at `start_ms` (its first voiced chunk) goes on with the
    `previous` utterance: the visitor paused longer than the end of the turn allowed and
    went on within `resume_within_ms`. A monologue cut at `max_utterance_ms` goes on by
    itself, and the whole stays within that length."""
    return (params.resume_within_ms > 0 and not previous.cut
            and 0 <= start_ms - previous.last_voiced_ms <= params.resume_within_ms
            and start_ms - previous.start_ms < params.max_utterance_ms)


def joined_chunks(first: Utterance, then: Iterable[AudioChunk]) -> tuple[AudioChunk, ...]:
    """The audio of an utterance and of what followed it, each chunk once (the pre-roll of
    the speech that followed may repeat the utterance's last chunks)."""
    end_ms = first.chunks[-1].end_ms if first.chunks else first.start_ms
    return first.chunks + tuple(c for c in then if c.start_ms >= end_ms)


def joined(first: Utterance, second: Utterance, went_on_ms: int) -> Utterance:
    """One utterance of a visitor's words before a pause and after it, the second's speech
    starting at `went_on_ms`."""
    return Utterance(joined_chunks(first, second.chunks), first.start_ms,
                     second.last_voiced_ms, second.decided_ms, second.cut, went_on_ms)


Event = SpeechStarted | Hushed | Paused | Resumed | Utterance


@dataclass
class Segmenter:
    params: SegmenterParams = field(default_factory=SegmenterParams)
    _pre: collections.deque[AudioChunk] = field(default_factory=collections.deque)
    _chunks: list[AudioChunk] = field(default_factory=list)
    _in_speech: bool = False
    _voiced_ms: int = 0
    _silence_ms: int = 0
    _last_voiced_end: int = 0
    _start_ms: int = 0
    _paused: bool = False
    _hushed: bool = False
    _end_ms: int = 0  # the silence that ends this utterance (0: end_silence_ms)

    @property
    def in_speech(self) -> bool:
        return self._in_speech

    def heard_so_far(self) -> Samples:
        """The current utterance's audio (pre-roll included): what the turn model judges."""
        if not self._chunks:
            return np.zeros(0, dtype=np.int16)
        return np.concatenate([c.samples for c in self._chunks])

    def decide(self, complete_probability: float) -> None:
        """The end-of-turn model's verdict on the pause under way: finished -> the utterance
        ends with the next chunk of silence; not finished -> it waits for more speech up to
        incomplete_silence_ms. A later pause is judged again."""
        if not self._paused:
            return
        finished = complete_probability >= self.params.complete_above
        self._end_ms = self._silence_ms if finished else self.params.incomplete_silence_ms

    def feed(self, chunk: AudioChunk, probability: float) -> list[Event]:
        p = self.params
        length_ms = chunk.end_ms - chunk.start_ms or CHUNK_MS
        events: list[Event] = []
        if not self._in_speech:
            self._pre.append(chunk)
            while sum(c.end_ms - c.start_ms for c in self._pre) > p.pre_roll_ms + length_ms:
                self._pre.popleft()
            if probability >= p.speech_on:
                self._in_speech = True
                self._chunks = list(self._pre)
                self._pre.clear()
                self._start_ms = self._chunks[0].start_ms
                self._voiced_ms = length_ms
                self._silence_ms = 0
                self._last_voiced_end = chunk.end_ms
                self._paused = self._hushed = False
                events.append(SpeechStarted(chunk.start_ms))
            return events
        self._chunks.append(chunk)
        if probability >= p.speech_off:
            self._voiced_ms += length_ms
            self._silence_ms = 0
            self._last_voiced_end = chunk.end_ms
            if self._paused or self._hushed:
                self._paused = self._hushed = False
                self._end_ms = 0
                events.append(Resumed(chunk.start_ms))
        else:
            self._silence_ms += length_ms
            if (p.hush_ms and not self._hushed and not self._paused
                    and (not p.pause_ms or p.hush_ms < p.pause_ms)
                    and p.hush_ms <= self._silence_ms < (self._end_ms or p.end_silence_ms)):
                self._hushed = True
                events.append(Hushed(chunk.end_ms))
            if (p.pause_ms and not self._paused and p.pause_ms <= self._silence_ms
                    < (self._end_ms or p.end_silence_ms)):
                self._paused = True
                events.append(Paused(chunk.end_ms))
                return events  # judged (`decide`) before the next chunk
        if self._silence_ms >= (self._end_ms or p.end_silence_ms):
            events += self._finish(chunk.end_ms, cut=False)
        elif chunk.end_ms - self._start_ms >= p.max_utterance_ms:
            events += self._finish(chunk.end_ms, cut=True)
            self._in_speech = True  # the monologue goes on: a new utterance starts here
            self._start_ms = chunk.end_ms
            self._voiced_ms = 0
            self._last_voiced_end = chunk.end_ms
        return events

    def _finish(self, now_ms: int, *, cut: bool) -> list[Event]:
        chunks = tuple(self._chunks)
        voiced = self._voiced_ms
        self._chunks = []
        self._in_speech = False
        self._silence_ms = 0
        self._paused = self._hushed = False
        self._end_ms = 0
        if voiced < self.params.min_speech_ms or not chunks:
            return []
        return [Utterance(chunks, chunks[0].start_ms, self._last_voiced_end, now_ms, cut)]
