"""Has the visitor finished? Smart Turn v3.2 (an ONNX model, run by onnxruntime) hears the
last 8 s of the utterance and gives the probability that the turn is complete: "the parking..."
is not, "where is the parking?" is. The features are Whisper's log-mel of the waveform
normalized to zero mean and unit variance, padded with silence in front to 8 s."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import numpy as np

from kiosk.audio.format import RATE_HZ, Samples
from kiosk.audio.logmel import log_mel
from kiosk.models import cpu_session

WINDOW_S = 8


class TurnModel(Protocol):
    def complete(self, samples: Samples) -> float:
        """Probability that the speech so far is a finished turn."""
        ...


def turn_features(samples: Samples) -> np.ndarray:
    """[1, 80, 800] model input of 16 kHz int16 speech (its last 8 s)."""
    audio = samples.astype(np.float32)[-WINDOW_S * RATE_HZ:] / 32768.0
    audio = np.pad(audio, (WINDOW_S * RATE_HZ - len(audio), 0))
    audio = (audio - audio.mean()) / np.sqrt(audio.var() + 1e-7)
    return log_mel(audio)[None]


class SmartTurn:
    def __init__(self, model: Path, *, threads: int = 1) -> None:
        # without the planned block: 12 MB less resident after a run, no slower (80-100 ms)
        self._session = cpu_session(model, "end-of-turn model", "smart-turn", threads=threads,
                                    mem_pattern=False)

    def complete(self, samples: Samples) -> float:
        out = self._session.run(None, {"input_features": turn_features(samples)})
        return float(np.asarray(out[0]).reshape(-1)[0])


def pause_verdict(probability: float, transcript: str) -> float:
    """The probability that the pause ends the turn: the model's (`probability`), unless the
    words so far (the recognizer's transcript at the pause, when it has one) settle it.
    Stopping where nobody ends a question ("what time does ...", a Japanese last word after
    which a noun must follow: ほかにはどんな, さっきの) waits whatever the melody, and so does an
    English transcript with no sentence end (Whisper marks finished ones); a Japanese
    sentence-final form ("...ありますか") is finished whatever the melody (the model hears
    Open JTalk's flat endings as unfinished), and a Japanese last word that ends a question
    only when said as one (月の石は, 中央駅から) waits unless the recognizer marked it so (the
    model hears the first words of a flat sentence as finished). Japanese is analysed by
    Open JTalk: run it off the event loop."""
    from kiosk.dialogue.lexicon import load_lexicon
    from kiosk.text import detect_lang

    if transcript:
        lexicon = load_lexicon(detect_lang(transcript))
        words = _analysed(transcript) if lexicon.lang == "ja" else []
        classes = _classes(words)
        tails = ["".join(str(w["string"]) for w in words[-k:]) for k in (1, 2, 3)
                 if k <= len(words)] if words else None
        if (lexicon.sounds_unfinished(transcript, tails) or lexicon.unmarked(transcript)
                or set(classes) & set(lexicon.unfinished_classes)
                or lexicon.left_open(transcript, classes)):
            return 0.0
        if lexicon.sounds_finished(transcript):
            return 1.0
    return probability


def last_word_classes(transcript: str, lang: str) -> tuple[str, ...]:
    """The part of speech of the transcript's last word, alone, with its subclass and with its
    conjugated form ("助詞", "助詞 連体化", "形容詞 連用テ接続"), by Open JTalk's analysis;
    none for other languages than Japanese."""
    return _classes(_analysed(transcript)) if lang == "ja" else ()


def _analysed(transcript: str) -> list[dict[str, object]]:
    """Open JTalk's words of a Japanese transcript (its trailing marks left out)."""
    from kiosk.dialogue.lexicon import TRAILING_PUNCT
    from kiosk.text import japanese_words

    text = TRAILING_PUNCT.sub("", transcript)
    return japanese_words(text) if text else []


def _classes(words: list[dict[str, object]]) -> tuple[str, ...]:
    if not words:
        return ()
    last = words[-1]
    pos = str(last["pos"])
    return (pos, f"{pos} {last['pos_group1']}", f"{pos} {last['cform']}")
