"""`kiosk bench voice`: the voice turn on recorded English utterances, stage by stage.

The utterances are the English demo dialogues' questions, spoken by the project's own voice
(piper) and recognized by pocketsphinx. For each: end of speech (last voiced chunk) -> the
end-of-speech decision (audio time), -> final transcript, -> the brain's answer, -> the first
reply sample (processing time); word error rate; the synthesizer's real-time factor; peak RSS.
"""

from __future__ import annotations

import re
import resource
import time
from typing import Any

import numpy as np

from kiosk.app import run_recording
from kiosk.asr.pocketsphinx import PocketsphinxRecognizer
from kiosk.audio.format import RATE_HZ
from kiosk.audio.vad import SileroVad
from kiosk.bench import percentiles
from kiosk.config import DEMO_DIR, Config
from kiosk.eval import load_dialogues
from kiosk.models import load_manifest, model_path
from kiosk.tts.piper import PiperSynthesizer
from kiosk.wiring import load_brain


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
    manifest = load_manifest()
    models_dir = cfg.paths.models_path()
    tts = PiperSynthesizer.from_manifest(manifest["piper-joe-en"], models_dir)
    brain = load_brain(cfg)
    vad = SileroVad(model_path(manifest["silero-vad"], models_dir))
    asr = PocketsphinxRecognizer()
    questions = [t.user for d in load_dialogues(DEMO_DIR / "dialogues" / "en.jsonl")
                 for t in d.turns if t.act is None][:utterances]
    eos_first: list[float] = []
    final_first: list[float] = []
    decision: list[float] = []
    errors = words = 0
    synth_s = audio_s = 0.0
    pause = np.zeros(RATE_HZ, dtype=np.int16)
    for question in questions:
        start = time.perf_counter()
        spoken = np.concatenate([s.samples for s in tts.synthesize(question)])
        synth_s += time.perf_counter() - start
        audio_s += len(spoken) / RATE_HZ
        # one utterance per recording: each question is a fresh visitor
        _, turns = run_recording(np.concatenate([pause, spoken, pause]), brain, vad, asr,
                                 {"en": tts, "ja": tts})
        if not turns:
            errors += len(_words(question))
            words += len(_words(question))
            continue
        turn = turns[0]
        e, n = word_errors(question, turn.utterance)
        errors += e
        words += n
        eos = turn.eos_decision_ms
        decision.append(eos)
        final_first.append(turn.brain_ms + turn.first_audio_ms)
        eos_first.append(eos + turn.asr_ms + turn.brain_ms + turn.first_audio_ms)
    return {
        "eos_to_first_audio_ms": percentiles(eos_first),
        "final_to_first_audio_ms": percentiles(final_first),
        "eos_decision_ms": percentiles(decision),
        "wer": round(errors / max(words, 1), 3),
        "tts_rtf": round(synth_s / max(audio_s, 1e-9), 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1),
        "utterances": len(questions),
    }
