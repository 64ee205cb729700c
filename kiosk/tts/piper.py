"""English speech with piper-tts (GPL-3.0-or-later) and a voice from the model manifest."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from kiosk.audio.format import resample
from kiosk.dialogue.lexicon import load_lexicon
from kiosk.errors import ModelError
from kiosk.models import ModelEntry, model_path
from kiosk.text import word_boundaries_before
from kiosk.tts import Speech, pieces_to_say, trimmed

# piper's working memory grows with what it says at once (~1 MB a character of a sentence:
# 313 MB for 200 characters, 182 for 80), and its arena keeps the largest: longer sentences
# are said in parts of at most this many characters.
MAX_PIECE_CHARS = 80
# One piece of about the longest length, said at load: the arena is grown once, here.
WARM_UP_TEXT = "The museum is open every day from nine in the morning until five at night."


class PiperSynthesizer:
    lang = "en"

    def __init__(self, model: Path, config: Path, *, length_scale: float = 1.0,
                 volume: float = 1.0, deterministic: bool = False) -> None:
        """`deterministic`: without VITS's sampling noise, the same audio every time (the
        bundled recordings and tests that must hear the same words each run)."""
        from piper import PiperVoice, SynthesisConfig

        if not config.is_file():
            raise ModelError(f"piper voice config {config} is missing",
                             "reinstall the voice: kiosk models install piper-joe-en --force")
        # Every sentence has its own length. onnxruntime's memory patterns are kept per input
        # shape, so they piled up sentence after sentence (+120 MB in an hour of soak): off.
        # Its arena stays (30 ms faster to the first sample than plain allocations) and is
        # grown once, here, by a piece of the longest length said (MAX_PIECE_CHARS), so
        # visitors' replies do not grow it further.
        # The session is made here, once: PiperVoice.load would make one of its own first
        # (replacing it left ~90 MB of heap behind).
        import onnxruntime as ort
        from piper.config import PiperConfig

        options = ort.SessionOptions()
        options.enable_mem_pattern = False
        # no busy-waiting threads: Whisper, the turn model and this run side by side on two
        # cores, and spinning ones took the cores from each other
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._voice = PiperVoice(
            config=PiperConfig.from_dict(json.loads(config.read_text(encoding="utf-8"))),
            session=ort.InferenceSession(str(model), options,
                                         providers=["CPUExecutionProvider"]))
        self._config = SynthesisConfig(length_scale=length_scale, volume=volume)
        if deterministic:
            self._config.noise_scale = self._config.noise_w_scale = 0.0
        for _ in self.synthesize(WARM_UP_TEXT):
            pass

    @classmethod
    def from_manifest(cls, entry: ModelEntry, models_dir: Path, volume: float = 1.0,
                      deterministic: bool = False) -> PiperSynthesizer:
        path = model_path(entry, models_dir)
        return cls(path, path.with_name(path.name + ".json"), volume=volume,
                   deterministic=deterministic)

    def synthesize(self, text: str, *, lead: bool = False) -> Iterator[Speech]:
        # sentence by sentence ourselves: each piece then carries its own text (the caption
        # shown while it plays), which piper's chunks do not
        openers = load_lexicon("en").phrase_openers
        for sentence, trail_ms in pieces_to_say(
                text, lead, "en", lambda piece: word_boundaries_before(piece, openers),
                MAX_PIECE_CHARS):
            for chunk in self._voice.synthesize(sentence, syn_config=self._config):
                samples = np.frombuffer(chunk.audio_int16_bytes, dtype=np.int16)
                audio = resample(samples, chunk.sample_rate)
                yield Speech(sentence, trimmed(audio, trail_ms=trail_ms) if lead else audio)
