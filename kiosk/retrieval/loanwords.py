"""Katakana loanwords found in the site's Latin spelling: パイソン -> python, クラウドフレア ->
cloudflare, ミスキー -> misskey.

A Japanese recognizer writes a product name as it sounds (katakana); the venue's pages write it
in Latin letters, so neither the 2-grams nor the words meet. Both spellings are reduced to a
consonant skeleton (vowels dropped, sounds Japanese cannot tell apart merged: l/r, v/b, th/s,
ph/f) and a katakana word the site never writes in katakana is searched by the site's Latin
words of the same skeleton. Pure: no engine, no I/O.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

# Only skeletons of three consonants or more are matched: two (ノード / node, need) collide
# too often in a real site's vocabulary.
MIN_CONSONANTS = 3
MIN_KATAKANA = 3

_ROWS = (  # kana of a row, and their romaji
    ("アイウエオ", "a i u e o"), ("カキクケコ", "ka ki ku ke ko"),
    ("サシスセソ", "sa shi su se so"), ("タチツテト", "ta chi tsu te to"),
    ("ナニヌネノ", "na ni nu ne no"), ("ハヒフヘホ", "ha hi fu he ho"),
    ("マミムメモ", "ma mi mu me mo"), ("ヤユヨ", "ya yu yo"), ("ラリルレロ", "ra ri ru re ro"),
    ("ワヲン", "wa o n"), ("ガギグゲゴ", "ga gi gu ge go"), ("ザジズゼゾ", "za ji zu ze zo"),
    ("ダヂヅデド", "da ji zu de do"), ("バビブベボ", "ba bi bu be bo"),
    ("パピプペポ", "pa pi pu pe po"), ("ヴ", "vu"), ("ァィゥェォ", "a i u e o"),
    ("ャュョヮ", "ya yu yo wa"),
)
_ROMAJI = {k: r for kana, romaji in _ROWS for k, r in zip(kana, romaji.split(), strict=True)}
_SMALL_Y = frozenset("ャュョ")
_SMALL_VOWEL = frozenset("ァィゥェォヮ")
_SILENT = frozenset("ッー・")  # gemination and long vowels leave no consonant of their own
_VOWELS = frozenset("aeiouy")
KATAKANA_WORD = re.compile(f"[ァ-ヴー]{{{MIN_KATAKANA},}}")
_LATIN_WORD = re.compile(r"[a-z]+")


def vowel_of(kana: str) -> str | None:
    """The vowel a katakana letter ends in (プ: u, ャ: a); None for ン, ッ, ー and the rest."""
    sound = _ROMAJI.get(kana, "")
    return sound[-1] if sound[-1:] in ("a", "i", "u", "e", "o") else None


def romanize(katakana: str) -> str | None:
    """Hepburn-like romaji of a katakana word; None when it holds anything else."""
    out: list[str] = []
    for ch in katakana:
        if ch in _SILENT:
            continue
        sound = _ROMAJI.get(ch)
        if sound is None:
            return None
        if out and ch in _SMALL_Y and len(out[-1]) >= 2:
            prev = out[-1][:-1]  # キャ: kya; シュ: shu, チョ: cho, ジャ: ja
            out[-1] = prev + (sound[1:] if prev.endswith(("sh", "ch", "j")) else sound)
        elif out and ch in _SMALL_VOWEL:
            prev = out[-1]
            # ティ: ti, フォ: fo, ウィ: wi (ウ before a small vowel is a w)
            stem = "w" if prev == "u" else prev[:-1] if prev[-1] in "aiueo" else prev
            out[-1] = stem + sound
        else:
            out.append(sound)
    return "".join(out)


def _skeleton(sounds: str) -> str:
    """Consonants in order, repeats merged; a leading vowel is kept as a mark ("_")."""
    out: list[str] = ["_"] if sounds[:1] in _VOWELS else []
    for ch in sounds:
        if ch in _VOWELS or ch in "hw" or (out and out[-1] == ch):
            continue
        out.append(ch)
    return "".join(out)


def katakana_key(word: str) -> str | None:
    sounds = romanize(word)
    if not sounds:
        return None
    for old, new in (("tsu", "t"), ("shi", "s"), ("chi", "c"), ("sh", "s"), ("ch", "c"),
                     ("fu", "f"), ("z", "s"), ("v", "b")):
        sounds = sounds.replace(old, new)
    return _skeleton(sounds)


def latin_key(word: str) -> str | None:
    """The skeleton of an English-like spelling, as a Japanese ear would write it."""
    if not _LATIN_WORD.fullmatch(word):
        return None
    w = word.replace("ph", "f").replace("th", "s").replace("sh", "s").replace("ch", "c")
    w = w.replace("ck", "k").replace("gh", "")
    w = re.sub(r"c(?=[eiy])", "s", w)
    w = w.replace("c", "k").replace("q", "k").replace("x", "ks").replace("v", "b")
    w = w.replace("l", "r").replace("z", "s")
    w = re.sub(r"r(?![aeiouy])", "", w)  # server -> サーバー: an r after a vowel is length
    w = re.sub(r"(?<=.)e$", "", w)  # a silent final e (node, cache)
    return _skeleton(w) if w else None


def _consonants(key: str) -> int:
    return len(key.lstrip("_"))


class Loanwords:
    """The site's Latin words by skeleton."""

    def __init__(self, latin_words: Iterable[str]) -> None:
        by_key: dict[str, set[str]] = defaultdict(set)
        for word in latin_words:
            key = latin_key(word)
            if key is not None and _consonants(key) >= MIN_CONSONANTS:
                by_key[key].add(word)
        self._by_key = {k: tuple(sorted(v)) for k, v in by_key.items()}

    def __len__(self) -> int:
        return len(self._by_key)

    def spellings(self, katakana: str) -> tuple[str, ...]:
        """The site's Latin words that sound like this katakana word (often none)."""
        key = katakana_key(katakana)
        if key is None or _consonants(key) < MIN_CONSONANTS:
            return ()
        return self._by_key.get(key, ())
