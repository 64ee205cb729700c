"""A character trigram model of the venue's own text, to choose among a recognizer's hypotheses.

Whisper base's beam holds the right Japanese words more often than its first hypothesis does
(プラネタリウムの料金はいくら second after 両筋, 中央駅からの行き方 second after 駅方): it hears the
sounds and weighs the kanji without knowing the venue. The site says what visitors talk
about; a small model of how its text runs, added to the recognizer's own score, moves the
venue's words to the front. Pure and small: counts of the site's characters, pairs and triples
(~4 MB for 70,000 characters), interpolated, no smoothing library.
"""

from __future__ import annotations

import collections
import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# Marks and spaces carry no sound: hypotheses that differ only in them are one to the model.
_SILENT = re.compile(r"[\s\u3000、。,.!?！？「」『』()（）・:：;；\"']")
# Interpolation of the trigram, bigram and unigram estimates, and the unigram's add-k over
# a vocabulary padded for characters the site never wrote.
TRI, BI, UNI = 0.5, 0.3, 0.2
ADD_K = 0.1
UNSEEN_CHARS = 1000


def _plain(text: str) -> str:
    return _SILENT.sub("", unicodedata.normalize("NFKC", text))


@dataclass(frozen=True)
class Hypothesis:
    text: str
    score: float  # the recognizer's own: mean log-probability per token


class CharTrigrams:
    def __init__(self, texts: Iterable[str]) -> None:
        uni: collections.Counter[str] = collections.Counter()
        bi: collections.Counter[str] = collections.Counter()
        tri: collections.Counter[str] = collections.Counter()
        for text in texts:
            line = "^" + _plain(text) + "$"  # a sentence's start and end are contexts too
            if len(line) < 3:
                continue
            uni.update(line)
            bi.update(line[i:i + 2] for i in range(len(line) - 1))
            tri.update(line[i:i + 3] for i in range(len(line) - 2))
        self._uni = dict(uni)
        self._bi = dict(bi)
        self._tri = dict(tri)
        self._total = sum(uni.values())
        self._vocab = len(uni) + UNSEEN_CHARS

    def __len__(self) -> int:
        """Characters read."""
        return self._total

    def log_prob(self, text: str) -> float:
        """Mean log-probability per character of `text` (punctuation and spaces left out)."""
        line = "^" + _plain(text)
        if len(line) < 2 or not self._total:
            return 0.0
        total = 0.0
        for i in range(1, len(line)):
            ch = line[i]
            p_uni = (self._uni.get(ch, 0) + ADD_K) / (self._total + ADD_K * self._vocab)
            before = self._uni.get(line[i - 1], 0)
            p_bi = self._bi.get(line[i - 1:i + 1], 0) / before if before else 0.0
            p_tri = 0.0
            if i >= 2:
                pair = self._bi.get(line[i - 2:i], 0)
                p_tri = self._tri.get(line[i - 2:i + 1], 0) / pair if pair else 0.0
            total += math.log(TRI * p_tri + BI * p_bi + UNI * p_uni)
        return total / (len(line) - 1)

    def choose(self, hypotheses: Sequence[Hypothesis], weight: float,
               endings: tuple[str, ...] = (), ending_bonus: float = 0.0) -> int:
        """The position of the hypothesis whose own score plus `weight` x this model's
        log-probability is highest (the first on a tie); one that ends as one of `endings`
        gains `ending_bonus`."""
        ends = tuple(_plain(e) for e in endings)
        best, best_score = 0, -math.inf
        for i, hyp in enumerate(hypotheses):
            score = hyp.score + weight * self.log_prob(hyp.text)
            if ends and _plain(hyp.text).endswith(ends):
                score += ending_bonus
            if score > best_score:
                best, best_score = i, score
        return best
