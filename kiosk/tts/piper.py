"""English speech with piper-tts (GPL-3.0-or-later) and a voice from the model manifest."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from kiosk.audio.format import resample
from kiosk.errors import ModelError
from kiosk.models import ModelEntry, model_path
from kiosk.tts import Speech


class PiperSynthesizer:
    lang = "en"

    def __init__(self, model: Path, config: Path, *, length_scale: float = 1.0,
                 volume: float = 1.0) -> None:
        from piper import PiperVoice, SynthesisConfig

        if not config.is_file():
            raise ModelError(f"piper voice config {config} is missing",
                             "reinstall the voice: kiosk models install piper-joe-en --force")
        self._voice = PiperVoice.load(str(model), config_path=str(config))
        self._config = SynthesisConfig(length_scale=length_scale, volume=volume)

    @classmethod
    def from_manifest(cls, entry: ModelEntry, models_dir: Path,
                      volume: float = 1.0) -> PiperSynthesizer:
        path = model_path(entry, models_dir)
        return cls(path, path.with_name(path.name + ".json"), volume=volume)

    def synthesize(self, text: str) -> Iterator[Speech]:
        for chunk in self._voice.synthesize(text, syn_config=self._config):
            samples = np.frombuffer(chunk.audio_int16_bytes, dtype=np.int16)
            yield Speech(getattr(chunk, "text", "") or text,
                         resample(samples, chunk.sample_rate))
