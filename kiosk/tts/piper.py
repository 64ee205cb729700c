"""English speech with piper-tts (GPL-3.0-or-later) and a voice from the model manifest."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from kiosk.audio.format import resample
from kiosk.cpus import available as available_cpus
from kiosk.dialogue.lexicon import load_lexicon
from kiosk.errors import ModelError
from kiosk.models import ModelEntry, model_path, use_shared_arena
from kiosk.text import split_long, word_boundaries_before
from kiosk.tts import Speech, in_parts, pieces_to_say, trimmed
from kiosk.tts.spoken_en import said_in_english

# piper's working memory grows with what it says at once, in phonemes (a 200-character
# sentence: 313 MB for the voice, 80 characters: 182 MB), and its arena keeps the largest.
# Longer sentences are said in parts: at most this many characters, and this many phonemes
# (a phone number is few characters and many phonemes: "1-877-222-VETS (1-877-222-8387)"
# is 195, and grew the arena by 99 MB).
MAX_PIECE_CHARS = 80
MAX_PIECE_PHONEMES = 120
# One piece of nearly the most phonemes a piece has, said at load: the arena grows here.
WARM_UP_TEXT = "Adults pay 1200 yen and students and seniors over 65 pay 800 yen."  # 116 phonemes


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
        # Its arena stays (30 ms faster to the first sample than plain allocations; without
        # it the peak is higher) and is grown here by a piece of nearly the most phonemes a
        # piece has; replies grow it ~45 MB more over the first hours (README, the soak).
        # The session is made here, once: PiperVoice.load would make one of its own first
        # (replacing it left ~90 MB of heap behind).
        import onnxruntime as ort
        from piper.config import PiperConfig

        options = ort.SessionOptions()
        options.enable_mem_pattern = False
        # onnxruntime's own default counts the machine's cores, not the process's
        options.intra_op_num_threads = available_cpus()
        # no busy-waiting threads: Whisper, the turn model and this run side by side on two
        # cores, and spinning ones took the cores from each other
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        use_shared_arena(options)  # the turn model works in the arena grown here
        self._voice = PiperVoice(
            config=PiperConfig.from_dict(json.loads(config.read_text(encoding="utf-8"))),
            session=ort.InferenceSession(str(model), options,
                                         providers=["CPUExecutionProvider"]))
        self._config = SynthesisConfig(length_scale=length_scale, volume=volume)
        self._say_as = load_lexicon("en").say_as
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

        def boundaries(piece: str) -> list[int]:
            return word_boundaries_before(piece, openers)

        for piece, piece_trail_ms in pieces_to_say(text, lead, "en", boundaries,
                                                   MAX_PIECE_CHARS):
            for sentence, trail_ms in self._within_phonemes(piece, piece_trail_ms, boundaries):
                yield from self._said(sentence, trail_ms, lead)

    def phonemes(self, text: str) -> int:
        """How many phonemes piper makes of the text (what its working memory grows with)."""
        return len(self.phonemes_of(text).replace(" | ", ""))

    def phonemes_of(self, text: str, *, as_written: bool = False) -> str:
        """The phonemes (IPA) piper says for the text, as the voice says it
        (`said_in_english`; `as_written`: piper's own reading); sentences apart by " | "."""
        said = text if as_written else said_in_english(text, self._say_as)
        return " | ".join("".join(p) for p in self._voice.phonemize(said))

    def _within_phonemes(self, piece: str, trail_ms: int | None,
                         boundaries: Callable[[str], list[int]]
                         ) -> list[tuple[str, int | None]]:
        """The piece, or its halves (cut where speech pauses, as `split_long` cuts) until
        each has at most MAX_PIECE_PHONEMES; a part that cannot be cut stays whole."""
        if self.phonemes(piece) <= MAX_PIECE_PHONEMES:
            return [(piece, trail_ms)]
        parts = split_long(piece, max(len(piece) // 2, 8), boundaries(piece))
        if len(parts) < 2:
            return [(piece, trail_ms)]
        out: list[tuple[str, int | None]] = []
        for part, part_trail_ms in in_parts(parts, trail_ms):
            out += self._within_phonemes(part, part_trail_ms, boundaries)
        return out

    def _said(self, sentence: str, trail_ms: int | None, lead: bool) -> Iterator[Speech]:
        said = said_in_english(sentence, self._say_as)  # (the piece keeps the page's text)
        for chunk in self._voice.synthesize(said, syn_config=self._config):
            samples = np.frombuffer(chunk.audio_int16_bytes, dtype=np.int16)
            audio = resample(samples, chunk.sample_rate)
            yield Speech(sentence, trimmed(audio, trail_ms=trail_ms) if lead else audio)
