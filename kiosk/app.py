"""The appliance's turn loop: wires the stages and supervises them.

One asyncio loop; every blocking engine runs in its own single-worker executor (capture,
hearing = echo canceller + VAD, recognizer, brain, synthesizer); the audio stream's queue is
the only thread boundary for audio. The same loop runs on live sound devices (`DuplexStream`)
and on recordings (`RecordedStream`). States: idle -> listening -> thinking -> speaking,
announced to listeners (log, the avatar on screen). While the avatar speaks the loop keeps
listening: a visitor who talks over it stops it (barge-in) and is heard as the next turn.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, ParamSpec, cast

import numpy as np

from kiosk.asr import Recognizer, Speculative
from kiosk.audio.echo import EchoCanceller, PassThrough
from kiosk.audio.echo_path import Restorable
from kiosk.audio.format import CHUNK_MS, RATE_HZ, AudioChunk, Samples
from kiosk.audio.guard import EchoGuard
from kiosk.audio.hearing import Hearing
from kiosk.audio.recorded import RecordedStream
from kiosk.audio.stream import AudioStream
from kiosk.audio.turn import TurnModel, pause_verdict
from kiosk.audio.vad import (
    Hushed,
    Paused,
    Resumed,
    Segmenter,
    SpeechStarted,
    Utterance,
    VoiceActivity,
    goes_on,
    joined,
    joined_chunks,
    warn_if_clipping,
)
from kiosk.brain import Responder, TurnResult
from kiosk.dialogue.history import History
from kiosk.tts import Speech, Synthesizer, trimmed

if TYPE_CHECKING:  # the server is loaded only when a page is served
    from kiosk.avatar.server import AvatarServer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TurnRecord:
    """One visitor turn, as logged: what was heard and answered, and every stage's time."""

    utterance: str
    lang: str
    act: str | None
    kind: str
    query: str
    page: str | None
    reply: str
    speech_start_ms: int  # stream time
    last_voiced_ms: int
    eos_decided_ms: int
    asr_ms: float  # after the end-of-speech decision: the final transcript
    brain_ms: float
    first_audio_ms: float  # after the brain: the first sound queued (sentence or acknowledgement)
    reply_start_ms: int  # stream time when the first reply sample was queued
    # Stream time the visitor went on after a pause that had ended the turn (0: did not):
    # this turn answers the whole, and the one before, on the opening words, gave way.
    went_on_ms: int = 0
    # The utterance stopped mid-phrase and the avatar asked to hear it again (no answer, and
    # no question the site failed: a sign of noise or a visitor cut short).
    unclear: bool = False
    # Stream time the answer's first sample was queued (0: it never began); when an
    # acknowledgement went first (`AnswerHold`), reply_start_ms is the acknowledgement's.
    answer_start_ms: int = 0
    acknowledged: bool = False

    @property
    def eos_decision_ms(self) -> int:
        return self.eos_decided_ms - self.last_voiced_ms

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Playback:
    """A reply sentence handed to the loudspeaker, for listeners (the avatar's mouth)."""

    text: str
    lang: str
    samples: Samples
    starts_at_s: float  # on the audio output clock: when its first sample is heard


@dataclass(frozen=True)
class AnswerHold:
    """The answer waits until the visitor has been quiet `hold_ms` after their last word (and
    is not talking again); meanwhile one of the reply language's `acknowledgements` ("Okay.",
    はい。) is said at once. A visitor who only paused talks over the acknowledgement and is
    heard going on (barge-in): the answer to the opening words is never played. hold_ms 0:
    the answer at once and no acknowledgement, as a language without acknowledgements."""

    hold_ms: int = 0
    acknowledgements: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class _Said:
    text: str
    samples: Samples


@dataclass
class VoiceLoop:
    stream: AudioStream
    brain: Responder
    vad: VoiceActivity
    asr: Recognizer
    voices: dict[str, Synthesizer]
    screen: Callable[[], str | None] = lambda: None
    on_state: Callable[[str], None] = lambda state: None
    on_turn: Callable[[TurnRecord], None] = lambda turn: None
    on_playback: Callable[[Playback], None] = lambda playback: None
    on_stop: Callable[[str], None] = lambda reason: None  # playback cut (barge-in, stop)
    on_heard: Callable[[str, bool], None] = lambda text, final: None  # visitor's words
    segmenter: Segmenter = field(default_factory=Segmenter)
    turn_model: TurnModel | None = None  # judges each pause: finished, or more to come?
    hold: AnswerHold = field(default_factory=AnswerHold)
    echo: EchoCanceller = field(default_factory=lambda: PassThrough("off"))
    guard: EchoGuard = field(default_factory=EchoGuard)
    history: History = ()
    state: str = "idle"
    # A device that delivers nothing for this long is gone (unplugged, driver stuck): the
    # stream is reopened, waiting longer after each failure, up to reopen_max_s.
    device_timeout_s: float = 2.0
    reopen_max_s: float = 10.0
    reopens: int = 0
    chunks_read: int = 0  # progress, for the watchdog
    errors: int = 0  # turns that failed (logged; the loop goes on)
    # A pause this long (stream time) means the next voice is a new visitor: the dialogue
    # history starts over. It is also capped, so an all-day kiosk never grows.
    new_visitor_after_ms: int = 45_000
    history_max: int = 16
    synthesizing: bool = False  # sentences of a reply are still being synthesized
    holding: bool = False  # a reply's answer waits for the visitor's pause (`AnswerHold`)
    _last_turn_end_ms: int = 0
    _speaker: asyncio.Task[None] | None = None
    _reply_text: str = ""  # what the avatar says or just said: the self-echo guard's reference
    # the language the visitor asked for ("English please", 日本語で): replies, voice and
    # hearing stay in it until the next visitor
    _language: str | None = None
    _partial: str = ""
    # The last utterance that went to the brain, and the history before its turn: speech
    # soon after it goes on with it (`goes_on`), and the turn is taken again on the whole.
    _last_heard: tuple[Utterance, History, str] | None = None  # (..., its transcript)
    _went_on_ms: int = 0  # when the utterance being heard went on with the last one (0: not)
    _acks: dict[str, list[_Said]] = field(default_factory=dict)  # synthesized at the start
    _acks_said: int = 0
    _chunk_heard: asyncio.Event | None = None  # set after each chunk is heard, then renewed

    def __post_init__(self) -> None:
        self.hearing = Hearing(self.echo, self.vad, self.guard, self.segmenter)
        if isinstance(self.stream, RecordedStream):
            # a reply synthesized in the background takes real time, as on a device, and the
            # recording does not end while a turn is still being answered
            self.stream.busy = lambda: (self.synthesizing or self.holding
                                        or self.state == "thinking")
        self._asr_exec = ThreadPoolExecutor(1, thread_name_prefix="asr")
        self._brain_exec = ThreadPoolExecutor(1, thread_name_prefix="brain")
        self._tts_exec = ThreadPoolExecutor(1, thread_name_prefix="tts")
        self._read_exec = ThreadPoolExecutor(1, thread_name_prefix="capture")
        self._hear_exec = ThreadPoolExecutor(1, thread_name_prefix="hearing")
        self._turn_exec = ThreadPoolExecutor(1, thread_name_prefix="end-of-turn")

    def _speak_in(self, lang: str | None) -> None:
        """Reply in `lang` from now on, and hear the visitor in it when the recognizer can
        (None: each utterance's own language)."""
        self._language = lang
        prefer = getattr(self.asr, "prefer", None)
        if callable(prefer):
            prefer(lang)

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.on_state(state)

    @property
    def speaking(self) -> bool:
        return (self._speaker is not None and not self._speaker.done()) or self.stream.playing

    async def run(self, stop: asyncio.Event) -> None:
        try:
            await self._synthesize_acknowledgements()
            await self._listen(stop)
        finally:
            await self._stop_speaking(None)
            memory = self.hearing.memory
            if memory is not None:  # where the canceller runs: it is not thread-safe
                await asyncio.get_running_loop().run_in_executor(
                    self._hear_exec, memory.close, cast(Restorable, self.echo))

    async def _synthesize_acknowledgements(self) -> None:
        """Each language's acknowledgements, ready before the first visitor: said at once."""
        if self.hold.hold_ms <= 0:
            return
        loop = asyncio.get_running_loop()
        for lang, voice in self.voices.items():
            for text in self.hold.acknowledgements.get(lang, ()):
                samples = await loop.run_in_executor(self._tts_exec, _said, voice, text)
                if len(samples):
                    self._acks.setdefault(lang, []).append(_Said(text, samples))

    def _acknowledgement(self, lang: str, within_ms: int) -> _Said | None:
        """The next acknowledgement in `lang` (they take turns), or None: none in `lang`, or
        it would not end `within_ms` (a late decision: it would only delay the answer)."""
        acks = self._acks.get(lang)
        if not acks:
            return None
        ack = acks[(self._acks_said + 1) % len(acks)]
        if len(ack.samples) * 1000 // RATE_HZ > within_ms:
            return None
        self._acks_said += 1
        return ack

    async def _held(self, release_ms: int) -> None:
        """Until the stream reaches `release_ms` with the visitor not talking (at most as long
        again: a noisy hall's voices must not hold an answer for ever)."""
        while self._chunk_heard is not None and (
                self.stream.clock_ms < release_ms
                or (self.segmenter.in_speech
                    and self.stream.clock_ms < release_ms + self.hold.hold_ms)):
            await self._chunk_heard.wait()

    async def _listen(self, stop: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        self._chunk_heard = asyncio.Event()
        # The recognizer hears the utterance while it is spoken (pre-roll included), so only
        # its finalization is left after the end-of-speech decision.
        recent: collections.deque[AudioChunk] = collections.deque(
            maxlen=self.segmenter.params.pre_roll_ms // CHUNK_MS + 1)
        listening = False
        speculating = False  # a transcript of the utterance so far is on its way
        self.hearing.reset()
        silent_since = time.monotonic()
        while not stop.is_set() and not self.stream.ended:
            item = await loop.run_in_executor(self._read_exec, self.stream.read, 0.25)
            if item is None:
                if (not self.stream.ended
                        and time.monotonic() - silent_since >= self.device_timeout_s):
                    listening = False
                    await self._reopen(stop)
                    silent_since = time.monotonic()
                continue
            silent_since = time.monotonic()
            self.chunks_read += 1
            heard = await loop.run_in_executor(self._hear_exec, self.hearing.hear, item,
                                               self.speaking)
            self._chunk_heard.set()  # a held answer looks at the clock and the segmenter
            self._chunk_heard = asyncio.Event()
            if heard.bargein:  # before anything else this chunk brings
                await self._stop_speaking("barge-in")
                self._set_state("listening")
            recent.append(heard.clean)
            if listening:
                partial = await loop.run_in_executor(self._asr_exec, self.asr.accept,
                                                     heard.clean.samples)
                if partial and partial != self._partial:
                    self._partial = partial
                    self.on_heard(partial, False)
            for event in heard.events:
                if isinstance(event, SpeechStarted):
                    if not self.speaking:
                        self._set_state("listening")
                    earlier = list(recent)
                    self._went_on_ms = 0
                    if self._last_heard is not None and goes_on(
                            self._last_heard[0], event.start_ms, self.segmenter.params):
                        # the recognizer hears the words before the pause again: one
                        # transcript of the whole is better than two halves joined
                        self._went_on_ms = event.start_ms
                        earlier = list(joined_chunks(self._last_heard[0], earlier))
                    await loop.run_in_executor(self._asr_exec, self._start_asr, earlier)
                    listening = True
                    speculating = False
                elif isinstance(event, Hushed | Paused | Resumed):
                    spec = self.asr if listening and isinstance(self.asr, Speculative) else None
                    if spec is not None and isinstance(event, Resumed):
                        await loop.run_in_executor(self._asr_exec, spec.withdraw)
                        speculating = False
                    elif spec is not None and not speculating:  # at the hush, else the pause
                        await loop.run_in_executor(self._asr_exec, spec.speculate)
                        speculating = True
                    if isinstance(event, Paused) and self.turn_model is not None:
                        # judged before the next chunk: the segmenter waits for the verdict
                        # the model and the transcript so far, side by side
                        melody = loop.run_in_executor(self._turn_exec, self.turn_model.complete,
                                                      self.segmenter.heard_so_far())
                        words = (await loop.run_in_executor(self._asr_exec, spec.speculation)
                                 if spec is not None else "")
                        self.segmenter.decide(await loop.run_in_executor(
                            self._turn_exec, pause_verdict, await melody, words))
                elif isinstance(event, Utterance):
                    listening = speculating = False
                    # what this utterance goes on with (`_last_heard` is set by turns only)
                    going_on = self._last_heard if self._went_on_ms else None
                    went_on_ms, self._went_on_ms = self._went_on_ms, 0
                    if self.hearing.is_echo():
                        if event.cut:
                            listening = True
                        else:
                            await loop.run_in_executor(self._asr_exec, self.asr.finish)
                        self._set_state("speaking" if self.speaking else "idle")
                        continue
                    warn_if_clipping(event, log)
                    text, asr_ms = await self._finish_asr()
                    if event.cut:  # a monologue goes on into the next utterance
                        await loop.run_in_executor(self._asr_exec, self._start_asr, [])
                        listening = True
                    said_before = going_on[2] if going_on is not None else ""
                    if (self.hearing.utterance_over_avatar and self._reply_text
                            and self.guard.is_repeat(text, self._reply_text, said_before)):
                        self._set_state("speaking" if self.speaking else "idle")
                        continue
                    if going_on is not None:
                        # the turn taken on the opening words gives way: its exchange is
                        # forgotten, the whole is answered (its reply stops when this one
                        # is ready, if the visitor's voice has not stopped it already)
                        first, self.history, _ = going_on
                        log.info("turn: the visitor went on after %d ms; answering the whole",
                                 went_on_ms - first.last_voiced_ms)
                        event = joined(first, event, went_on_ms)
                    await self._guarded_turn(event, text, asr_ms)
            if self.state == "speaking" and not self.speaking:
                self._set_state("idle")
                self._log_guard()

    def _log_guard(self) -> None:
        """After each reply: what the self-echo guard did, so an installer sees it work."""
        g = self.guard
        log.info("guard: echo chunks gated %d, echo utterances dropped %d, repeats dropped "
                 "%d, barge-ins %d; expected echo %.0f dB under the playback, cancellation "
                 "%.0f dB", g.gated_chunks, g.weak_utterances, g.dropped_transcripts,
                 self.hearing.bargeins, -g.echo_db, g.cancel_db)

    async def _reopen(self, stop: asyncio.Event) -> None:
        """Close the stream and open it again until the device answers, backing off."""
        loop = asyncio.get_running_loop()
        wait_s = 0.5
        await self._stop_speaking(None)
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
        self._partial = ""
        self.asr.start()
        for chunk in earlier:
            self.asr.accept(chunk.samples)

    async def _finish_asr(self) -> tuple[str, float]:
        """(the final transcript, recognition ms after the end-of-speech decision)."""
        decided = time.perf_counter()
        if not self.speaking:
            self._set_state("thinking")
        text = await asyncio.get_running_loop().run_in_executor(self._asr_exec, self.asr.finish)
        return text.strip(), (time.perf_counter() - decided) * 1000.0

    async def _guarded_turn(self, utterance: Utterance, text: str, asr_ms: float) -> None:
        """One failing turn (a page the brain chokes on, a synthesizer error) is logged and
        counted; the loop listens again."""
        if utterance.start_ms - self._last_turn_end_ms >= self.new_visitor_after_ms:
            self.history = ()
            self._speak_in(None)  # a new visitor: each utterance's own language again
        self._last_heard = (utterance, self.history, text)
        try:
            await self._turn(utterance, text, asr_ms)
        except Exception:
            self.errors += 1
            log.exception("turn: failed (%d so far); listening again", self.errors)
            await self._stop_speaking(None)
            self._set_state("idle")
        self._last_turn_end_ms = self.stream.clock_ms

    async def _turn(self, utterance: Utterance, text: str, asr_ms: float) -> None:
        loop = asyncio.get_running_loop()
        if not text:
            log.info("turn: nothing recognized in %d ms of speech",
                     utterance.last_voiced_ms - utterance.start_ms)
            self._set_state("speaking" if self.speaking else "idle")
            return
        self.on_heard(text, True)
        brain_start = time.perf_counter()
        result: TurnResult = await loop.run_in_executor(
            self._brain_exec, self.brain.respond, self.history, text, self.screen(),
            self._language or self.asr.lang)
        self.history = (*self.history, result.exchange())[-self.history_max:]
        if result.resolution.act == "language":
            self._speak_in(result.lang)
        brain_ms = (time.perf_counter() - brain_start) * 1000.0
        await self._stop_speaking(None)  # a new reply replaces whatever was still playing
        if result.resolution.act == "stop":
            self._record(utterance, text, result, asr_ms, brain_ms, 0.0, self.stream.clock_ms,
                         spoken="")
            self._set_state("idle")
            return
        # an answer waits behind an acknowledgement; a social reply ("Hello!", "You're
        # welcome.") is said at once, and "Okay." before "Sorry, ..." would sound wrong
        answer = result.resolution.act is None
        release_ms = (utterance.last_voiced_ms + self.hold.hold_ms
                      if answer and self.hold.hold_ms > 0 else 0)
        ack = (self._acknowledgement(result.lang, release_ms - self.stream.clock_ms)
               if release_ms and not result.reply.repair else None)
        self._reply_text = (f"{ack.text} " if ack is not None else "") + result.reply.text
        self._speaker = asyncio.create_task(self._speak(
            utterance, text, result, asr_ms, brain_ms, time.perf_counter(), ack, release_ms))
        # While the reply is spoken the brain prepares the next turn's context.
        loop.run_in_executor(self._brain_exec, self.brain.remember,
                             self.history[-1]).add_done_callback(_log_failure)
        await asyncio.sleep(0)  # let it start before the loop reads on

    async def _speak(self, utterance: Utterance, text: str, result: TurnResult, asr_ms: float,
                     brain_ms: float, brain_end: float, ack: _Said | None = None,
                     release_ms: int = 0) -> None:
        """Synthesize sentence by sentence and queue each on the loudspeaker; the first one
        is played as soon as it is ready, but not before the stream reaches `release_ms`
        (`AnswerHold`); `ack` is played at once. Runs beside the listening loop; barge-in
        cancels it."""
        loop = asyncio.get_running_loop()
        speech = self.voices[result.lang].synthesize(result.reply.text, lead=True)
        recorded = False
        first_ms, first_at = 0.0, 0
        self.synthesizing = True
        try:
            if ack is not None:
                first_at = self.stream.clock_ms
                starts_at_s = self.stream.play(ack.samples)
                first_ms = (time.perf_counter() - brain_end) * 1000.0
                self.on_playback(Playback(ack.text, result.lang, ack.samples, starts_at_s))
                self._set_state("speaking")
            while True:
                piece: Speech | None = await loop.run_in_executor(self._tts_exec, next, speech,
                                                                  None)
                if piece is None:
                    break
                if release_ms > self.stream.clock_ms:
                    self.synthesizing, self.holding = False, True
                    try:
                        await self._held(release_ms)
                    finally:
                        self.synthesizing, self.holding = True, False
                    release_ms = 0
                queued_at = self.stream.clock_ms
                starts_at_s = self.stream.play(piece.samples)
                self.on_playback(Playback(piece.text, result.lang, piece.samples, starts_at_s))
                if not recorded:
                    recorded = True
                    self._set_state("speaking")
                    if ack is None:
                        first_ms, first_at = (time.perf_counter() - brain_end) * 1000.0, queued_at
                    self._record(utterance, text, result, asr_ms, brain_ms, first_ms, first_at,
                                 answer_start_ms=queued_at, acknowledged=ack is not None)
        except Exception:  # cancellation (barge-in) is not an Exception: it goes through
            self.errors += 1
            log.exception("turn: speaking failed (%d so far)", self.errors)
        finally:
            self.synthesizing = False
            if not recorded:
                self._record(utterance, text, result, asr_ms, brain_ms, first_ms,
                             first_at or self.stream.clock_ms, acknowledged=ack is not None)

    def _record(self, utterance: Utterance, text: str, result: TurnResult, asr_ms: float,
                brain_ms: float, first_ms: float, reply_start_ms: int,
                spoken: str | None = None, answer_start_ms: int = 0,
                acknowledged: bool = False) -> None:
        res = result.resolution
        turn = TurnRecord(
            text, result.lang, res.act, res.kind, res.query.text if res.query else "",
            result.reply.page_id, result.reply.text if spoken is None else spoken,
            utterance.start_ms, utterance.last_voiced_ms, utterance.decided_ms, asr_ms,
            brain_ms, first_ms, reply_start_ms, utterance.went_on_ms,
            result.analysis.cut_off, answer_start_ms, acknowledged)
        self.on_turn(turn)  # the listener logs it: visitors' words stay out of the journal

    async def _stop_speaking(self, reason: str | None) -> None:
        """Cut the reply now: nothing more is synthesized or played."""
        speaker, self._speaker = self._speaker, None
        active = speaker is not None and not speaker.done()
        if speaker is not None and active:
            speaker.cancel()
        # the loudspeaker first: the next audio period plays silence, whatever the speaker's
        # cancellation still has to wait for
        audible = self.stream.playing
        if audible:
            self.stream.stop_playback()
        if speaker is not None and active:
            with contextlib.suppress(asyncio.CancelledError):
                await speaker
            self.stream.stop_playback()  # anything it queued on its way out
        if reason is not None and (active or audible):
            log.info("speaking: stopped (%s)", reason)
            self.on_stop(reason)

    def close(self) -> None:
        for executor in (self._asr_exec, self._brain_exec, self._tts_exec, self._read_exec,
                         self._hear_exec, self._turn_exec):
            executor.shutdown(wait=False, cancel_futures=True)


def _said(voice: Synthesizer, text: str) -> Samples:
    """A short text's audio in one piece, its engine's silence before it cut as a reply's."""
    pieces = [piece.samples for piece in voice.synthesize(text, lead=True)]
    # the engine's silence after it cut too: it is heard at once, the answer after it
    return trimmed(np.concatenate(pieces), trail_ms=30) if pieces else np.zeros(0, np.int16)


def _log_failure(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.warning("brain: preparing the next turn failed: %r", future.exception())


def run_recording(mic: Samples, brain: Responder, vad: VoiceActivity, asr: Recognizer,
                  voices: dict[str, Synthesizer], *,
                  screen: Callable[[], str | None] = lambda: None,
                  segmenter: Segmenter | None = None,
                  turn_model: TurnModel | None = None,
                  hold: AnswerHold | None = None,
                  echo: EchoCanceller | None = None,
                  clock: Callable[[], float] = time.monotonic,
                  realtime: bool = False,
                  avatar_port: int | None = None,
                  on_ready: Callable[[VoiceLoop, str | None], None] = lambda loop, url: None,
                  ) -> tuple[Samples, list[TurnRecord]]:
    """The loop over a microphone recording; returns the loudspeaker recording and the turns.
    `realtime`: at the recording's own speed (for a screen); `avatar_port`: serve the avatar
    page meanwhile (0: any free port); `on_ready` gets the loop and the page's address."""
    stream = RecordedStream(mic, clock=clock, realtime=realtime)
    turns: list[TurnRecord] = []
    loop = VoiceLoop(stream, brain, vad, asr, voices, screen=screen, on_turn=turns.append,
                     segmenter=segmenter or Segmenter(), turn_model=turn_model,
                     hold=hold or AnswerHold(), echo=echo or PassThrough("off"))

    async def main() -> None:
        server = None
        if avatar_port is not None:
            from kiosk.avatar.server import AvatarServer

            server = AvatarServer(stream.position_s, port=avatar_port)
            await server.start()
            attach(server, loop)
        on_ready(loop, server.url if server is not None else None)
        try:
            await loop.run(asyncio.Event())
        finally:
            if server is not None:
                await server.close()

    try:
        asyncio.run(main())
    finally:
        loop.close()
    return stream.speaker(), turns


P = ParamSpec("P")


def _both(first: Callable[P, None], then: Callable[P, None]) -> Callable[P, None]:
    def both(*args: P.args, **kwargs: P.kwargs) -> None:
        first(*args, **kwargs)
        then(*args, **kwargs)
    return both


def attach(server: AvatarServer, loop: VoiceLoop) -> None:
    """Feed the avatar server from the loop, beside the listeners the loop has already."""
    loop.on_state = _both(loop.on_state, server.on_state)
    loop.on_playback = _both(loop.on_playback, server.on_playback)
    loop.on_stop = _both(loop.on_stop, server.on_stop)
    loop.on_heard = _both(loop.on_heard, server.on_heard)
