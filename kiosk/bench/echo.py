"""`kiosk bench echo`: echo cancellation, the self-echo guard and barge-in on simulated rooms,
and once through the real audio stack (JACK dummy device, playback looped into capture).

Far end: the avatar's replies (sentences of the demo site, spoken by piper) through a
loudspeaker (linear, or soft-clipping), a random room (delay 10-80 ms, reverberation 100-400 ms)
and background noise. Levels at the microphone: the visitor's voice 6 dB under the echo (the
loudspeaker is nearer than the visitor), the noise 10-20 dB under the visitor's voice. Near end:
the demo's questions in another voice (piper, read 12% faster: higher and quicker).

Figures: ERLE of the canceller's filters (libspeexdsp's and its time average, whichever the
canceller uses; the residual-echo suppressor off) after convergence (the second half of a
minute of replies; the canceller runs all day, and on speech it still gains a few dB between 10
and 30 s: the curve per 10 s is in the detail) and in the first second, per path, measured on
the echo itself (the noise that passes through is subtracted, as libspeexdsp filters it);
self-triggered turns over minutes of avatar speech with no visitor, with and without the
guard; barge-in detection and latency over double-talk scenes; the recognizer's word error
rate on the visitor's question with and without cancellation.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from kiosk.asr import Recognizer
from kiosk.audio import jack
from kiosk.audio.echo import (
    SpeexCanceller,
    cancel,
    erle_db,
    play_and_record,
    speex_canceller,
)
from kiosk.audio.echo_filter import notch_signal
from kiosk.audio.echo_path import EchoPath, PathKey, learnt_path
from kiosk.audio.format import CHUNK_MS, CHUNK_SAMPLES, RATE_HZ, AudioChunk, Samples, chunks
from kiosk.audio.guard import EchoGuard, GuardParams
from kiosk.audio.hearing import Hearing
from kiosk.audio.stream import DuplexChunk
from kiosk.audio.vad import Segmenter, SileroVad, Utterance
from kiosk.bench import percentiles
from kiosk.bench.room import Path, mix, other_voice, paths, rms
from kiosk.bench.voice import word_errors
from kiosk.config import DEMO_DIR, DEMO_SITE, Config
from kiosk.errors import KioskError
from kiosk.eval import load_dialogues
from kiosk.retrieval.site import load_site
from kiosk.text import sentences
from kiosk.tts import spoken
from kiosk.tts.piper import PiperSynthesizer
from kiosk.wiring import recognizer_for, synthesizer, voice_activity

log = logging.getLogger(__name__)

VISITOR_UNDER_ECHO_DB = 6.0
ERLE_SCENE_S = 60.0
CONVERGED_S = 30.0  # ERLE "after convergence": the last seconds of the scene
CURVE_S = 10  # the convergence curve: ERLE per window of this length


@dataclass
class Material:
    replies: list[tuple[str, Samples]]  # (text, avatar's voice)
    questions: list[tuple[str, Samples]]  # (text, the visitor's voice)


def _material(tts: PiperSynthesizer, reply_s: float, questions: int) -> Material:
    pages, _ = load_site(DEMO_SITE / "en")
    said: list[str] = [s for p in pages for sec in p.sections for s in sentences(sec.text)
                       if 40 <= len(s) <= 220]
    replies: list[tuple[str, Samples]] = []
    total = 0.0
    for i in range(0, len(said), 3):
        text = " ".join(said[i:i + 3])
        audio = spoken(tts, text)
        replies.append((text, audio))
        total += len(audio) / RATE_HZ
        if total >= reply_s:
            break
    asked = [t.user for d in load_dialogues(DEMO_DIR / "dialogues" / "en.jsonl")
             for t in d.turns if t.act is None and len(t.user.split()) >= 4][:questions]
    voiced = [(q, other_voice(spoken(tts, q))) for q in asked]
    return Material(replies, voiced)


def _long_reply(material: Material, seconds: float, start: int = 0) -> Samples:
    """Whole replies one after another until `seconds` (the avatar never cuts its own reply
    in the middle of a word; a cut would put a click into the echo that no room makes)."""
    parts: list[Samples] = []
    i = start
    while sum(len(p) for p in parts) < seconds * RATE_HZ:
        parts.append(material.replies[i % len(material.replies)][1])
        i += 1
    return np.concatenate(parts)


def _noise_for(path: Path, n: int, echo_rms: float) -> np.ndarray:
    visitor_rms = echo_rms / 10 ** (VISITOR_UNDER_ECHO_DB / 20)
    return path.noise(n, visitor_rms)


@dataclass(frozen=True)
class Erle:
    converged_db: float
    first_second_db: float
    curve_db: list[float]  # per CURVE_S window from the start
    first_half_second_db: float = 0.0


def erle_of(echo: np.ndarray, residual: np.ndarray, converged_s: float = CONVERGED_S) -> Erle:
    n = min(len(echo), len(residual))
    tail = max(0, n - int(converged_s * RATE_HZ))
    window = CURVE_S * RATE_HZ
    curve = [erle_db(echo[i:i + window], residual[i:i + window])
             for i in range(0, n - window + 1, window)]
    return Erle(erle_db(echo[tail:n], residual[tail:n]),
                erle_db(echo[:RATE_HZ], residual[:RATE_HZ]), curve,
                erle_db(echo[:RATE_HZ // 2], residual[:RATE_HZ // 2]))


@dataclass(frozen=True)
class Cancellers:
    """Fresh cancellers, configured as the appliance's (echo.filter_length_ms,
    echo.loudspeaker)."""

    filter_ms: int
    loudspeaker: str  # "auto": the loudspeaker's saturation is learned; "linear"

    def make(self, *, suppress: bool = True) -> SpeexCanceller:
        return speex_canceller(self.filter_ms, 0, self.loudspeaker, suppress=suppress)


def erle_on_path(path: Path, far: Samples, cancellers: Cancellers,
                 saved: EchoPath | None = None, converged_s: float = CONVERGED_S
                 ) -> tuple[Erle, SpeexCanceller]:
    """ERLE of the canceller's filters (without the residual-echo suppressor) on one room,
    measured on the echo alone, and the canceller as the room left it. `saved`: a warm
    start, from that echo path."""
    echo = path.echo(far)
    noise = _noise_for(path, len(far), rms(echo))
    canceller = cancellers.make(suppress=False)
    if saved is not None:
        canceller.restore(saved)
    out = cancel(canceller, mix(echo, noise), far)
    n = len(out)
    residual = out.astype(np.float64) - notch_signal(noise[:n])
    return erle_of(notch_signal(echo[:n]), residual, converged_s), canceller


BENCH_KEY = PathKey("bench", RATE_HZ, CHUNK_SAMPLES, 0, 0)
WARM_S = 10.0  # a warm start: this much of other replies, after the path was saved
MOVED_S = 20.0  # a moved loudspeaker: this much of the avatar alone, a wrong path restored


def saved_path(canceller: SpeexCanceller) -> EchoPath | None:
    """What the appliance would have saved from this canceller."""
    return learnt_path(canceller, BENCH_KEY, 0.0)


def moved(material: Material, path: Path, wrong: EchoPath, vad: SileroVad, asr: Recognizer,
          cancellers: Cancellers) -> dict[str, Any]:
    """A path saved in another room (the loudspeaker was moved) is restored; the avatar talks,
    nobody else does. When is the path dropped, and does anything trigger meanwhile?"""
    replies = _long_reply(material, MOVED_S, start=5)
    far = np.concatenate([replies, np.zeros(RATE_HZ, dtype=np.int16)])
    echo = path.echo(far)
    mic = mix(echo, _noise_for(path, len(far), rms(echo)))
    hearing = _hearing(vad, cancellers, guarded=True)
    hearing.reset()
    canceller = hearing.canceller
    assert isinstance(canceller, SpeexCanceller)
    canceller.restore(wrong)
    first = int(np.argmax(np.abs(far) > 0))
    dropped_s = None
    stops = triggers = 0
    text = " ".join(t for t, _ in material.replies)
    for offset, item in _heard_chunks(mic, far):
        heard = hearing.hear(item, speaking=offset < len(replies))
        stops += heard.bargein
        if dropped_s is None and canceller.restarts:
            dropped_s = (offset + CHUNK_SAMPLES - first) / RATE_HZ
        for event in heard.events:
            if not isinstance(event, Utterance) or hearing.is_echo():
                continue
            transcript = _recognize(asr, event.samples)
            if transcript and not hearing.guard.is_repeat(transcript, text):
                triggers += 1
    return {"dropped_after_s": None if dropped_s is None else round(dropped_s, 2),
            "self_triggers": triggers, "false_bargeins": stops}


def cpu_percent(canceller: SpeexCanceller, mic: Samples, far: Samples) -> float:
    """Processor time of a canceller, in percent of one core of this machine."""
    started = time.process_time()
    cancel(canceller, mic, far)
    return 100.0 * (time.process_time() - started) / (len(far) / RATE_HZ)


def _hearing(vad: SileroVad, cancellers: Cancellers, guarded: bool) -> Hearing:
    params = GuardParams(enabled=guarded)
    return Hearing(cancellers.make(), vad, EchoGuard(params), Segmenter())


def _recognize(asr: Recognizer, audio: Samples) -> str:
    asr.start()
    for chunk in chunks(audio):
        asr.accept(chunk.samples)
    return asr.finish().strip()


def _heard_chunks(mic: Samples, far: Samples, start_ms: int = 0
                  ) -> Iterator[tuple[int, DuplexChunk]]:
    """(offset, chunk) as the duplex stream pairs them: the microphone with the playback."""
    for offset in range(0, len(far) - CHUNK_SAMPLES + 1, CHUNK_SAMPLES):
        yield offset, DuplexChunk(
            AudioChunk(mic[offset:offset + CHUNK_SAMPLES],
                       start_ms + offset * 1000 // RATE_HZ), far[offset:offset + CHUNK_SAMPLES])


def self_triggers(material: Material, room: list[Path], vad: SileroVad,
                  asr: Recognizer, cancellers: Cancellers, guarded: bool,
                  minutes: float) -> dict[str, float]:
    """The avatar talks, nobody else does: every turn the loop would start is a self-trigger.
    The replies (repeated as needed for `minutes`) are shared out over the rooms; each room
    starts with a fresh canceller (a new installation), so its convergence is part of it."""
    replies = material.replies
    total_s = sum(len(a) for _, a in replies) / RATE_HZ
    replies = replies * max(1, int(np.ceil(minutes * 60 / max(total_s, 1e-9))))
    share = max(1, -(-len(replies) // len(room)))  # every reply, in blocks per room
    speech_ms = triggers = utterances = gated = dropped = weak = stops = 0
    heard_words: list[str] = []
    for r, path in enumerate(room):
        hearing = _hearing(vad, cancellers, guarded)
        hearing.reset()
        at_ms = 0
        for text, reply in replies[r * share:(r + 1) * share]:
            gap = np.zeros(RATE_HZ, dtype=np.int16)  # a second between replies
            far = np.concatenate([reply, gap])
            echo = path.echo(far)
            mic = mix(echo, _noise_for(path, len(far), rms(echo)))
            speech_ms += len(reply) * 1000 // RATE_HZ
            for offset, item in _heard_chunks(mic, far, at_ms):
                heard = hearing.hear(item, speaking=offset < len(reply))
                stops += heard.bargein  # the avatar would have stopped itself
                for event in heard.events:
                    if not isinstance(event, Utterance):
                        continue
                    utterances += 1
                    if guarded and hearing.is_echo():
                        continue
                    transcript = _recognize(asr, event.samples)
                    if not transcript:
                        continue
                    if guarded and hearing.guard.is_repeat(transcript, text):
                        continue
                    triggers += 1
                    heard_words.append(transcript)
            at_ms += len(far) // CHUNK_SAMPLES * CHUNK_MS
        gated += hearing.guard.gated_chunks
        dropped += hearing.guard.dropped_transcripts
        weak += hearing.guard.weak_utterances
    if heard_words:
        log.info("echo bench: self-triggers (guard %s): %s", guarded, heard_words)
    return {"per_10min": round(triggers * 600_000 / max(speech_ms, 1), 2),
            "utterances": utterances, "turns": triggers,
            "avatar_minutes": round(speech_ms / 60_000, 1), "gated_chunks": gated,
            "weak_utterances": weak, "dropped_transcripts": dropped,
            "false_bargeins_per_10min": round(stops * 600_000 / max(speech_ms, 1), 2)}


def double_talk(material: Material, room: list[Path], vad: SileroVad,
                asr: Recognizer, cancellers: Cancellers, scenes: int, seed: int = 11
                ) -> dict[str, Any]:
    """The visitor talks over the avatar: when is it noticed, and what is understood."""
    rng = np.random.default_rng(seed)
    latencies: list[float] = []
    outcomes: list[str] = []  # per scene, for the detail: "12 ms", "missed", "false alarm"
    detected = within = false_alarms = warming_stops = 0
    errors_aec = errors_raw = words = 0
    for k in range(scenes):
        path = room[k % len(room)]
        question, voice = material.questions[k % len(material.questions)]
        # the avatar alone for as long as the canceller takes to converge (it has, in a kiosk
        # that has been talking all day; a fresh start is what self_triggers measures), then
        # the visitor speaks up 1.5-4 s into the next 10 s
        earlier = _long_reply(material, CONVERGED_S, start=k + 7)
        far = np.concatenate([earlier, _long_reply(material, 10.0, start=k)])
        start = len(earlier) + int(rng.uniform(1.5, 4.0) * RATE_HZ)
        onset = start + int(np.argmax(np.abs(voice.astype(np.int32)) > 800))
        echo = path.echo(far)
        visitor_gain = rms(echo) / 10 ** (VISITOR_UNDER_ECHO_DB / 20) / max(rms(voice), 1e-9)
        near = np.zeros(len(far))
        end = min(len(far), start + len(voice))
        near[start:end] = voice[: end - start] * visitor_gain
        mic = mix(echo, near, _noise_for(path, len(far), rms(echo)))
        # recognition with the avatar talking on (the worst case), with and without cancelling
        cleaned = cancel(cancellers.make(), mic, far)
        lo, hi = max(0, start - RATE_HZ // 4), min(len(cleaned), end + RATE_HZ // 2)
        e, n = word_errors(question, _recognize(asr, cleaned[lo:hi]))
        errors_aec += e
        words += n
        errors_raw += word_errors(question, _recognize(asr, mic[lo:hi]))[0]
        # detection: chunk by chunk, as the loop hears it while the avatar talks on
        hearing = _hearing(vad, cancellers, guarded=True)
        hearing.reset()
        outcomes.append(("nonlinear " if path.nonlinear else "linear ") + "missed")
        for offset, item in _heard_chunks(mic, far):
            if not hearing.hear(item, speaking=True).bargein:
                continue
            noticed = offset + CHUNK_SAMPLES
            if noticed <= len(earlier):
                warming_stops += 1  # not the scene yet; a fresh start is self_triggers' part
                continue
            if noticed <= onset:
                false_alarms += 1  # the avatar's own echo taken for a visitor: it stopped
                outcomes[-1] = outcomes[-1].replace(
                    "missed", f"false alarm at {noticed / RATE_HZ:.2f} s (visitor at "
                              f"{onset / RATE_HZ:.2f} s)")
                break
            latency_ms = (noticed - onset) * 1000 / RATE_HZ
            latencies.append(latency_ms)
            outcomes[-1] = outcomes[-1].replace("missed", f"{latency_ms:.0f} ms")
            detected += 1
            within += latency_ms <= 300
            break
    latency = percentiles(latencies)
    return {
        "detect_rate": round(detected / max(scenes, 1), 3),
        "within_300ms_rate": round(within / max(scenes, 1), 3),
        "latency_ms_p95": latency["p95"],
        "latency_ms_p50": latency["p50"],
        "false_alarms": false_alarms,
        "stops_while_converging": warming_stops,
        "scenes": scenes,
        "per_scene": outcomes,
        "wer_with_aec": round(errors_aec / max(words, 1), 3),
        "wer_without_aec": round(errors_raw / max(words, 1), 3),
    }


def through_jack(far: Samples, cancellers: Cancellers) -> Erle | None:
    """ERLE of the canceller on a real duplex stream: JACK's dummy device, playback connected
    back into capture. None when JACK is not installed."""
    if shutil.which("jackd") is None:
        return None
    try:
        started = jack.start_dummy()
    except KioskError as exc:
        log.warning("echo bench: no JACK run (%s)", exc.describe())
        return None
    from kiosk.audio.devices import portaudio, rescan
    from kiosk.audio.duplex import DuplexStream

    rescan()  # see the JACK server that may have just started
    stream = DuplexStream("system", "system")
    try:
        stream.start()
        jack.loop_back_own()
        time.sleep(0.2)
        mic_all, ref_all = play_and_record(stream, far)
    finally:
        stream.stop()
        portaudio()._terminate()  # let go of JACK before the server goes
        jack.stop(started)
    out = cancel(cancellers.make(suppress=False), mic_all, ref_all)
    return erle_of(mic_all[:len(out)], out)


def run(cfg: Config, *, paths_per_kind: int = 6, avatar_minutes: float = 10.0,
        scenes: int = 40, jack: bool = True, seed: int = 1,
        jack_seconds: float = ERLE_SCENE_S) -> dict[str, Any]:
    """`jack_seconds`: how long the JACK device run plays (in real time; CI's short run)."""
    cancellers = Cancellers(cfg.echo.filter_length_ms, cfg.echo.loudspeaker)
    # piper without its sampling noise: the same code prints the same figures every run
    # (with it, barge-in within 300 ms moved by 5-10 points from run to run)
    tts = synthesizer(cfg, "en", deterministic=True)
    vad = voice_activity(cfg)
    asr = recognizer_for(cfg, "en")
    material = _material(tts, avatar_minutes * 60, max(scenes, 1))
    linear = paths(paths_per_kind, nonlinear=False, seed=seed)
    nonlinear = paths(paths_per_kind, nonlinear=True, seed=seed + 1)
    far = _long_reply(material, ERLE_SCENE_S)
    warm_far = _long_reply(material, WARM_S, start=9)
    per_path: dict[str, list[dict[str, Any]]] = {"linear": [], "nonlinear": []}
    saved: dict[str, list[EchoPath | None]] = {"linear": [], "nonlinear": []}
    for kind, room in (("linear", linear), ("nonlinear", nonlinear)):
        for path in room:
            got, canceller = erle_on_path(path, far, cancellers)
            learned = canceller.loudspeaker
            # the appliance restarts: the path it saved seeds the canceller, and other
            # replies play
            keep = saved_path(canceller)
            saved[kind].append(keep)
            warm = (erle_on_path(path, warm_far, cancellers, keep, WARM_S / 2)[0]
                    if keep is not None else None)
            per_path[kind].append({"delay_ms": round(path.delay_ms), "reverb_ms":
                                   round(path.reverb_ms), "snr_db": round(path.snr_db, 1),
                                   "erle_db": round(got.converged_db, 1),
                                   "first_second_db": round(got.first_second_db, 1),
                                   "first_half_second_db": round(got.first_half_second_db, 1),
                                   "saved_erle_db": None if keep is None else
                                   round(keep.erle_db, 1),
                                   "warm": None if warm is None else {
                                       "first_half_second_db": round(
                                           warm.first_half_second_db, 1),
                                       "first_second_db": round(warm.first_second_db, 1),
                                       "last_5s_db": round(warm.converged_db, 1)},
                                   "curve_db": [round(v, 1) for v in got.curve_db],
                                   "loudspeaker_learned": "" if learned is None else
                                   str(learned.current),
                                   "averaged_filter_used": round(
                                       canceller.averaged_frames / max(canceller.frames, 1),
                                       2)})
    # the whole canceller (filter, suppressor, loudspeaker model) on a soft-clipping room
    echo = nonlinear[0].echo(far)
    heard = mix(echo, _noise_for(nonlinear[0], len(far), rms(echo)))
    cpu = {"canceller": round(cpu_percent(cancellers.make(), heard, far), 2),
           "without_loudspeaker_model": round(cpu_percent(
               Cancellers(cancellers.filter_ms, "linear").make(), heard, far), 2)}
    mixed_room = [p for pair in zip(linear, nonlinear, strict=True) for p in pair]
    # each room given the path saved in the next room of its kind (a moved loudspeaker)
    moves = []
    for kind, room in (("linear", linear), ("nonlinear", nonlinear)):
        for i, path in enumerate(room):
            wrong = saved[kind][(i + 1) % len(room)] if len(room) > 1 else None
            if wrong is None and len(room) == 1:
                # one room of a kind: the other kind's path
                other = saved["nonlinear" if kind == "linear" else "linear"]
                wrong = other[0] if other else None
            if wrong is not None:
                moves.append(moved(material, path, wrong, vad, asr, cancellers))
    guarded = self_triggers(material, mixed_room, vad, asr, cancellers, True, avatar_minutes)
    unguarded = self_triggers(material, mixed_room, vad, asr, cancellers, False, avatar_minutes)
    talk = double_talk(material, mixed_room, vad, asr, cancellers, scenes, seed=seed + 10)
    jack_far = far if jack_seconds >= ERLE_SCENE_S else _long_reply(material, jack_seconds)
    jack_erle = through_jack(jack_far, cancellers) if jack else None

    def mean(kind: str, key: str) -> float:
        return round(float(np.mean([p[key] for p in per_path[kind]])), 1)

    def first(key: str) -> dict[str, float | None]:
        rooms = [p for kind in per_path.values() for p in kind]
        cold = [p[key] for p in rooms]
        warm = [p["warm"][key] for p in rooms if p["warm"] is not None]
        return {"cold": min(cold) if cold else None,
                "warm": min(warm) if len(warm) == len(rooms) and warm else None}

    drops = [m["dropped_after_s"] for m in moves]

    def curve(kind: str) -> list[float]:
        return [round(float(v), 1) for v in np.mean([p["curve_db"] for p in per_path[kind]],
                                                    axis=0)]

    return {
        "erle_db": {"linear": mean("linear", "erle_db"),
                    "nonlinear": mean("nonlinear", "erle_db"),
                    "first_second": mean("linear", "first_second_db"),
                    "jack": None if jack_erle is None else round(jack_erle.converged_db, 1)},
        "first_second_erle_db": first("first_second_db"),
        "first_half_second_erle_db": first("first_half_second_db"),
        "moved_loudspeaker": {
            "rooms": len(moves), "dropped": sum(d is not None for d in drops),
            "dropped_after_s_max": max((d for d in drops if d is not None), default=None),
            "self_triggers": sum(m["self_triggers"] for m in moves),
            "false_bargeins": sum(m["false_bargeins"] for m in moves)},
        "self_triggers_per_10min": guarded["per_10min"],
        "bargein": {"detect_rate": talk["within_300ms_rate"],
                    "latency_ms_p50": talk["latency_ms_p50"],
                    "latency_ms_p95": talk["latency_ms_p95"]},
        "wer": {"with_aec": talk["wer_with_aec"], "without_aec": talk["wer_without_aec"]},
        "detail": {"paths": per_path,
                   "convergence_db": {"window_s": CURVE_S, "linear": curve("linear"),
                                      "nonlinear": curve("nonlinear"),
                                      "jack": None if jack_erle is None else
                                      [round(v, 1) for v in jack_erle.curve_db]},
                   "self_triggers": guarded,
                   "self_triggers_without_guard": unguarded, "double_talk": talk,
                   "cpu_percent_of_a_core": cpu,
                   "filter_length_ms": cancellers.filter_ms,
                   "loudspeaker": cancellers.loudspeaker, "seed": seed},
    }
