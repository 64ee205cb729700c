"""English recognition that works out of the box: pocketsphinx with its bundled US model."""

from __future__ import annotations

from typing import Any

from kiosk.audio.format import RATE_HZ, Samples


class PocketsphinxRecognizer:
    lang = "en"

    def __init__(self) -> None:
        from pocketsphinx import Decoder

        self._decoder: Any = Decoder(samprate=RATE_HZ)
        self._open = False

    def start(self) -> None:
        if self._open:
            self._decoder.end_utt()
        self._decoder.start_utt()
        self._open = True

    def accept(self, samples: Samples) -> str:
        if not self._open:
            self.start()
        self._decoder.process_raw(samples.tobytes(), False, False)
        hyp = self._decoder.hyp()
        return hyp.hypstr if hyp is not None else ""

    def finish(self) -> str:
        if not self._open:
            return ""
        self._decoder.end_utt()
        self._open = False
        hyp = self._decoder.hyp()
        return hyp.hypstr if hyp is not None else ""
