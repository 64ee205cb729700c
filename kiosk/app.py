"""The appliance's turn loop on live sound devices: wires the stages and supervises them.

One asyncio loop; every blocking engine (recognizer, brain, synthesizer) runs in its own
single-worker executor; the duplex stream's bounded queue is the only thread boundary for
audio. States: idle -> listening -> thinking -> speaking, announced to listeners (LEDs, the
avatar on screen).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import queue
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from kiosk.asr import Recognizer
from kiosk.audio.duplex import DuplexChunk, DuplexStream
from kiosk.audio.format import CHUNK_MS, AudioChunk
from kiosk.audio.vad import Segmenter, SileroVad, SpeechStarted, Utterance, warn_if_clipping
from kiosk.brain import Brain, TurnResult
from kiosk.dialogue.history import History
from kiosk.tts import Synthesizer

log = logging.getLogger(__name__)


@dataclass
class LiveTurn:
    utterance: str
    reply: str
    act: str | None
    kind: str
    query: str
    page: str | None
    eos_decision_ms: int
    final_ms: float  # after the decision
    first_audio_ms: float  # after the decision: the first reply sample queued


@dataclass
class VoiceLoop:
    stream: DuplexStream
    brain: Brain
    vad: SileroVad
    asr: Recognizer
    voices: dict[str, Synthesizer]
    screen: Callable[[], str | None] = lambda: None
    on_state: Callable[[str], None] = lambda state: None
    on_turn: Callable[[LiveTurn], None] = lambda turn: None
    segmenter: Segmenter = field(default_factory=Segmenter)
    history: History = ()
    state: str = "idle"
    # A device that delivers nothing for this long is gone (unplugged, driver stuck): the
    # stream is reopened, waiting longer after each failure, up to reopen_max_s.
    device_timeout_s: float = 2.0
    reopen_max_s: float = 10.0
    reopens: int = 0

    def __post_init__(self) -> None:
        self._asr_exec = ThreadPoolExecutor(1, thread_name_prefix="asr")
        self._brain_exec = ThreadPoolExecutor(1, thread_name_prefix="brain")
        self._tts_exec = ThreadPoolExecutor(1, thread_name_prefix="tts")
        self._read_exec = ThreadPoolExecutor(1, thread_name_prefix="capture")

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.on_state(state)

    def _next_chunk(self) -> DuplexChunk | None:
        try:
            return self.stream.chunks.get(timeout=0.25)
        except queue.Empty:
            return None

    async def run(self, stop: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        recent: collections.deque[AudioChunk] = collections.deque(
            maxlen=self.segmenter.params.pre_roll_ms // CHUNK_MS + 1)
        listening = False
        self.vad.reset()
        silent_since = time.monotonic()
        while not stop.is_set():
            item = await loop.run_in_executor(self._read_exec, self._next_chunk)
            if item is None:
                if time.monotonic() - silent_since >= self.device_timeout_s:
                    listening = False
                    await self._reopen(stop)
                    silent_since = time.monotonic()
                continue
            silent_since = time.monotonic()
            chunk = item.mic
            recent.append(chunk)
            events = self.segmenter.feed(chunk, self.vad.probability(chunk.samples))
            if listening:
                await loop.run_in_executor(self._asr_exec, self.asr.accept, chunk.samples)
            for event in events:
                if isinstance(event, SpeechStarted):
                    self._set_state("listening")
                    await loop.run_in_executor(self._asr_exec, self._start_asr, list(recent))
                    listening = True
                elif isinstance(event, Utterance):
                    listening = False
                    warn_if_clipping(event, log)
                    await self._turn(event)
            if self.state == "speaking" and not self.stream.playing:
                self._set_state("idle")

    async def _reopen(self, stop: asyncio.Event) -> None:
        """Close the stream and open it again until the device answers, backing off."""
        loop = asyncio.get_running_loop()
        wait_s = 0.5
        self._set_state("idle")
        while not stop.is_set():
            self.reopens += 1
            log.warning("audio: no sound from the device for %.1f s; reopening it (try %d)",
                        self.device_timeout_s, self.reopens)
            try:
                await loop.run_in_executor(self._read_exec, self.stream.reopen)
                return
            except Exception as exc:  # PortAudio's errors vary by host API and state
                log.warning("audio: reopening failed (%s); next try in %.1f s", exc, wait_s)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), wait_s)
            wait_s = min(wait_s * 2, self.reopen_max_s)

    def _start_asr(self, earlier: list[AudioChunk]) -> None:
        self.asr.start()
        for chunk in earlier:
            self.asr.accept(chunk.samples)

    async def _turn(self, utterance: Utterance) -> None:
        loop = asyncio.get_running_loop()
        decided = time.perf_counter()
        self._set_state("thinking")
        text = (await loop.run_in_executor(self._asr_exec, self.asr.finish)).strip()
        final_ms = (time.perf_counter() - decided) * 1000.0
        if not text:
            self._set_state("idle")
            return
        result: TurnResult = await loop.run_in_executor(
            self._brain_exec, self.brain.respond, self.history, text, self.screen(),
            self.asr.lang)
        self.history = (*self.history, result.exchange())
        speech = self.voices[result.lang].synthesize(result.reply.text)
        first_ms = 0.0
        while True:
            piece = await loop.run_in_executor(self._tts_exec, next, speech, None)
            if piece is None:
                break
            if not first_ms:
                first_ms = (time.perf_counter() - decided) * 1000.0
                self._set_state("speaking")
            self.stream.play(piece.samples)
        res = result.resolution
        turn = LiveTurn(text, result.reply.text, res.act, res.kind,
                        res.query.text if res.query else "", result.reply.page_id,
                        utterance.decided_ms - utterance.last_voiced_ms, final_ms, first_ms)
        log.info("turn: %s", turn)
        self.on_turn(turn)

    def close(self) -> None:
        for executor in (self._asr_exec, self._brain_exec, self._tts_exec, self._read_exec):
            executor.shutdown(wait=False, cancel_futures=True)
