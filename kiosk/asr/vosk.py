"""Recognition with vosk (Kaldi), the device engine: streaming partials and finals.

No vosk model comes from a registry for Japanese or English, so the installer gives a model
folder or zip by path (`asr.vosk_model_ja` / `asr.vosk_model_en`); a zip is unpacked once
into the state folder. `vosk.Model(lang=...)` would try the network: never used.
"""

from __future__ import annotations

import json
import logging
import zipfile
from pathlib import Path
from typing import Any

from kiosk.audio.format import RATE_HZ, Samples
from kiosk.errors import ModelError
from kiosk.models import default_state_dir

log = logging.getLogger(__name__)


def model_folder(path: Path, setting: str) -> Path:
    """The model folder for a configured folder or zip, or a ModelError naming the setting."""
    if not path.exists():
        raise ModelError(f"vosk model {path} not found ({setting})",
                         f"copy a model folder or zip there, or set {setting} PATH")
    if path.is_dir():
        return path
    if not zipfile.is_zipfile(path):
        raise ModelError(f"vosk model {path} is neither a folder nor a zip ({setting})",
                         "give the folder or the .zip of a vosk model")
    target = default_state_dir() / "vosk" / path.stem
    if not target.is_dir():
        log.info("unpacking %s into %s", path, target)
        tmp = target.with_name(target.name + ".partial")
        with zipfile.ZipFile(path) as zf:
            zf.extractall(tmp)
        inner = [p for p in tmp.iterdir() if p.is_dir()]
        (inner[0] if len(inner) == 1 and not any(tmp.glob("*.conf")) else tmp).rename(target)
    return target


class VoskRecognizer:
    def __init__(self, path: Path, lang: str, setting: str = "asr.vosk_model") -> None:
        import vosk

        vosk.SetLogLevel(-1)
        folder = model_folder(path, setting)
        try:
            self._model: Any = vosk.Model(str(folder))
        except Exception as exc:  # vosk raises a bare Exception on a bad folder
            raise ModelError(f"vosk could not load the model in {folder} ({exc})",
                             f"check {setting}: it must point at a vosk model") from exc
        self._vosk = vosk
        self.lang = lang
        self._rec: Any = None
        self._done: list[str] = []

    def start(self) -> None:
        self._rec = self._vosk.KaldiRecognizer(self._model, RATE_HZ)
        self._done = []

    def accept(self, samples: Samples) -> str:
        if self._rec is None:
            self.start()
        if self._rec.AcceptWaveform(samples.tobytes()):
            text = json.loads(self._rec.Result()).get("text", "")
            if text:
                self._done.append(text)
            partial = ""
        else:
            partial = json.loads(self._rec.PartialResult()).get("partial", "")
        return " ".join([*self._done, partial]).strip()

    def finish(self) -> str:
        if self._rec is None:
            return ""
        text = json.loads(self._rec.FinalResult()).get("text", "")
        self._rec = None
        return " ".join([*self._done, text]).strip()
