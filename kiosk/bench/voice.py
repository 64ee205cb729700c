"""`kiosk bench voice`: the voice turn on recorded English utterances, stage by stage.

The utterances are the English demo dialogues' questions, spoken by the project's own voice
(piper) and recognized by pocketsphinx. For each: end of speech (last voiced chunk) -> the
end-of-speech decision (audio time), -> final transcript, -> the brain's answer, -> the first
reply sample (processing time); word error rate; the synthesizer's real-time factor; peak RSS.
"""

from __future__ import annotations

import asyncio
import re
import resource
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from kiosk.app import TurnRecord, VoiceLoop
from kiosk.asr.pocketsphinx import PocketsphinxRecognizer
from kiosk.audio.format import RATE_HZ, Samples
from kiosk.audio.recorded import RecordedStream
from kiosk.bench import percentiles
from kiosk.config import DEMO_DIR, Config
from kiosk.eval import load_dialogues
from kiosk.tts import spoken
from kiosk.wiring import load_brain, synthesizer, voice_activity


def _words(text: str) -> list[str]:
    return re.sub(r"[^a-z0-9' ]", " ", text.lower()).split()


def word_errors(reference: str, hypothesis: str) -> tuple[int, int]:
    """(edit distance in words, reference length)."""
    ref, hyp = _words(reference), _words(hypothesis)
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
    return row[len(hyp)], len(ref)


def run(cfg: Config, utterances: int = 24) -> dict[str, Any]:
    tts = synthesizer(cfg, "en")
    brain = load_brain(cfg)
    vad = voice_activity(cfg)
    questions = [t.user for d in load_dialogues(DEMO_DIR / "dialogues" / "en.jsonl")
                 for t in d.turns if t.act is None][:utterances]
    synth_s = audio_s = 0.0
    asked: list[Samples] = []
    for question in questions:
        start = time.perf_counter()
        asked.append(spoken(tts, question))
        synth_s += time.perf_counter() - start
        audio_s += len(asked[-1]) / RATE_HZ
    # One loop, as on the device, hears every question. Each comes after a pause longer than
    # the loop's new-visitor pause, so each is a fresh visitor's first question.
    loop = VoiceLoop(RecordedStream(_recording(asked), keep_speaker=False), brain, vad,
                     PocketsphinxRecognizer(), {"en": tts, "ja": tts})
    heard: dict[int, list[TurnRecord]] = {}
    spans = _spans(asked)
    loop.on_turn = lambda turn: heard.setdefault(_which(spans, turn.speech_start_ms),
                                                 []).append(turn)
    try:
        asyncio.run(loop.run(asyncio.Event()))
    finally:
        loop.close()
    eos_first: list[float] = []
    final_first: list[float] = []
    decision: list[float] = []
    errors = words = 0
    for i, question in enumerate(questions):
        turns = heard.get(i, [])
        e, n = word_errors(question, " ".join(t.utterance for t in turns))
        errors += e
        words += n
        if not turns:
            continue
        turn = turns[0]
        decision.append(turn.eos_decision_ms)
        final_first.append(turn.brain_ms + turn.first_audio_ms)
        eos_first.append(turn.eos_decision_ms + turn.asr_ms + turn.brain_ms
                         + turn.first_audio_ms)
    return {
        "eos_to_first_audio_ms": percentiles(eos_first),
        "final_to_first_audio_ms": percentiles(final_first),
        "eos_decision_ms": percentiles(decision),
        "wer": round(errors / max(words, 1), 3),
        "tts_rtf": round(synth_s / max(audio_s, 1e-9), 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1),
        "utterances": len(questions),
        "turns": sum(len(t) for t in heard.values()),
    }


LEAD_S = 1
GAP_S = 50  # the reply plays, then a pause longer than VoiceLoop.new_visitor_after_ms


def _recording(asked: list[Samples]) -> Iterator[Samples]:
    quiet = np.zeros(RATE_HZ, dtype=np.int16)
    for speech in asked:
        yield from [quiet] * LEAD_S
        yield speech
        yield from [quiet] * GAP_S


def _spans(asked: list[Samples]) -> list[tuple[int, int]]:
    """Where each question lies in the recording, in ms."""
    spans = []
    at_ms = 0
    for speech in asked:
        at_ms += LEAD_S * 1000
        length_ms = len(speech) * 1000 // RATE_HZ
        spans.append((at_ms, at_ms + length_ms))
        at_ms += length_ms + GAP_S * 1000
    return spans


def _which(spans: list[tuple[int, int]], start_ms: int) -> int:
    """The question an utterance starting at start_ms belongs to (pre-roll included)."""
    for i, (begin, end) in enumerate(spans):
        if begin - 1000 <= start_ms <= end:
            return i
    return -1
