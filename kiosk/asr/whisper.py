"""Recognition with Whisper (CTranslate2 weights from the models manifest): English with
tiny.en, Japanese with base.

Whisper does not stream: it hears the utterance whole. Two things keep that off the visitor's
wait. The encoder runs on the utterance's own length (rounded up to whole seconds, at least
`min_window_s`) instead of Whisper's fixed 30 s: most of the cost scales with the window
(tiny.en 0.56 -> 0.11 s, base 1.03 -> 0.45 s a question here; under 8 s of window Whisper
starts to say sentences twice).
And the loop may `speculate` at a short pause: the utterance so far is transcribed in the
background, and if the visitor has said nothing more when the turn ends (`withdraw` was not
called), `finish` returns that transcript without a second pass.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from kiosk.asr.charlm import Hypothesis
from kiosk.audio.format import RATE_HZ, Samples
from kiosk.audio.logmel import HOP, log_mel
from kiosk.cpus import threads as cpu_threads
from kiosk.errors import ModelError

log = logging.getLogger(__name__)

MAX_FRAMES = 3000  # Whisper's 30 s
PROMPT_TOKENS = 120  # of venue vocabulary at most (Whisper allows 223 before the transcript)


class WhisperModel:
    """One Whisper model folder: the engine, its tokenizer and the decoder's prompt."""

    def __init__(self, folder: Path, *, beam_size: int = 5, threads: int = 2,
                 min_window_s: float = 8.0, prompt: str = "") -> None:
        import ctranslate2
        import tokenizers

        try:
            self._model: Any = ctranslate2.models.Whisper(
                str(folder), device="cpu", compute_type="int8",
                intra_threads=cpu_threads(threads))
            tokenizer = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
        except Exception as exc:  # ctranslate2 and tokenizers raise their own RuntimeErrors
            raise ModelError(f"Whisper model in {folder} could not be loaded ({exc})",
                             f"reinstall it: kiosk models install {folder.name} --force") from exc
        self.folder = folder
        self.multilingual = bool(self._model.is_multilingual)
        self._tokenizer = tokenizer
        self._eot = self._id("<|endoftext|>")
        self._prompt: list[int] = []
        if prompt:
            words = tokenizer.encode(" " + prompt.strip(), add_special_tokens=False).ids
            self._prompt = [self._id("<|startofprev|>"), *words[-PROMPT_TOKENS:]]
        self._beam_size = beam_size
        self._min_frames = int(min_window_s * RATE_HZ) // HOP

    def _id(self, token: str) -> int:
        found = self._tokenizer.token_to_id(token)
        if found is None:
            raise ModelError(f"Whisper model in {self.folder} has no token {token}",
                             "install a Whisper model from models/manifest.toml")
        return int(found)

    def _prefix(self, lang: str) -> list[int]:
        ids = self._id
        prefix = [ids("<|startoftranscript|>")]
        if self.multilingual:
            prefix += [ids(f"<|{lang}|>"), ids("<|transcribe|>")]
        return [*self._prompt, *prefix, ids("<|notimestamps|>")]

    def window_frames(self, samples: int) -> int:
        """The encoder's input length: the audio and half a second more, in whole seconds."""
        second = RATE_HZ // HOP
        frames = math.ceil((samples + RATE_HZ // 2) / HOP / second) * second
        return min(MAX_FRAMES, max(self._min_frames, frames))

    def features(self, audio: np.ndarray) -> Any:
        import ctranslate2

        mel = log_mel(audio[:MAX_FRAMES * HOP], self.window_frames(len(audio)))
        return ctranslate2.StorageView.from_array(mel[None])

    def encode(self, features: Any) -> Any:
        return self._model.encode(features)

    def language(self, encoded: Any, among: tuple[str, ...]) -> str:
        """The likeliest of `among` (Whisper scores all its languages; the kiosk speaks two)."""
        scores = {code.strip("<|>"): p for code, p in self._model.detect_language(encoded)[0]}
        return max(among, key=lambda lang: scores.get(lang, 0.0))

    def transcribe(self, features: Any, lang: str, seconds: float) -> str:
        """Features (or their encoding) of `seconds` of audio -> text in `lang`."""
        return self.hypotheses(features, lang, seconds)[0].text

    def hypotheses(self, features: Any, lang: str, seconds: float,
                   count: int = 1) -> list[Hypothesis]:
        """The beam's `count` best transcripts (at most the beam's width), best first, with
        Whisper's score (mean log-probability per token); one empty one for silence."""
        count = max(1, min(count, self._beam_size))
        result = self._model.generate(
            features, [self._prefix(lang)], beam_size=self._beam_size,
            # a runaway decoder (a sentence said again and again) is cut near the audio's
            # length: speech carries at most a few tokens a second, Japanese the most
            max_length=min(448 - len(self._prompt), len(self._prompt) + 16 + int(12 * seconds)),
            suppress_blank=True, num_hypotheses=count, return_scores=True)
        found = [
            Hypothesis(collapse_repeats(str(self._tokenizer.decode(
                [t for t in ids if t < self._eot])).strip()), float(score))
            for ids, score in zip(result[0].sequences_ids, result[0].scores, strict=False)]
        return found or [Hypothesis("", 0.0)]


_SENTENCE_END = re.compile(r"(?<=[.?!。？！])\s*")


def collapse_repeats(text: str) -> str:
    """"When does it open? When does it open?" -> one: Whisper on a short window sometimes
    says a sentence again, whole or begun ("Where can I park my car? Where can I park");
    nobody asks the same question twice in one breath."""
    kept: list[str] = []
    for sentence in (s.strip() for s in _SENTENCE_END.split(text)):
        if sentence and not (kept and kept[-1].startswith(sentence.rstrip(".?!。？！"))):
            kept.append(sentence)
    joiner = "" if any("\u3040" <= ch <= "\u9fff" for ch in text) else " "
    return joiner.join(kept)


class Speller(Protocol):
    @property
    def hypotheses(self) -> int:
        """How many of the beam's hypotheses `choose` wants (1: the first is taken)."""

    def choose(self, hypotheses: Sequence[Hypothesis]) -> int: ...

    def correct(self, text: str) -> str: ...


def _made(spelling: Callable[[], Speller]) -> Speller | None:
    """The speller, or None when the site cannot be read (transcripts stay as heard)."""
    try:
        return spelling()
    except Exception as exc:  # a broken site must not stop the kiosk hearing
        log.warning("asr: no venue spelling (%s); Japanese transcripts are kept as Whisper "
                    "writes them", exc)
        return None


class WhisperRecognizer:
    """Whisper behind the Recognizer interface, for one language or for `auto`: with models
    for English and Japanese and a multilingual one to tell them apart, each utterance's
    language is detected on the multilingual model's encoding, which then serves its own
    transcript when it is that model's language (one encoder pass, not two).

    `spelling` makes the Japanese speller (the venue's spellings, `kiosk.asr.spelling`); it
    is built by the recognizer's own worker, before the first utterance it hears, so reading
    the site does not hold up the start."""

    def __init__(self, models: dict[str, WhisperModel], *, detector: WhisperModel | None = None,
                 spelling: Callable[[], Speller] | None = None) -> None:
        if len(models) > 1 and (detector is None or not detector.multilingual):
            raise ModelError("more than one language but no multilingual Whisper to tell them "
                             "apart", "fix brain.language, or install whisper-base")
        self.models = models
        self._detector = detector
        self.lang = next(iter(models))
        # the language the visitor asked the avatar to speak ("English please"): heard in it
        # without asking the detector, until the next visitor (kiosk.app)
        self.preferred: str | None = None
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="whisper")
        self._chunks: list[Samples] = []
        self._speculation: Future[tuple[str, str]] | None = None
        self.detect_ms = 0.0  # the language decision's cost on the last utterance
        self._speller: Future[Speller | None] | None = (
            self._worker.submit(_made, spelling) if spelling is not None and "ja" in models
            else None)

    # ------------------------------------------------------------ Recognizer

    def prefer(self, lang: str | None) -> None:
        """Hear utterances in this language (None: tell each one's language again)."""
        self.preferred = lang

    def start(self) -> None:
        self._chunks = []
        self._speculation = None

    def accept(self, samples: Samples) -> str:
        self._chunks.append(samples)
        return ""  # no partials: Whisper hears the utterance whole

    def finish(self) -> str:
        speculation, self._speculation = self._speculation, None
        audio = self._audio()
        self._chunks = []
        if speculation is None and not len(audio):
            return ""
        text, self.lang = (speculation or self._worker.submit(self.recognize, audio)).result()
        return text

    # ------------------------------------------------------------ speculation

    def speculate(self) -> None:
        """A short pause: transcribe what was said so far, in the background."""
        audio = self._audio()
        if len(audio):
            self._speculation = self._worker.submit(self.recognize, audio)

    def withdraw(self) -> None:
        """The visitor spoke again: the speculative transcript is out of date (not begun yet:
        it is not begun at all, so the next one does not wait behind it)."""
        if self._speculation is not None:
            self._speculation.cancel()
        self._speculation = None

    def speculation(self) -> str:
        return self._speculation.result()[0] if self._speculation is not None else ""

    # ------------------------------------------------------------ engine

    def _audio(self) -> np.ndarray:
        if not self._chunks:
            return np.zeros(0, dtype=np.float32)
        return np.concatenate(self._chunks).astype(np.float32) / 32768.0

    def recognize(self, audio: np.ndarray) -> tuple[str, str]:
        """(transcript, language) of float audio at 16 kHz (at most 30 s are heard)."""
        hypotheses, lang = self._recognize(audio)
        speller = self._venue(lang)
        if speller is None:
            return hypotheses[0].text, lang
        return speller.correct(hypotheses[speller.choose(hypotheses)].text), lang

    def _venue(self, lang: str) -> Speller | None:
        # Made first by this same worker, so done by the time an utterance is heard.
        return self._speller.result() if lang == "ja" and self._speller else None

    def _recognize(self, audio: np.ndarray) -> tuple[list[Hypothesis], str]:
        seconds = len(audio) / RATE_HZ

        def count(lang: str) -> int:
            speller = self._venue(lang)
            return speller.hypotheses if speller is not None else 1

        if len(self.models) == 1 or self._detector is None or self.preferred in self.models:
            lang = self.preferred if self.preferred in self.models else next(iter(self.models))
            model = self.models[lang]
            return model.hypotheses(model.features(audio), lang, seconds, count(lang)), lang
        start = time.perf_counter()
        encoded = self._detector.encode(self._detector.features(audio))
        lang = self._detector.language(encoded, tuple(self.models))
        self.detect_ms = (time.perf_counter() - start) * 1000.0
        model = self.models[lang]
        features = encoded if model is self._detector else model.features(audio)
        return model.hypotheses(features, lang, seconds, count(lang)), lang
